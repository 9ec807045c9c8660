"""The gate runner hands every option to the gates that read it: mutmut's survivors (make mutation).

Each test runs the same gates twice, with and without one option, and shows the option changes a verdict:
an option dropped on the way (a one-token change in `run_minimum_gates` or `make_context`) fails it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from pm_agent.gates import GateId, run_gates, run_integrity_checks, run_minimum_gates
from pm_agent.gates.runner import make_context
from pm_agent.plan.models import EnvironmentContract, ExpectedFiles, Task
from pm_agent.vcs import ChangeSet, FileChange, record_session_baseline


def _task(**fields: Any) -> Task:
    return Task(id="1", title="Calc", **fields)


def _by_gate(results: list[Any]) -> dict[str, Any]:
    return {r.gate: r for r in results}


def _env_check(variable: str) -> str:
    """A test command that passes only when `variable` is 1 in its environment."""
    return f"{sys.executable} -c \"import os, sys; sys.exit(os.environ.get('{variable}') != '1')\""


def test_minimum_gates_receive_env_and_environment(work: Any) -> None:
    environment = EnvironmentContract(test_command=_env_check("GATE_FLAG"))
    without = _by_gate(run_minimum_gates(_task(), work.path, work.base, None))
    assert "not configured" in without[GateId.TESTS_RUN].evidence
    failing = _by_gate(run_minimum_gates(_task(), work.path, work.base, None, environment=environment))
    assert not failing[GateId.TESTS_RUN].passed
    passing = _by_gate(
        run_minimum_gates(_task(), work.path, work.base, None, environment=environment, env={"GATE_FLAG": "1"})
    )
    assert passing[GateId.TESTS_RUN].passed, passing[GateId.TESTS_RUN].evidence


def test_minimum_gates_receive_the_timeout(work: Any) -> None:
    environment = EnvironmentContract(test_command=f'{sys.executable} -c "import time; time.sleep(3)"')
    results = _by_gate(run_minimum_gates(_task(), work.path, work.base, None, environment=environment, timeout_s=0.5))
    assert not results[GateId.TESTS_RUN].passed
    assert "TIMED OUT" in results[GateId.TESTS_RUN].evidence


def test_minimum_gates_receive_known_task_ids_and_changes(work: Any) -> None:
    work.write("calc.py", "def add(a, b):\n    return a + b  # TODO(task-9): overflow\n")
    plain = _by_gate(run_minimum_gates(_task(), work.path, work.base, None))
    assert plain[GateId.NO_ORPHAN_TODOS].passed
    known = _by_gate(run_minimum_gates(_task(), work.path, work.base, None, known_task_ids={"1", "2"}))
    assert not known[GateId.NO_ORPHAN_TODOS].passed  # task-9 is not in the plan
    nothing = ChangeSet(base=work.base, target="given")
    given = _by_gate(run_minimum_gates(_task(), work.path, work.base, None, known_task_ids={"1"}, changes=nothing))
    assert given[GateId.NO_ORPHAN_TODOS].passed  # the given change set is read, not the worktree


def test_integrity_checks_receive_changes_and_extra_allowed(work: Any) -> None:
    work.write("calc.py", "changed\n")
    work.write("notes/log.md", "x\n")
    task = _task(expected_files=ExpectedFiles(modify=["calc.py"]))
    assert not _by_gate(run_integrity_checks(task, work.path, work.base))[GateId.SCOPE].passed
    allowed = _by_gate(run_integrity_checks(task, work.path, work.base, extra_allowed=["notes/"]))
    assert allowed[GateId.SCOPE].passed
    only_calc = ChangeSet(base=work.base, target="given", files=[FileChange(path="calc.py", status="M")])
    given = _by_gate(run_integrity_checks(task, work.path, work.base, changes=only_calc))
    assert given[GateId.SCOPE].passed


def test_integrity_checks_receive_the_session_baseline(work: Any) -> None:
    baseline = record_session_baseline(work.path)
    work.git.run("commit", "-q", "--allow-empty", "-m", "agent commit")
    work.git.run("reset", "-q", "--soft", work.base)  # HEAD is back where it was; the reflog remembers
    assert _by_gate(run_integrity_checks(_task(), work.path, work.base))[GateId.VCS_TAMPERING].passed
    caught = _by_gate(run_integrity_checks(_task(), work.path, work.base, baseline=baseline))
    assert not caught[GateId.VCS_TAMPERING].passed


def test_a_gate_that_cannot_run_is_a_failure_with_the_error(tmp_path: Path) -> None:
    ctx = make_context(_task(), tmp_path / "no-repo", "HEAD")
    [result] = run_gates(ctx, [GateId.SCOPE.value])
    assert not result.passed
    assert result.gate == GateId.SCOPE
    assert result.evidence.startswith("gate could not run: ")
    assert result.details["error"]
    assert result.details["error"] in result.evidence


def test_make_context_passes_its_options_on(work: Any) -> None:
    ctx = make_context(_task(), str(work.path), work.base, {"testsClaimedPassing": True}, timeout_s=7.0)
    assert ctx.timeout_s == 7.0
    assert ctx.worktree == work.path
    assert ctx.report.tests_claimed_passing is True
