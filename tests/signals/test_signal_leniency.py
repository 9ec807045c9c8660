"""Lenient about form, strict about meaning: what models really put in the flat signal_back schema.

Each leniency is accepted and noted; each refusal still says why. The payloads are the shapes seen
from models filling one flat schema for four signals: every field present, the unused ones empty.
"""

from __future__ import annotations

from typing import Any

import pytest

from pm_agent.signals import (
    CompleteSignal,
    NeedsRoleFollowupSignal,
    NeedsUserInputSignal,
    PartiallyCompleteSignal,
    SignalPayloadError,
    parse_signal,
    read_signal,
    signal_kind,
    signal_payload,
)

Payload = dict[str, Any]

BASE: Payload = {"signal": "complete", "stepId": "3", "summary": "Added the login endpoint."}
FOLLOWUP: Payload = {
    "signal": "needs-role-followup",
    "stepId": "3",
    "targetRole": "fixer",
    "reason": "lint errors",
    "context": "ruff: 3 errors",
    "resume": True,
}


def problems_of(data: Any) -> list[str]:
    with pytest.raises(SignalPayloadError) as info:
        parse_signal(data)
    return info.value.problems


def notes_of(data: Payload) -> list[str]:
    return list(read_signal(data).normalised)


# ---- the fields of other signals ------------------------------------------------------------------


def test_complete_with_every_other_signals_field_null_or_blank_is_accepted_and_noted() -> None:
    data = {
        **BASE,
        "progress": None,
        "continuationPoint": "",
        "question": None,
        "targetRole": "",
        "reason": None,
        "context": "",
        "resume": None,
    }
    reading = read_signal(data)
    assert isinstance(reading.signal, CompleteSignal)
    assert signal_payload(reading.signal) == signal_payload(parse_signal(BASE))  # nothing else is kept
    assert list(reading.normalised) == [
        "progress: null ignored (a partially-complete field)",
        "continuationPoint: '' ignored (a partially-complete field)",
        "question: null ignored (a needs-user-input field)",
        "targetRole: '' ignored (a needs-role-followup field)",
        "reason: null ignored (a needs-role-followup field)",
        "context: '' ignored (a needs-user-input field)",
        "resume: null ignored (a needs-role-followup field)",
    ]


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (None, "null"),
        ("", "''"),
        ("   ", "'   '"),
        ([], "[]"),
        ({}, "{}"),
        ("[]", "'[]'"),
        ("{}", "'{}'"),
        ("null", "'null'"),
    ],
)
def test_each_empty_form_in_another_signals_field_is_ignored(value: Any, shown: str) -> None:
    assert notes_of({**BASE, "question": value}) == [f"question: {shown} ignored (a needs-user-input field)"]


@pytest.mark.parametrize("value", ["Is JWT fine?", ["a"], {"a": 1}, False, 0, True, "[1]", "nil"])
def test_a_value_in_another_signals_field_is_still_refused(value: Any) -> None:
    assert problems_of({**BASE, "question": value}) == [
        "question: not a field of the complete signal (it belongs to needs-user-input)"
    ]


def test_complete_only_fields_left_empty_in_a_partially_complete_signal() -> None:
    data = {
        "signal": "partially-complete",
        "stepId": "3",
        "progress": "half",
        "continuationPoint": "the 401 test",
        "summary": "",
        "selfAssessment": None,
        "criteriaMapping": [],
        "reviewNote": {},
        "testsClaimedPassing": None,
        "filesModified": ["src/app.py"],
    }
    reading = read_signal(data)
    assert isinstance(reading.signal, PartiallyCompleteSignal)
    assert reading.signal.files_modified == ["src/app.py"]
    assert [note.split(":")[0] for note in reading.normalised] == [
        "summary",
        "selfAssessment",
        "criteriaMapping",
        "reviewNote",
        "testsClaimedPassing",
    ]
    assert all(note.endswith("ignored (a complete field)") for note in reading.normalised)


