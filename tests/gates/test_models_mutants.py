"""How the gates read an agent's report: every lenient form, and what is dropped with a problem.

Written against mutmut's survivors (make mutation).
"""

from __future__ import annotations

from types import MappingProxyType

import pytest

from pm_agent.gates.models import AgentReport, CriterionMapping, ReviewNoteIn
from pm_agent.signals import parse_signal


def test_lists_as_json_text_lone_strings_and_blank_text() -> None:
    """The signal desk's readers (pm_agent.signals.forms): the gates read a value as signal_back does."""
    report = AgentReport.from_payload(
        {
            "filesCreated": ' ["a.py", "b.py"] ',
            "filesModified": "[broken",
            "filesDeleted": ["c.py", " "],
            "testEvidence": "1 passed",
            "lintEvidence": "  ",
        }
    )
    assert report.files_created == ["a.py", "b.py"]
    assert report.files_modified == []  # broken JSON is not guessed at, as signal_back does not
    assert report.files_deleted == ["c.py"]
    assert report.test_evidence == ["1 passed"]
    assert report.lint_evidence == []
    assert report.problems == ["filesModified: Input should be a valid list"]


def test_a_review_note_as_json_text_with_risks_as_one_string() -> None:
    report = AgentReport.from_payload({"reviewNote": '{"summary": "s", "risks": "r", "rollback": "b"}'})
    assert report.review_note == ReviewNoteIn(summary="s", risks=["r"], rollback="b")
    broken = AgentReport.from_payload({"reviewNote": "{broken"})
    assert broken.review_note is None
    assert broken.problems == ["reviewNote: Input should be a valid dictionary or instance of ReviewNoteIn"]


def test_criteria_mapping_forms() -> None:
    as_dict = AgentReport.from_payload({"criteriaMapping": {"AC1": "a.py:1", "AC2": "b.py:2"}})
    assert [(m.criterion, m.location) for m in as_dict.criteria_mapping] == [("AC1", "a.py:1"), ("AC2", "b.py:2")]
    as_text = AgentReport.from_payload({"criteriaMapping": '[{"criterion": "AC1", "location": "a.py:1"}]'})
    assert [(m.criterion, m.location) for m in as_text.criteria_mapping] == [("AC1", "a.py:1")]
    file_line = AgentReport.from_payload(
        {"criteria_mapping": [{"criterion": 2, "file": "a.py", "line": 3}, {"criterion": "x", "file": "b.py"}]}
    )
    assert [(m.criterion, m.location) for m in file_line.criteria_mapping] == [("2", "a.py:3"), ("x", "b.py")]


def test_a_boolean_criterion_is_refused_not_read_as_text() -> None:
    report = AgentReport.from_payload({"criteriaMapping": [{"criterion": True, "location": "a.py:1"}]})
    assert report.criteria_mapping == []
    assert report.problems == ["criteriaMapping.0.criterion: Input should be a valid string"]


def test_a_bad_field_is_dropped_and_the_others_kept() -> None:
    report = AgentReport.from_payload({"testsClaimedPassing": "maybe", "filesCreated": ["a.py"], "extra": 1})
    assert report.tests_claimed_passing is None
    assert report.files_created == ["a.py"]
    assert report.problems == ["testsClaimedPassing: Input should be a valid boolean, unable to interpret input"]


def test_payload_kinds() -> None:
    assert AgentReport.from_payload(None) == AgentReport()
    same = AgentReport(files_created=["a.py"])
    assert AgentReport.from_payload(same) is same
    assert AgentReport.from_payload(MappingProxyType({"selfAssessment": "uncertain"})).self_assessment == "uncertain"
    assert AgentReport.from_payload([1]).problems == ["(payload): expected an object, got list"]
    signal = parse_signal({"signal": "complete", "stepId": "1", "summary": "s", "testsClaimedPassing": True})
    assert AgentReport.from_payload(signal).tests_claimed_passing is True


@pytest.mark.parametrize(
    ("location", "parsed"),
    [
        ("a.py:3", ("a.py", 3, 3)),
        (" a.py:5-3 ", ("a.py", 5, 5)),
        ("a.py:3-9", ("a.py", 3, 9)),
        ("a.py#L4", ("a.py", 4, 4)),
        ("a.py#L3-L5", ("a.py", 3, 5)),
        ("a.py#L3-6", ("a.py", 3, 6)),
        ("a.py", None),
    ],
)
def test_location_forms(location: str, parsed: tuple[str, int, int] | None) -> None:
    assert CriterionMapping(criterion="c", location=location).parsed() == parsed


@pytest.mark.parametrize(
    "sent", ['["a.py", "b.py"]', ' ["a.py", "  "] ', "a.py", "", "   ", ["a.py", ""], ["a.py"], "[]"]
)
def test_the_gates_read_a_list_as_the_signal_desk_does(sent: object) -> None:
    signal = parse_signal({"signal": "complete", "stepId": "1", "summary": "s", "filesCreated": sent})
    report = AgentReport.from_payload({"filesCreated": sent})
    assert report.files_created == signal.model_dump()["filesCreated"]
    assert report.problems == []
