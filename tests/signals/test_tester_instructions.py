"""The tester reports the tests it added: its signal instructions never ask for a criteria mapping or a review note
(those are the task's report, the developer's or the fixer's: engine/history.py WORK_ROLES)."""

from __future__ import annotations

import json

import pytest

from pm_agent.signals import parse_signal, signal_instructions

CRITERIA = ["POST /login returns a token", "a wrong password returns 401"]


def complete_example(text: str) -> dict[str, object]:
    line = next(line for line in text.splitlines() if line.startswith('{"signal": "complete"'))
    example: dict[str, object] = json.loads(line)
    return example


def test_the_testers_instructions_ask_for_no_criteria_mapping() -> None:
    text = signal_instructions("tester", "task-7", criteria=CRITERIA)
    assert "criteriaMapping" not in text.replace("No criteriaMapping and no reviewNote", "")
    assert "reviewNote (gate 6)" not in text
    assert "No criteriaMapping and no reviewNote: the developer's report maps the criteria" in text
    assert "testEvidence: the test command and its key output lines" in text
    example = complete_example(text)
    assert "criteriaMapping" not in example
    assert "reviewNote" not in example
    assert example["filesModified"] == ["tests/test_new_module.py"]
    parse_signal(example)
    # Seed 004's alias for the tester reads the same.
    assert signal_instructions("siegemaster", "task-7", criteria=CRITERIA) == text


@pytest.mark.parametrize("role", ["developer", "fixer"])
def test_the_roles_that_write_the_tasks_report_still_map_the_criteria(role: str) -> None:
    text = signal_instructions(role, "task-7", criteria=CRITERIA)
    assert "criteriaMapping (gate 1)" in text
    assert "reviewNote (gate 6)" in text
    example = complete_example(text)
    assert [m["criterion"] for m in example["criteriaMapping"]] == CRITERIA  # type: ignore[attr-defined]