def test_unknown_fields_are_refused_even_when_empty() -> None:
    assert problems_of({**BASE, "filesCreatd": None}) == ["filesCreatd: unknown field; did you mean 'filesCreated'?"]
    assert problems_of({**BASE, "notes": ""})[0].startswith("notes: unknown field; a complete signal takes: ")


def test_a_field_is_only_foreign_to_signals_that_do_not_take_it() -> None:
    """`context` belongs to needs-user-input and needs-role-followup: empty there it is refused, not dropped."""
    data = {"signal": "needs-user-input", "stepId": "3", "question": "JWT?", "context": ""}
    assert problems_of(data) == ["context: must not be empty"]


# ---- the sender's own optional fields -------------------------------------------------------------


def test_null_own_lists_are_empty_lists_and_null_self_assessment_is_the_default() -> None:
    data = {**BASE, "filesCreated": None, "risks": None, "criteriaMapping": None, "selfAssessment": None}
    reading = read_signal(data)
    assert isinstance(reading.signal, CompleteSignal)
    assert reading.signal.files_created == reading.signal.risks == reading.signal.criteria_mapping == []
    assert reading.signal.self_assessment == "confident"
    assert list(reading.normalised) == [
        "filesCreated: null read as []",
        "risks: null read as []",
        "criteriaMapping: null read as []",
        "selfAssessment: null read as 'confident'",
    ]


def test_null_where_null_is_a_value_is_not_a_normalisation() -> None:
    reading = read_signal({**BASE, "reviewNote": None, "testsClaimedPassing": None})
    assert isinstance(reading.signal, CompleteSignal)
    assert (reading.signal.review_note, reading.signal.tests_claimed_passing) == (None, None)
    assert reading.normalised == ()


def test_null_nested_list_is_an_empty_list() -> None:
    note = {"summary": "New endpoint.", "risks": None, "rollback": "revert"}
    reading = read_signal({**BASE, "reviewNote": note})
    assert isinstance(reading.signal, CompleteSignal)
    assert reading.signal.review_note is not None
    assert reading.signal.review_note.risks == []
    assert list(reading.normalised) == ["reviewNote.risks: null read as []"]


def test_null_required_fields_are_reported_as_required() -> None:
    assert problems_of({**BASE, "summary": None}) == ["summary: required"]
    assert problems_of({**FOLLOWUP, "resume": None, "reason": None}) == ["reason: required", "resume: required"]
    mapping = [{"criterion": None, "location": "a.py:1"}]
    assert problems_of({**BASE, "criteriaMapping": mapping}) == ["criteriaMapping[0].criterion: required"]


@pytest.mark.parametrize(("field", "value"), [("selfAssessment", ""), ("reviewNote", ""), ("testsClaimedPassing", "")])
def test_blank_text_in_own_non_list_fields_is_refused(field: str, value: str) -> None:
    (problem,) = problems_of({**BASE, field: value})
    assert problem.startswith(f"{field}: ")


# ---- evidence lists --------------------------------------------------------------------------------


def test_blank_strings_inside_evidence_lists_are_dropped() -> None:
    data = {
        **BASE,
        "testEvidence": ["", "4 passed in 0.12s", "  "],
        "filesModified": ["src/app.py", ""],
        "reviewNote": {"summary": "s", "risks": ["", "none"], "rollback": "revert"},
    }
    reading = read_signal(data)
    assert isinstance(reading.signal, CompleteSignal)
    assert reading.signal.test_evidence == ["4 passed in 0.12s"]
    assert reading.signal.files_modified == ["src/app.py"]
    assert reading.signal.review_note is not None
    assert reading.signal.review_note.risks == ["none"]
    assert list(reading.normalised) == [
        "testEvidence: 2 blank entries dropped",
        "filesModified: 1 blank entry dropped",
        "reviewNote.risks: 1 blank entry dropped",
    ]


