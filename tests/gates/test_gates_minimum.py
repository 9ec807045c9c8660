"""The six minimum gates, each passing and failing on crafted repositories."""

from __future__ import annotations

from typing import Any

from pm_agent.gates import (
    GateId,
    gate_lint_typecheck,
    gate_no_orphan_todos,
    gate_plan_alignment,
    gate_review_note,
    gate_tests_added,
    gate_tests_run,
)
from pm_agent.plan.models import EnvironmentContract, Task

CRITERIA = ["add() returns the sum of two numbers", "sub() returns the difference"]
SUB = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"


def _task(**fields: Any) -> Task:
    return Task(id="1", title="Calc", **fields)


# ---------------------------------------------------------------- gate 1: plan alignment


def test_plan_alignment_passes_when_every_criterion_maps_to_a_changed_line(work: Any) -> None:
    work.write("calc.py", SUB)
    report = {
        "criteriaMapping": [
            {"criterion": "add() returns the sum of two numbers", "location": "calc.py:2"},
            {"criterion": "AC2", "location": "./calc.py:5-6"},
        ]
    }
    result = gate_plan_alignment(_task(acceptance_criteria=CRITERIA), work.path, work.base, report)
    assert result.passed, result.evidence
    assert result.gate == GateId.PLAN_ALIGNMENT == "1-plan-alignment"
    assert [m["location"] for m in result.details["mapped"]] == ["calc.py:2", "./calc.py:5-6"]


def test_plan_alignment_fails_on_line_beyond_eof_unmapped_and_unchanged_file(work: Any) -> None:
    work.write("calc.py", SUB)
    report = {
        "criteria_mapping": [
            {"criterion": CRITERIA[0], "location": "calc.py:99"},  # 6 lines only
            {"criterion": "something else entirely", "location": "calc.py:1"},
        ]
    }
    result = gate_plan_alignment(_task(acceptance_criteria=CRITERIA), work.path, work.base, report)
    assert not result.passed
    assert "calc.py:99 is beyond the end of the file (6 lines)" in result.evidence
    assert result.details["unmapped"] == [CRITERIA[1]]
    assert "UNMAPPED: sub() returns the difference" in result.evidence

    unchanged = {"criteriaMapping": [{"criterion": "1", "location": "README.md:1"}]}
    result = gate_plan_alignment(_task(acceptance_criteria=CRITERIA[:1]), work.path, work.base, unchanged)
    assert not result.passed
    assert "README.md is not added or modified by this change" in result.evidence


def test_plan_alignment_without_criteria_or_with_bad_payload(work: Any) -> None:
    assert gate_plan_alignment(_task(), work.path, work.base, None).passed
    result = gate_plan_alignment(_task(acceptance_criteria=CRITERIA), work.path, work.base, {"criteriaMapping": 7})
    assert not result.passed
    assert "payload problem" in result.evidence


# ---------------------------------------------------------------- gate 2: tests added


def test_tests_added_passes_when_new_tests_exist_changed_and_pass(
    work: Any, test_cmd: str, test_env: dict[str, str]
) -> None:
    work.write("calc.py", SUB)
    work.write("tests/test_sub.py", "from calc import sub\n\n\ndef test_sub():\n    assert sub(3, 2) == 1\n")
    task = _task(tests_to_add=["tests/test_sub.py"], environment=EnvironmentContract(test_command=test_cmd))
    result = gate_tests_added(task, work.path, work.base, env=test_env)
    assert result.passed, result.evidence
    [command] = result.details["commands"]
    assert command["cmd"].endswith("-p no:cacheprovider tests/test_sub.py")
    assert command["test_counts"]["passed"] == 1


def test_tests_added_fails_when_missing_unchanged_or_failing(work: Any, mini_cmd: str) -> None:
    env = EnvironmentContract(test_command=mini_cmd)
    missing = _task(tests_to_add=["tests/test_sub.py"], environment=env)
    result = gate_tests_added(missing, work.path, work.base)
    assert not result.passed
    assert "MISSING: tests/test_sub.py" in result.evidence

    unchanged = _task(tests_to_add=["tests/test_calc.py"], environment=env)
    result = gate_tests_added(unchanged, work.path, work.base)
    assert not result.passed
    assert "NOT IN CHANGE: tests/test_calc.py" in result.evidence

    work.write("tests/test_sub.py", "def test_sub():\n    assert 1 == 2\n")
    failing = _task(tests_to_add=["tests/test_sub.py"], environment=env)
    result = gate_tests_added(failing, work.path, work.base)
    assert not result.passed
    assert "FAILED" in result.evidence
    assert "1 failed" in result.evidence

    no_runner = _task(tests_to_add=["tests/test_sub.py"])
    result = gate_tests_added(no_runner, work.path, work.base)
    assert not result.passed
    assert "no test_command" in result.evidence


# ---------------------------------------------------------------- gate 3: tests run


