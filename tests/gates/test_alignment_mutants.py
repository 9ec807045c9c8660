"""Plan alignment where a one-token change would go unnoticed: empty texts, line 1, the partial-match threshold.

Written against mutmut's survivors (make mutation).
"""

from __future__ import annotations

from typing import Any

import pytest

from pm_agent.gates import gate_plan_alignment
from pm_agent.gates.alignment import check_location, matches_criterion
from pm_agent.gates.models import CriterionMapping
from pm_agent.plan.models import Task

SUB = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"  # 6 lines
CRITERION = "add() returns the sum of two numbers"


def _task(*criteria: str) -> Task:
    return Task(id="1", title="Calc", acceptance_criteria=list(criteria))


def _mapping(criterion: str, location: str) -> dict[str, str]:
    return {"criterion": criterion, "location": location}


# ---------------------------------------------------------------- which criterion a mapping names


@pytest.mark.parametrize("text", ["---", "???", "  ", "()", "—"])
def test_mapping_text_that_normalises_to_nothing_matches_no_criterion(text: str) -> None:
    assert not matches_criterion(text, 0, CRITERION)
    assert not matches_criterion(text, 0, "!!!")  # not even a criterion that normalises to nothing too


def test_mapping_text_that_normalises_to_nothing_leaves_the_criterion_unmapped(work: Any) -> None:
    work.write("calc.py", SUB)
    report = {"criteriaMapping": [_mapping("...", "calc.py:2")]}
    result = gate_plan_alignment(_task(CRITERION), work.path, work.base, report)
    assert not result.passed
    assert result.details["unmapped"] == [CRITERION]
    assert result.details["unmatched"] == ["calc.py:2"]
    assert "  (mappings matching no criterion: calc.py:2)" in result.evidence


@pytest.mark.parametrize(
    ("text", "index"),
    [("1", 0), ("2", 1), ("AC2", 1), ("ac 2", 1), ("AC-2", 1), ("#2", 1), ("criterion 3", 2), ("Criteria #3", 2)],
)
def test_a_criterion_number_names_that_criterion_only(text: str, index: int) -> None:
    assert matches_criterion(text, index, "anything at all")
    assert not matches_criterion(text, index + 1, "anything at all")
    assert not matches_criterion(text, index - 1, "anything at all")


def test_the_same_text_in_other_case_and_punctuation_matches() -> None:
    assert matches_criterion("ADD returns the SUM of two numbers.", 0, CRITERION)
    assert matches_criterion("sum", 0, "Sum")  # short texts match when equal
    assert not matches_criterion("sum", 0, "Sums")


def test_partial_match_needs_twelve_characters_of_the_criterion() -> None:
    # "sum of two n" is 12 characters after normalising, "sum of two " only 10 ("sum of two")
    assert matches_criterion("sum of two n", 0, CRITERION)
    assert not matches_criterion("of two numb", 0, CRITERION)  # 11 characters
    assert matches_criterion("of two numbe", 0, CRITERION)  # 12


def test_partial_match_the_other_way_needs_a_twelve_character_criterion() -> None:
    # the mapping repeats the criterion and adds to it: the criterion must be distinctive enough
    assert matches_criterion("Criterion: sums two ints (see calc)", 0, "sums two int")  # 12
    assert not matches_criterion("Criterion: sums two ints (see calc)", 0, "sums two in")  # 11
    assert not matches_criterion("a text about something else", 0, CRITERION)


# ---------------------------------------------------------------- where a mapping points


def test_a_mapping_to_line_1_and_to_the_last_line_counts(work: Any) -> None:
    work.write("calc.py", SUB)
    changed = {"calc.py"}
    assert check_location(work.path, CriterionMapping(criterion="1", location="calc.py:1"), changed) is None
    assert check_location(work.path, CriterionMapping(criterion="1", location="calc.py:6"), changed) is None
    assert check_location(work.path, CriterionMapping(criterion="1", location="calc.py:1-6"), changed) is None
    assert (
        check_location(work.path, CriterionMapping(criterion="1", location="calc.py:7"), changed)
        == "calc.py:7 is beyond the end of the file (6 lines)"
    )
    assert (
        check_location(work.path, CriterionMapping(criterion="1", location="calc.py:2-7"), changed)
        == "calc.py:7 is beyond the end of the file (6 lines)"
    )


def test_line_0_is_not_a_line(work: Any) -> None:
    work.write("calc.py", SUB)
    problem = check_location(work.path, CriterionMapping(criterion="1", location="calc.py:0"), {"calc.py"})
    assert problem == "calc.py:0 is beyond the end of the file (6 lines)"


def test_a_location_that_is_not_path_line_and_a_changed_path_that_is_gone(work: Any) -> None:
    assert check_location(work.path, CriterionMapping(criterion="1", location="calc.py"), {"calc.py"}) == (
        "'calc.py' is not 'path:line'"
    )
    gone = CriterionMapping(criterion="1", location="gone.py:1")
    assert check_location(work.path, gone, {"gone.py"}) == "gone.py does not exist in the worktree"


def test_mapping_to_line_1_passes_the_gate(work: Any) -> None:
    work.write("calc.py", SUB)
    report = {"criteriaMapping": [_mapping(CRITERION, "calc.py:1")]}
    result = gate_plan_alignment(_task(CRITERION), work.path, work.base, report)
    assert result.passed, result.evidence
    assert result.evidence == f"1/1 acceptance criteria mapped to lines of the change\n  ok: {CRITERION} -> calc.py:1"


# ---------------------------------------------------------------- the gate's choices among mappings


def test_a_bad_mapping_then_a_good_one_for_the_same_criterion_passes(work: Any) -> None:
    work.write("calc.py", SUB)
    report = {"criteriaMapping": [_mapping("1", "calc.py:99"), _mapping("1", "calc.py:2")]}
    result = gate_plan_alignment(_task(CRITERION), work.path, work.base, report)
    assert result.passed, result.evidence
    assert result.details["mapped"] == [{"criterion": CRITERION, "location": "calc.py:2"}]
    assert result.details["unmatched"] == []
    # the bad one is recorded but not held against a criterion that is mapped
    assert [b["location"] for b in result.details["bad"]] == ["calc.py:99"]
    assert "BAD" not in result.evidence


def test_a_criterion_with_only_bad_mappings_fails_and_is_not_called_unmapped(work: Any) -> None:
    work.write("calc.py", SUB)
    report = {"criteriaMapping": [_mapping("1", "calc.py:99"), _mapping("2", "calc.py:5")]}
    result = gate_plan_alignment(_task(CRITERION, "sub() subtracts"), work.path, work.base, report)
    assert not result.passed
    assert result.details["failing"] == [CRITERION]
    assert result.details["unmapped"] == []
    assert f"  BAD: {CRITERION} -> calc.py:99: calc.py:99 is beyond the end of the file (6 lines)" in result.evidence
    assert result.evidence.startswith("1/2 acceptance criteria mapped")


def test_payload_problems_about_criteria_are_shown(work: Any) -> None:
    work.write("calc.py", SUB)
    report = {"criteriaMapping": [{"criterion": "1"}], "reviewNote": 5}
    result = gate_plan_alignment(_task(CRITERION), work.path, work.base, report)
    assert not result.passed
    problems = [line for line in result.evidence.splitlines() if "payload problem" in line]
    assert problems
    assert all(line.startswith("  payload problem: criteria") for line in problems)
