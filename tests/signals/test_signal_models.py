"""The four signal payloads: valid ones parse; invalid ones give `field: problem` messages a model can use."""

from __future__ import annotations

from typing import Any

import pytest

from pm_agent.errors import SignalError
from pm_agent.lifecycle.roles import Role
from pm_agent.signals import (
    CompleteSignal,
    NeedsRoleFollowupSignal,
    NeedsUserInputSignal,
    PartiallyCompleteSignal,
    SignalPayloadError,
    parse_signal,
    signal_payload,
)

FULL_COMPLETE: dict[str, Any] = {
    "signal": "complete",
    "stepId": "3",
    "summary": "Added the login endpoint.",
    "filesCreated": ["src/app/login.py", "tests/test_login.py"],
    "filesModified": ["src/app/routes.py"],
    "filesDeleted": [],
    "testEvidence": ["$ pytest tests/test_login.py", "4 passed in 0.12s"],
    "lintEvidence": ["All checks passed!"],
    "typecheckEvidence": ["Success: no issues found in 3 source files"],
    "blockers": [],
    "risks": ["sessions are not rotated on login"],
    "selfAssessment": "uncertain",
    "criteriaMapping": [
        {"criterion": "POST /login returns a token", "location": "src/app/login.py:12"},
        {"criterion": "bad password gives 401", "location": "src/app/login.py:20-28"},
    ],
    "reviewNote": {"summary": "New endpoint.", "risks": ["none known"], "rollback": "revert the commit"},
    "testsClaimedPassing": True,
}


def problems_of(data: Any) -> list[str]:
    with pytest.raises(SignalPayloadError) as info:
        parse_signal(data)
    assert isinstance(info.value, SignalError)
    assert str(info.value).count("\n- ") == len(info.value.problems)
    return info.value.problems


def test_minimal_complete_has_seed_001_defaults() -> None:
    signal = parse_signal({"signal": "complete", "stepId": "3", "summary": "done"})
    assert isinstance(signal, CompleteSignal)
    assert signal.step_id == "3"
    assert signal.summary == "done"
    assert signal.self_assessment == "confident"
    assert signal.files_created == signal.test_evidence == signal.criteria_mapping == []
    assert signal.review_note is None
    assert signal.tests_claimed_passing is None


def test_full_complete_keeps_all_evidence_and_round_trips_with_wire_names() -> None:
    signal = parse_signal(FULL_COMPLETE)
    assert isinstance(signal, CompleteSignal)
    assert signal.files_changed == ["src/app/login.py", "tests/test_login.py", "src/app/routes.py"]
    assert signal.self_assessment == "uncertain"
    assert [(m.path, m.line) for m in signal.criteria_mapping] == [
        ("src/app/login.py", 12),
        ("src/app/login.py", 20),
    ]
    assert signal.review_note is not None
    assert signal.review_note.rollback == "revert the commit"
    assert signal.tests_claimed_passing is True
    payload = signal_payload(signal)
    assert payload == FULL_COMPLETE
    assert parse_signal(payload) == signal


def test_partially_complete() -> None:
    signal = parse_signal(
        {
            "signal": "partially-complete",
            "stepId": "task-3",
            "progress": "Endpoint written, tests half done.",
            "continuationPoint": "tests/test_login.py: add the 401 case",
            "filesModified": ["src/app/routes.py"],
        }
    )
    assert isinstance(signal, PartiallyCompleteSignal)
    assert signal.continuation_point == "tests/test_login.py: add the 401 case"
    assert signal.files_modified == ["src/app/routes.py"]


def test_needs_user_input() -> None:
    signal = parse_signal(
        {"signal": "needs-user-input", "stepId": "3", "question": "JWT or sessions?", "context": "No ADR."}
    )
    assert isinstance(signal, NeedsUserInputSignal)
    assert signal.question == "JWT or sessions?"


@pytest.mark.parametrize(
    ("name", "role"),
    [
        ("pathseeker", Role.PLANNER),
        ("Codeweaver", Role.DEVELOPER),
        ("siegemaster", Role.TESTER),
        ("lawbringer", Role.REVIEWER),
        ("spiritmender", Role.FIXER),
        ("chaoswhisperer", Role.ANALYST),
        ("fixer", Role.FIXER),
        ("planner", Role.PLANNER),
    ],
)
def test_needs_role_followup_normalizes_target_role(name: str, role: Role) -> None:
    signal = parse_signal(
        {
            "signal": "needs-role-followup",
            "stepId": "3",
            "targetRole": name,
            "reason": "lint errors",
            "context": "ruff reports 3 errors",
            "resume": False,
        }
    )
    assert isinstance(signal, NeedsRoleFollowupSignal)
    assert signal.target_role == role.value
    assert signal.resume is False
    assert signal_payload(signal)["targetRole"] == role.value


def test_numeric_step_id_and_stringified_lists_are_accepted() -> None:
    signal = parse_signal({"signal": "complete", "stepId": 3, "summary": "x", "filesCreated": '["a.py"]'})
    assert isinstance(signal, CompleteSignal)
    assert signal.step_id == "3"
    assert signal.files_created == ["a.py"]