@pytest.mark.parametrize("blank", ["", "   ", "\n"])
def test_blank_text_for_a_list_is_an_empty_list(blank: str) -> None:
    reading = read_signal({**BASE, "filesDeleted": blank, "blockers": [blank]})
    assert isinstance(reading.signal, CompleteSignal)
    assert reading.signal.files_deleted == reading.signal.blockers == []
    assert list(reading.normalised) == [f"filesDeleted: {blank!r} read as []", "blockers: 1 blank entry dropped"]


def test_lists_as_json_text_and_lone_strings() -> None:
    reading = read_signal({**BASE, "filesCreated": '["a.py", ""]', "lintEvidence": "All checks passed!"})
    assert isinstance(reading.signal, CompleteSignal)
    assert reading.signal.files_created == ["a.py"]
    assert reading.signal.lint_evidence == ["All checks passed!"]
    assert list(reading.normalised) == [
        "filesCreated: JSON text read as a list, 1 blank entry dropped",
        "lintEvidence: a single string read as a one-item list",
    ]


def test_list_entries_that_are_not_text_are_still_refused() -> None:
    assert problems_of({**BASE, "testEvidence": ["ok", None, 3]}) == [
        "testEvidence[1]: input should be a valid string (got NoneType)",
        "testEvidence[2]: input should be a valid string (got int)",
    ]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[1,", "testEvidence: JSON text that does not parse (Expecting value: line 1 column 4 (char 3)); send a list"),
        ('["a"', "testEvidence: JSON text that does not parse"),
    ],
)
def test_list_text_that_is_not_a_list(text: str, problem: str) -> None:
    (only,) = problems_of({**BASE, "testEvidence": text})
    assert only.startswith(problem)


# ---- objects sent as JSON text ---------------------------------------------------------------------


def test_review_note_as_json_text_is_read_as_the_object() -> None:
    text = '{"summary": "New endpoint.", "risks": ["", "none known"], "rollback": "revert the commit"}'
    reading = read_signal({**BASE, "reviewNote": text})
    assert isinstance(reading.signal, CompleteSignal)
    assert reading.signal.review_note is not None
    assert reading.signal.review_note.rollback == "revert the commit"
    assert reading.signal.review_note.risks == ["none known"]
    assert list(reading.normalised) == [
        "reviewNote: JSON text read as an object",
        "reviewNote.risks: 1 blank entry dropped",
    ]


def test_criteria_mapping_as_json_text_is_read_as_the_list() -> None:
    text = '[{"criterion": "POST /login returns a token", "location": "src/app/login.py:12"}]'
    reading = read_signal({**BASE, "criteriaMapping": text})
    assert isinstance(reading.signal, CompleteSignal)
    assert [(m.path, m.line) for m in reading.signal.criteria_mapping] == [("src/app/login.py", 12)]
    assert list(reading.normalised) == ["criteriaMapping: JSON text read as a list"]


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ('{"summary": ', "reviewNote: JSON text that does not parse (Expecting value: line 1 column 13 (char 12))"),
        ("[1]", "reviewNote: must be an object (got JSON text of a list)"),
        ("revert it", "reviewNote: must be an object (got str)"),
        (5, "reviewNote: input should be an object (got int)"),
        ("{}", "reviewNote.summary: required"),
    ],
)
def test_review_note_that_is_not_an_object_says_why(value: Any, problem: str) -> None:
    assert problems_of({**BASE, "reviewNote": value})[0].startswith(problem)


def test_a_criterion_sent_as_json_text_inside_the_list_is_refused_with_a_hint() -> None:
    mapping = ['{"criterion": "c", "location": "a.py:1"}']
    assert problems_of({**BASE, "criteriaMapping": mapping}) == [
        "criteriaMapping[0]: must be an object itself, not JSON text"
    ]


# ---- enums, ids and kinds --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sent", "read"), [("Confident", "confident"), (" UNCERTAIN ", "uncertain"), ("Blocked", "blocked")]
)
def test_self_assessment_in_any_case(sent: str, read: str) -> None:
    reading = read_signal({**BASE, "selfAssessment": sent})
    assert isinstance(reading.signal, CompleteSignal)
    assert reading.signal.self_assessment == read
    assert list(reading.normalised) == [f"selfAssessment: {sent!r} read as {read!r}"]


