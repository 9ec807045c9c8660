"""Running the gates together over one change set, as the review gate does."""

from __future__ import annotations

import sys
from typing import Any

from pm_agent.gates import (
    INTEGRITY_CHECKS,
    MINIMUM_GATES,
    GateId,
    all_passed,
    failed_gates,
    make_context,
    run_gates,
    run_integrity_checks,
    run_minimum_gates,
)
from pm_agent.plan.models import EnvironmentContract, ExpectedFiles, Task
from pm_agent.vcs import record_session_baseline

SUB = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    # TODO(task-2): handle overflow\n    return a - b\n"
SUB_TEST = "from calc import sub\n\n\ndef test_sub():\n    assert sub(3, 2) == 1\n"


def _task(test_cmd: str) -> Task:
    return Task(
        id="1",
        title="Add sub()",
        acceptance_criteria=["sub(a, b) returns a - b"],
        expected_files=ExpectedFiles(modify=["calc.py"], test=["tests/test_sub.py"]),
        tests_to_add=["tests/test_sub.py"],
        environment=EnvironmentContract(
            test_command=test_cmd, lint_command=f"{sys.executable} -c 'import calc'", typecheck_command="true"
        ),
    )


PAYLOAD = {
    "signal": "complete",
    "stepId": "1",
    "summary": "Added sub()",
    "testsClaimedPassing": True,
    "filesModified": ["calc.py"],
    "filesCreated": ["tests/test_sub.py"],
    "criteriaMapping": [{"criterion": "sub(a, b) returns a - b", "location": "calc.py:7"}],
    "reviewNote": {"summary": "Adds sub()", "risks": [], "rollback": "Revert the commit"},
}


def test_accepted_task_passes_every_gate(work: Any, test_cmd: str, test_env: dict[str, str]) -> None:
    baseline = record_session_baseline(work.path)
    work.write("calc.py", SUB)
    work.write("tests/test_sub.py", SUB_TEST)
    task = _task(test_cmd)
    results = run_minimum_gates(task, work.path, work.base, PAYLOAD, env=test_env, known_task_ids={"1", "2"})
    assert [r.gate for r in results] == list(MINIMUM_GATES)
    assert all_passed(results), "\n".join(f"{r.gate}: {r.evidence}" for r in results if not r.passed)
    integrity = run_integrity_checks(task, work.path, work.base, baseline=baseline)
    assert [r.gate for r in integrity] == list(INTEGRITY_CHECKS)
    assert all_passed(integrity), "\n".join(f"{r.gate}: {r.evidence}" for r in integrity if not r.passed)
    for result in [*results, *integrity]:
        result.model_dump_json()  # storable as JSON


def test_a_sloppy_task_fails_the_right_gates(work: Any, mini_cmd: str) -> None:
    baseline = record_session_baseline(work.path)
    work.write("calc.py", "def add(a, b):\n    return a - b  # FIXME\n")
    work.write("tests/test_calc.py", "import pytest\n\n\n@pytest.mark.skip\ndef test_add():\n    pass\n")
    work.write("notes.txt", 'token = "AKIAIOSFODNN7EXAMPLE"\n')
    task = _task(mini_cmd)
    payload = {"testsClaimedPassing": True, "criteriaMapping": [{"criterion": "1", "location": "calc.py:40"}]}
    results = run_minimum_gates(task, work.path, work.base, payload)
    assert failed_gates(results) == [
        GateId.PLAN_ALIGNMENT,
        GateId.TESTS_ADDED,
        GateId.NO_ORPHAN_TODOS,
        GateId.REVIEW_NOTE,
    ]  # the skipped test makes the suite "pass": tests-weakened catches that below
    integrity = run_integrity_checks(task, work.path, work.base, baseline=baseline)
    assert failed_gates(integrity) == [GateId.SCOPE, GateId.TESTS_WEAKENED, GateId.SECRETS]


def test_change_set_is_taken_before_commands_run(work: Any) -> None:
    """A command that writes files (caches, reports) does not change what the diff gates see."""
    task = Task(id="1", title="t", environment=EnvironmentContract(lint_command="echo '# TODO junk' > lint.log"))
    ctx = make_context(task, work.path, work.base, None)
    results = run_gates(ctx, [GateId.LINT_TYPECHECK, GateId.NO_ORPHAN_TODOS])
    assert (work.path / "lint.log").exists()
    assert all_passed(results)
    assert ctx.changes is not None
    assert ctx.changes.names() == []


def test_a_gate_that_cannot_run_fails_alone(work: Any) -> None:
    task = Task(id="1", title="t", acceptance_criteria=["x"])
    results = run_gates(make_context(task, work.path, "0" * 40, PAYLOAD), ["1-plan-alignment", "6-review-note"])
    alignment, note = results
    assert not alignment.passed
    assert alignment.evidence.startswith("gate could not run: GitCommandError")
    assert note.passed
