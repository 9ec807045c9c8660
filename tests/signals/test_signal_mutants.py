"""Signal reading where a one-token change would go unnoticed: exact messages, note order, the readers themselves.

The readers and the models' validators are built once at import, so `enum_reader` and `Lenient` are also
tested on their own. JSON-text objects, blank lists and booleans as ids are in test_signal_leniency.py.
Written against mutmut's survivors (make mutation).
"""

from __future__ import annotations

from typing import Any

import pytest

from pm_agent.signals import SignalPayloadError, read_signal
from pm_agent.signals.forms import Lenient, enum_reader, read_id
from pm_agent.signals.leniency import normalise
from pm_agent.signals.models import CompleteSignal, required_wire_fields, show

BASE: dict[str, Any] = {"signal": "complete", "stepId": "3", "summary": "Added the login endpoint."}
KINDS = "complete, partially-complete, needs-user-input, needs-role-followup"


def _error(data: Any) -> SignalPayloadError:
    with pytest.raises(SignalPayloadError) as info:
        read_signal(data)
    return info.value


# ---------------------------------------------------------------- the signal field


def test_a_missing_signal_hints_at_type_only_when_type_was_sent() -> None:
    assert str(_error({"type": "complete"})) == (
        f"Invalid signal (1 problem):\n- signal: required; one of {KINDS} (the field is 'signal', not 'type')"
    )
    assert str(_error({"stepId": "3"})) == f"Invalid signal (1 problem):\n- signal: required; one of {KINDS}"


def test_an_unknown_signal_is_quoted_with_a_suggestion_only_when_one_is_close() -> None:
    assert _error({"signal": "compleet"}).problems == [
        f"signal: must be one of {KINDS} (got 'compleet'); did you mean 'complete'?"
    ]
    assert _error({"signal": "zzz"}).problems == [f"signal: must be one of {KINDS} (got 'zzz')"]


def test_the_signal_note_comes_before_the_notes_on_other_fields() -> None:
    reading = read_signal({**BASE, "signal": " Complete", "stepId": 3})
    assert reading.normalised == ("signal: ' Complete' read as 'complete'", "stepId: the number 3 read as '3'")


# ---------------------------------------------------------------- messages of refused fields


def test_a_snake_case_field_of_another_signal_says_where_it_belongs() -> None:
    assert _error({**BASE, "target_role": "fixer"}).problems == [
        "target_role: not a field of the complete signal (it belongs to needs-role-followup)"
    ]


def test_an_unknown_field_inside_a_nested_object_is_named_with_its_place() -> None:
    mapping = {"criterion": "a", "location": "a.py:1", "extra": 1}
    assert _error({**BASE, "criteriaMapping": [mapping]}).problems == ["criteriaMapping[0].extra: unknown field"]
    note = {"summary": "a", "rollback": "b", "owner": "me"}
    assert _error({**BASE, "reviewNote": note}).problems == ["reviewNote.owner: unknown field"]


def test_a_value_that_is_not_a_boolean_is_quoted() -> None:
    assert _error({**BASE, "testsClaimedPassing": "maybe"}).problems == [
        "testsClaimedPassing: input should be a valid boolean, unable to interpret input (got 'maybe')"
    ]


def test_the_error_message_counts_problems_and_names_the_signal() -> None:
    one = _error({**BASE, "summary": ""})
    assert one.kind == "complete"
    assert str(one) == "Invalid complete signal (1 problem):\n- summary: must not be empty"
    two = _error({"signal": "needs-user-input", "stepId": "3"})
    assert two.kind == "needs-user-input"
    assert str(two) == "Invalid needs-user-input signal (2 problems):\n- question: required\n- context: required"
    bare = SignalPayloadError(["x: y"])
    assert bare.kind is None
    assert str(bare) == "Invalid signal (1 problem):\n- x: y"


# ---------------------------------------------------------------- helpers


def test_show_cuts_a_long_value_at_the_limit() -> None:
    assert show("x" * 38) == "'" + "x" * 38 + "'"  # 40 characters: kept
    assert show("x" * 39) == "'" + "x" * 36 + "..."  # 41: cut to 40
    assert show("abcdef", limit=5) == "'a..."
    assert len(show(list(range(100)))) == 40


@pytest.mark.parametrize(
    ("kind", "fields"),
    [
        ("complete", ["signal", "stepId", "summary"]),
        ("partially-complete", ["signal", "stepId", "progress", "continuationPoint"]),
        ("needs-user-input", ["signal", "stepId", "question", "context"]),
        ("needs-role-followup", ["signal", "stepId", "targetRole", "reason", "context", "resume"]),
    ],
)
def test_required_wire_fields_in_reading_order(kind: str, fields: list[str]) -> None:
    assert required_wire_fields(kind) == fields


def test_enum_reader_folds_case_and_spaces_of_a_choice_only() -> None:
    read = enum_reader(["confident", "blocked"])
    assert read(" Blocked ") == ("blocked", "' Blocked ' read as 'blocked'")
    assert read("CONFIDENT") == ("confident", "'CONFIDENT' read as 'confident'")
    assert read("blocked") == ("blocked", None)  # already right: no note
    assert read("Unsure") == ("Unsure", None)  # not a choice: left for validation to refuse
    assert read(3) == (3, None)


def test_lenient_validator_returns_the_reader_value_without_its_note() -> None:
    validator = Lenient(read_id)
    assert validator(7) == "7"
    assert validator(True) is True


def test_normalise_leaves_a_list_for_a_single_object_field_untouched() -> None:
    tidy, notes = normalise(CompleteSignal, {"reviewNote": [{"summary": "a", "risks": None, "rollback": "b"}]})
    assert tidy == {"reviewNote": [{"summary": "a", "risks": None, "rollback": "b"}]}
    assert notes == []


def test_nested_notes_carry_the_field_path() -> None:
    tidy, notes = normalise(CompleteSignal, {"reviewNote": {"summary": "a", "risks": None, "rollback": "b"}})
    assert tidy == {"reviewNote": {"summary": "a", "rollback": "b"}}
    assert notes == ["reviewNote.risks: null read as []"]
    blank = read_signal({**BASE, "reviewNote": {"summary": "a", "risks": "  ", "rollback": "b"}})
    assert blank.normalised == ("reviewNote.risks: '  ' read as []",)


def test_only_snake_case_names_are_read_as_their_camel_case_field() -> None:
    # "Question" is not snake_case, so it is not looked up as "question" (a needs-user-input field)
    [problem] = _error({**BASE, "Question": "Which port?"}).problems
    assert problem.startswith("Question: unknown field; a complete signal takes: signal, stepId, summary, ")