def test_missing_question_names_the_field() -> None:
    assert problems_of({"signal": "needs-user-input", "stepId": "3", "context": "c"}) == [
        "question: required"
    ]


def test_missing_fields_are_all_listed() -> None:
    problems = problems_of({"signal": "needs-role-followup", "stepId": "3"})
    assert problems == [
        "targetRole: required",
        "reason: required",
        "context: required",
        "resume: required",
    ]


def test_bad_signal_name_suggests_the_right_one() -> None:
    (problem,) = problems_of({"signal": "completed", "stepId": "3", "summary": "x"})
    assert problem.startswith("signal: must be one of complete, partially-complete")
    assert "did you mean 'complete'?" in problem


def test_missing_signal_hints_at_type() -> None:
    (problem,) = problems_of({"type": "complete", "stepId": "3"})
    assert problem.startswith("signal: required")
    assert "not 'type'" in problem


def test_unknown_field_is_an_error_with_a_suggestion() -> None:
    (problem,) = problems_of({"signal": "complete", "stepId": "3", "summary": "x", "filesCreatd": ["a"]})
    assert problem == "filesCreatd: unknown field; did you mean 'filesCreated'?"


def test_snake_case_names_are_refused() -> None:
    assert problems_of({"signal": "complete", "step_id": "3", "summary": "x"}) == [
        "stepId: required",
        "step_id: unknown field; did you mean 'stepId'?",
    ]
    assert problems_of({"signal": "complete", "stepId": "3", "summary": "x", "files_created": []}) == [
        "files_created: unknown field; did you mean 'filesCreated'?"
    ]


def test_field_of_another_signal_says_where_it_belongs() -> None:
    (problem,) = problems_of({"signal": "complete", "stepId": "3", "summary": "x", "question": "q"})
    assert problem == "question: not a field of the complete signal (it belongs to needs-user-input)"


def test_bad_self_assessment() -> None:
    (problem,) = problems_of({"signal": "complete", "stepId": "3", "summary": "x", "selfAssessment": "sure"})
    assert problem.startswith("selfAssessment: ")
    assert "'confident', 'uncertain' or 'blocked'" in problem
    assert "(got 'sure')" in problem


@pytest.mark.parametrize(
    "location",
    ["src/app.py", "src/app.py:", "src/app.py:0", ":12", "app.py:twelve", "src/app.py:12:5", "a.py: 3"],
)
def test_bad_location_format(location: str) -> None:
    data = {
        "signal": "complete",
        "stepId": "3",
        "summary": "x",
        "criteriaMapping": [
            {"criterion": "ok", "location": "a.py:1"},
            {"criterion": "c", "location": location},
        ],
    }
    (problem,) = problems_of(data)
    assert problem.startswith("criteriaMapping[1].location: must be 'path:line'")


def test_location_line_ranges() -> None:
    def mapping(location: str) -> dict[str, Any]:
        return {
            "signal": "complete",
            "stepId": "3",
            "summary": "x",
            "criteriaMapping": [{"criterion": "c", "location": location}],
        }

    signal = parse_signal(mapping(" src/my app/x.py:7-9 "))
    assert isinstance(signal, CompleteSignal)
    (only,) = signal.criteria_mapping
    assert (only.location, only.path, only.line) == ("src/my app/x.py:7-9", "src/my app/x.py", 7)
    assert problems_of(mapping("a.py:20-10")) == [
        "criteriaMapping[0].location: line range ends before it starts (got 'a.py:20-10')"
    ]


def test_review_note_needs_summary_and_rollback() -> None:
    data = {"signal": "complete", "stepId": "3", "summary": "x", "reviewNote": {"risks": []}}
    assert problems_of(data) == ["reviewNote.summary: required", "reviewNote.rollback: required"]


def test_empty_text_and_wrong_types() -> None:
    problems = problems_of(
        {
            "signal": "partially-complete",
            "stepId": "  ",
            "progress": "",
            "continuationPoint": 5,
            "testEvidence": [1],
        }
    )
    assert problems == [
        "stepId: must not be empty",
        "progress: must not be empty",
        "continuationPoint: input should be a valid string (got int)",
        "testEvidence[0]: input should be a valid string (got int)",
    ]


def test_unknown_target_role() -> None:
    base = {"signal": "needs-role-followup", "stepId": "3", "reason": "r", "context": "c", "resume": True}
    (problem,) = problems_of({**base, "targetRole": "wizard"})
    assert problem.startswith("targetRole: unknown role 'wizard'; use one of analyst, planner")
    (problem,) = problems_of({**base, "targetRole": "ward"})
    assert problem.startswith("targetRole: 'ward' is not a role an agent can play")


def test_payload_must_be_an_object() -> None:
    assert problems_of(["complete"]) == ["(payload): must be an object, got list"]


def test_message_is_compact_and_names_the_signal() -> None:
    with pytest.raises(SignalPayloadError) as info:
        parse_signal({"signal": "needs-user-input", "stepId": "3"})
    assert (
        str(info.value)
        == "Invalid needs-user-input signal (2 problems):\n- question: required\n- context: required"
    )
