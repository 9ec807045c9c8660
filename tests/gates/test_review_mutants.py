"""Gate 6 (review note) with its whole evidence and details pinned: mutmut's survivors (make mutation)."""

from __future__ import annotations

from pm_agent.gates import GateId, gate_review_note


def test_a_missing_note_says_what_to_send_and_quotes_the_payload_problem() -> None:
    result = gate_review_note({"reviewNote": 5, "criteriaMapping": 7})
    assert not result.passed
    assert result.gate == GateId.REVIEW_NOTE
    problems = result.details["problems"]
    assert problems[0] == "review note missing: send reviewNote {summary, risks, rollback}"
    assert len(problems) == 2
    assert problems[1].startswith("payload problem: reviewNote")  # the criteriaMapping problem is not this gate's
    assert result.evidence == "\n".join(problems)
    assert result.details["summary"] == ""
    assert result.details["rollback"] == ""
    assert result.details["risks"] == []


def test_missing_risks_and_both_empty_texts_are_each_named() -> None:
    result = gate_review_note({"reviewNote": {"summary": "", "rollback": " "}})
    assert result.evidence == (
        "summary is empty: say what changed\n"
        "risks missing: send a list ([] when there are none)\n"
        "rollback is empty: say how to undo the change"
    )


def test_a_usable_note_is_summarised_with_its_risks_counted() -> None:
    note = {"summary": " Adds sub() ", "risks": ["overflow ", " ", "none known"], "rollback": " Revert it "}
    result = gate_review_note({"reviewNote": note})
    assert result.passed
    assert result.evidence == "summary: Adds sub()\nrisks: 2\nrollback: Revert it"
    assert result.details == {
        "problems": [],
        "summary": "Adds sub()",
        "risks": ["overflow", "none known"],
        "rollback": "Revert it",
    }


def test_a_failing_note_still_reports_what_it_had() -> None:
    result = gate_review_note({"reviewNote": {"summary": "Adds sub()", "risks": ["r"], "rollback": ""}})
    assert not result.passed
    assert result.details["summary"] == "Adds sub()"
    assert result.details["risks"] == ["r"]
