"""Plan alignment: a file the contract says to create that was never created fails gate 1."""

from __future__ import annotations

from pm_agent.gates import GateId, gate_plan_alignment
from pm_agent.plan.models import ExpectedFiles, Task

from .conftest import Work

MAPPING = {"criteriaMapping": [{"criterion": "adds sub", "location": "calc.py:3"}]}
SUB = "def add(a, b):\n    return a + b\ndef sub(a, b):\n    return a - b\n"


def _task(create: list[str], criteria: list[str] | None = None) -> Task:
    return Task(
        id="1",
        title="Sub",
        acceptance_criteria=["adds sub"] if criteria is None else criteria,
        expected_files=ExpectedFiles(create=create, modify=["calc.py"]),
    )


def test_expected_file_never_created_fails_plan_alignment(work: Work) -> None:
    work.write("calc.py", SUB)
    result = gate_plan_alignment(_task(["src/calc/sub.py"]), work.path, work.base, MAPPING)
    assert result.gate == GateId.PLAN_ALIGNMENT
    assert not result.passed
    assert "1/1 acceptance criteria mapped" in result.evidence
    assert "EXPECTED FILE NOT CREATED: src/calc/sub.py (the contract says to create it)" in result.evidence
    assert result.details["missing_files"] == ["src/calc/sub.py"]


def test_created_file_passes(work: Work) -> None:
    work.write("calc.py", SUB)
    work.write("src/calc/sub.py", "x = 1\n")
    result = gate_plan_alignment(_task(["./src/calc/sub.py:1-5"]), work.path, work.base, MAPPING)
    assert result.passed, result.evidence
    assert result.details["missing_files"] == []


def test_without_criteria_the_expected_files_are_still_checked(work: Work) -> None:
    result = gate_plan_alignment(_task([".editorconfig"], criteria=[]), work.path, work.base, {})
    assert not result.passed
    assert result.evidence == (
        "the task lists no acceptance criteria\n"
        "  EXPECTED FILE NOT CREATED: .editorconfig (the contract says to create it)"
    )
    work.write(".editorconfig", "root = true\n")
    assert gate_plan_alignment(_task([".editorconfig"], criteria=[]), work.path, work.base, {}).passed


def test_directory_and_glob_entries_need_something_in_the_change(work: Work) -> None:
    work.write("calc.py", SUB)
    task = _task(["docs/guide/", "examples/*.py"])
    result = gate_plan_alignment(task, work.path, work.base, MAPPING)
    assert result.details["missing_files"] == ["docs/guide/", "examples/*.py"]
    work.write("docs/guide/intro.md", "# intro\n")
    work.write("examples/basic.py", "print(1)\n")
    assert gate_plan_alignment(task, work.path, work.base, MAPPING).passed