def test_tests_run_passes_and_records_the_claim(work: Any, mini_cmd: str) -> None:
    task = _task(environment=EnvironmentContract(test_command=mini_cmd), tests_to_run=["tests/test_calc.py"])
    result = gate_tests_run(task, work.path, {"testsClaimedPassing": True})
    assert result.passed, result.evidence
    # A runner pm-agent cannot point at files runs its whole suite once, not once more for tests_to_run.
    assert [c["cmd"] for c in result.details["commands"]] == [mini_cmd]
    assert result.details["agent_claimed_pass"] is True
    assert not result.details["claim_mismatch"]


def test_tests_run_fails_when_agent_claims_pass_but_tests_fail(
    work: Any, test_cmd: str, test_env: dict[str, str]
) -> None:
    work.write("calc.py", "def add(a, b):\n    return a - b\n")  # broken
    task = _task(environment=EnvironmentContract(test_command=test_cmd))
    report = {"testsClaimedPassing": True, "testEvidence": ["1 passed in 0.01s"]}
    result = gate_tests_run(task, work.path, report, env=test_env)
    assert not result.passed
    assert result.evidence.startswith("agent claimed pass but tests failed")
    assert result.details["claim_mismatch"] is True
    assert "1 failed" in result.evidence
    assert "assert -1 == 3" in result.evidence
    assert "agent's evidence (not trusted): 1 passed in 0.01s" in result.evidence


def test_tests_run_not_configured_and_cannot_run(work: Any) -> None:
    result = gate_tests_run(_task(), work.path, {"testsClaimedPassing": False})
    assert result.passed
    assert "not configured" in result.evidence
    result = gate_tests_run(_task(tests_to_run=["tests/test_calc.py"]), work.path, None)
    assert not result.passed
    assert "CANNOT RUN" in result.evidence
    shell = _task(tests_to_run=["sh -c 'echo checking; exit 2'"])
    result = gate_tests_run(shell, work.path, None)
    assert not result.passed
    assert "exit 2" in result.evidence
    assert "checking" in result.evidence


# ---------------------------------------------------------------- gate 4: lint + typecheck


def test_lint_typecheck(work: Any) -> None:
    assert gate_lint_typecheck(_task(), work.path).evidence.startswith("not configured")
    ok = EnvironmentContract(lint_command="true", typecheck_command="test -f calc.py")
    assert gate_lint_typecheck(_task(environment=ok), work.path).passed
    bad = EnvironmentContract(lint_command="echo 'calc.py:1:1: E999 bad'; exit 1")
    result = gate_lint_typecheck(_task(environment=bad), work.path)
    assert not result.passed
    assert "E999 bad" in result.evidence
    assert "typecheck: not configured" in result.evidence
    # The contract given to the gate wins over the task's own.
    assert gate_lint_typecheck(_task(environment=bad), work.path, environment=ok).passed


# ---------------------------------------------------------------- gate 5: no orphan TODOs


def test_orphan_todo_fails_with_file_and_line(make_work: Any) -> None:
    work = make_work({"a.py": "# TODO: old one, not ours\nx = 1\n"})
    work.write("a.py", "# TODO: old one, not ours\nx = 1\n# FIXME make faster\ny = 2  # XXX\n")
    work.write(
        "b.py",
        "# TODO(task-3): split this\n# HACK see #123\n# todo lowercase is prose\n# TODO support UTF-8, SHA-256\n",
    )
    result = gate_no_orphan_todos(work.path, work.base)
    assert not result.passed
    assert [(o["path"], o["line"]) for o in result.details["orphans"]] == [("a.py", 3), ("a.py", 4), ("b.py", 4)]
    assert "a.py:3: # FIXME make faster" in result.evidence
    assert result.details["linked"] == ["b.py:1 -> task-3", "b.py:2 -> #123"]


def test_linked_todos_pass_and_unknown_tasks_do_not(make_work: Any) -> None:
    work = make_work({"a.py": "x = 1\n"})
    work.write(
        "a.py",
        "# TODO(task-3) later\n# TODO: task-12\n# FIXME https://github.com/o/r/issues/4\n# XXX see #88\n",
    )
    assert gate_no_orphan_todos(work.path, work.base).passed
    result = gate_no_orphan_todos(work.path, work.base, known_task_ids={"3", "4"})
    assert not result.passed
    assert [o["line"] for o in result.details["orphans"]] == [2]


# ---------------------------------------------------------------- gate 6: review note


def test_review_note() -> None:
    note = {"summary": "Adds sub()", "risks": [], "rollback": "Revert the commit"}
    result = gate_review_note({"reviewNote": note})
    assert result.passed
    assert "rollback: Revert the commit" in result.evidence
    assert not gate_review_note({}).passed
    assert not gate_review_note(None).passed
    no_risks = gate_review_note({"review_note": {"summary": "x", "rollback": "y"}})
    assert not no_risks.passed
    assert "risks missing" in no_risks.evidence
    empty = gate_review_note({"reviewNote": {"summary": " ", "risks": ["r"], "rollback": ""}})
    assert not empty.passed
    assert empty.details["problems"] == [
        "summary is empty: say what changed",
        "rollback is empty: say how to undo the change",
    ]