def test_self_assessment_already_right_is_not_noted_and_unknown_is_refused() -> None:
    assert notes_of({**BASE, "selfAssessment": "uncertain"}) == []
    (problem,) = problems_of({**BASE, "selfAssessment": "Sure"})
    assert problem == "selfAssessment: input should be 'confident', 'uncertain' or 'blocked' (got 'Sure')"


@pytest.mark.parametrize(
    ("sent", "kind", "model"),
    [
        ("Complete", "complete", CompleteSignal),
        (" NEEDS-USER-INPUT", "needs-user-input", NeedsUserInputSignal),
        ("Needs-Role-Followup", "needs-role-followup", NeedsRoleFollowupSignal),
    ],
)
def test_signal_kind_in_any_case(sent: str, kind: str, model: type[Any]) -> None:
    fields = {
        "complete": BASE,
        "needs-user-input": {"question": "JWT?", "context": "c"},
        "needs-role-followup": FOLLOWUP,
    }
    data = {**fields[kind], "stepId": "3", "signal": sent}
    reading = read_signal(data)
    assert isinstance(reading.signal, model)
    assert reading.normalised[0] == f"signal: {sent!r} read as {kind!r}"
    assert signal_kind(sent) == kind


@pytest.mark.parametrize("value", ["completed", "Done", "", None, 3, ["complete"], {"kind": "complete"}])
def test_signal_kind_that_names_no_signal(value: Any) -> None:
    assert signal_kind(value) is None
    (problem,) = problems_of({**BASE, "signal": value})
    assert problem.startswith("signal: ")


def test_number_step_id_is_text_and_noted() -> None:
    reading = read_signal({**BASE, "stepId": 3})
    assert reading.signal.step_id == "3"
    assert list(reading.normalised) == ["stepId: the number 3 read as '3'"]
    assert read_signal({**BASE, "stepId": 0}).signal.step_id == "0"


@pytest.mark.parametrize("value", [True, False])
def test_a_boolean_is_not_an_id(value: bool) -> None:
    assert problems_of({**BASE, "stepId": value}) == ["stepId: input should be a valid string (got bool)"]


@pytest.mark.parametrize("value", [True, 1, None, ""])
def test_target_role_must_be_a_role_name(value: Any) -> None:
    problems = problems_of({**FOLLOWUP, "targetRole": value})
    expected = "targetRole: required" if value is None else "targetRole: must be one of analyst, planner"
    assert problems[0].startswith(expected)


def test_target_role_alias_is_noted() -> None:
    reading = read_signal({**FOLLOWUP, "targetRole": "Spiritmender"})
    assert isinstance(reading.signal, NeedsRoleFollowupSignal)
    assert reading.signal.target_role == "fixer"
    assert list(reading.normalised) == ["targetRole: 'Spiritmender' read as 'fixer'"]
    assert read_signal(FOLLOWUP).normalised == ()


@pytest.mark.parametrize(("length", "shown"), [(64, "x" * 64), (65, "x" * 61 + "..."), (5000, "x" * 61 + "...")])
def test_a_long_made_up_field_name_is_cut_in_the_message(length: int, shown: str) -> None:
    (problem,) = problems_of({**BASE, "x" * length: 1})
    name, _, rest = problem.partition(": ")
    assert name == shown
    assert rest.startswith("unknown field; a complete signal takes: signal, stepId, summary")


def test_a_payload_sent_as_the_schema_says_has_no_notes() -> None:
    data = {
        **BASE,
        "selfAssessment": "uncertain",
        "filesCreated": ["a.py"],
        "criteriaMapping": [{"criterion": "c", "location": "a.py:1"}],
        "reviewNote": {"summary": "s", "risks": [], "rollback": "r"},
        "testsClaimedPassing": False,
    }
    assert read_signal(data).normalised == ()
