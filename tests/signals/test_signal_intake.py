"""What the desk stores: the notes of a leniently read signal, and the size limits on what agents send."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from pm_agent.signals import parse_signal
from pm_agent.signals.desk import SignalDesk
from pm_agent.signals.limits import (
    MAX_PAYLOAD_BYTES,
    MAX_PROBLEMS,
    REFUSED_KEEP_BYTES,
    kept_payload,
    payload_bytes,
    problem_lines,
)

if TYPE_CHECKING:
    from conftest import World

Payload = dict[str, Any]

EMPTY_FOREIGN: Payload = {
    "progress": None,
    "continuationPoint": "",
    "question": None,
    "targetRole": "",
    "reason": None,
    "context": "",
    "resume": None,
}


def padded(payload: Payload, size: int) -> Payload:
    """`payload` with one testEvidence line grown so the whole payload is exactly `size` bytes."""
    data = {**payload, "testEvidence": [""]}
    data["testEvidence"] = ["x" * (size - payload_bytes(data))]
    assert payload_bytes(data) == size
    return data


# ---- what was normalised is stored with the signal -------------------------------------------------


def test_normalised_signal_is_stored_canonical_with_its_notes(world: World, complete: Payload) -> None:
    session = world.session()
    sent = {**complete, **EMPTY_FOREIGN, "stepId": "Task 3", "selfAssessment": "Confident", "filesDeleted": None}
    reply = SignalDesk(world.store, session.token).receive(sent)
    assert reply.accepted, reply.text
    (stored,) = world.signals(session)
    assert stored.accepted
    assert stored.reason == (
        "normalised: progress: null ignored (a partially-complete field); "
        "continuationPoint: '' ignored (a partially-complete field); "
        "question: null ignored (a needs-user-input field); "
        "targetRole: '' ignored (a needs-role-followup field); "
        "reason: null ignored (a needs-role-followup field); "
        "context: '' ignored (a needs-user-input field); "
        "resume: null ignored (a needs-role-followup field); "
        "selfAssessment: 'Confident' read as 'confident'; "
        "filesDeleted: null read as []; "
        "stepId: 'Task 3' read as '3'"
    )
    assert not set(EMPTY_FOREIGN) & set(stored.payload)
    assert (stored.payload["selfAssessment"], stored.payload["filesDeleted"]) == ("confident", [])
    assert parse_signal(stored.payload) == parse_signal(complete)  # what is stored is a clean signal
    assert [e.payload["reason"] for e in world.store.events(world.run_id, "3") if e.kind == "signal.recorded"] == [
        stored.reason
    ]


def test_signal_sent_as_the_schema_says_has_an_empty_reason(world: World, complete: Payload) -> None:
    session = world.session()
    assert SignalDesk(world.store, session.token).receive(complete).accepted
    assert world.signals(session)[0].reason == ""


def test_role_check_reads_the_kind_in_any_case(world: World) -> None:
    reviewer = world.session("reviewer")
    arguments = {"signal": "Needs-User-Input", "stepId": "3", "question": "Ship it?", "context": "LGTM"}
    reply = SignalDesk(world.store, reviewer.token).receive(arguments)
    assert not reply.accepted
    assert reply.text.startswith("Signal refused: invalid needs-user-input signal:\n")
    assert "- signal: the reviewer role may not send needs-user-input;" in reply.text
    (stored,) = world.signals(reviewer)
    assert (stored.kind, stored.payload) == ("needs-user-input", arguments)


@pytest.mark.parametrize("step_id", [True, False])
def test_boolean_step_id_is_refused_with_a_reason(world: World, complete: Payload, step_id: bool) -> None:
    session = world.session()
    reply = SignalDesk(world.store, session.token).receive({**complete, "stepId": step_id})
    assert not reply.accepted
    assert reply.text == (
        "Signal refused: invalid complete signal:\n"
        "- stepId: input should be a valid string (got bool)\n"
        "Correct these and call signal_back again."
    )


def test_a_long_wrong_step_id_is_cut_in_the_message(world: World, complete: Payload) -> None:
    session = world.session()
    reply = SignalDesk(world.store, session.token).receive({**complete, "stepId": "9" * 1000})
    assert not reply.accepted
    assert f"not '{'9' * 60}...; use \"3\"" in reply.text
    assert len(reply.text) < 300


# ---- size limits ----------------------------------------------------------------------------------


def test_payload_at_the_limit_is_accepted(world: World, complete: Payload) -> None:
    session = world.session()
    reply = SignalDesk(world.store, session.token).receive(padded(complete, MAX_PAYLOAD_BYTES))
    assert reply.accepted, reply.text[:300]
    (stored,) = world.signals(session)
    assert len(stored.payload["testEvidence"][0]) > MAX_PAYLOAD_BYTES - 1000


def test_payload_over_the_limit_is_refused_saying_the_limit_and_stored_cut(world: World, complete: Payload) -> None:
    session = world.session()
    desk = SignalDesk(world.store, session.token)
    big = padded(complete, MAX_PAYLOAD_BYTES + 1)
    reply = desk.receive(big)
    assert not reply.accepted
    assert reply.text == (
        f"Signal refused: the payload is {MAX_PAYLOAD_BYTES + 1:,} bytes, over the limit of 262,144 bytes (256 KB)\n"
        "Send the key lines of long outputs, not whole logs, and call signal_back again."
    )
    (stored,) = world.signals(session)
    assert (stored.accepted, stored.kind) == (False, "complete")
    assert stored.payload["truncated"] is True
    assert stored.payload["bytes"] == MAX_PAYLOAD_BYTES + 1
    assert len(stored.payload["head"].encode()) == REFUSED_KEEP_BYTES
    assert json.dumps(big, ensure_ascii=False, separators=(",", ":")).startswith(stored.payload["head"])
    assert desk.receive(complete).accepted  # the agent can still send a smaller one


def test_refused_payloads_are_kept_as_sent_up_to_the_keep_limit(world: World, complete: Payload) -> None:
    session = world.session()
    desk = SignalDesk(world.store, session.token)
    small = padded({**complete, "summary": ""}, REFUSED_KEEP_BYTES)
    large = padded({**complete, "summary": ""}, REFUSED_KEEP_BYTES + 1)
    assert not desk.receive(small).accepted
    assert not desk.receive(large).accepted
    first, second = world.signals(session)
    assert first.payload == small
    assert set(second.payload) == {"truncated", "bytes", "head"}
    assert "summary: must not be empty" in second.reason


def test_refused_call_without_a_session_is_stored_cut_too(world: World, complete: Payload) -> None:
    big = padded(complete, MAX_PAYLOAD_BYTES * 2)
    reply = SignalDesk(world.store, "no-such-token", audit=(world.run_id, "3")).receive(big)
    assert not reply.accepted
    (stored,) = world.task_signals("3")
    assert stored.payload["bytes"] == MAX_PAYLOAD_BYTES * 2
    assert len(json.dumps(stored.payload)) < REFUSED_KEEP_BYTES + 1000


def test_late_call_of_a_finished_session_is_stored_cut(world: World, complete: Payload) -> None:
    session = world.session()
    desk = SignalDesk(world.store, session.token)
    assert desk.receive(complete).accepted
    again = desk.receive(padded(complete, REFUSED_KEEP_BYTES * 4))
    assert "already sent its signal" in again.text
    assert world.signals(session)[1].payload["truncated"] is True


def test_many_problems_are_listed_up_to_a_limit(world: World, complete: Payload) -> None:
    session = world.session()
    unknown = {f"field{n}": n for n in range(MAX_PROBLEMS + 5)}
    reply = SignalDesk(world.store, session.token).receive({**complete, **unknown})
    assert not reply.accepted
    lines = [line for line in reply.text.splitlines() if line.startswith("- ")]
    assert len(lines) == MAX_PROBLEMS + 1
    assert lines[-1] == "- ... and 5 more"
    assert world.signals(session)[0].reason.endswith("- ... and 5 more")


def test_limits_helpers() -> None:
    assert payload_bytes({"a": "é"}) == len('{"a":"é"}'.encode())
    multibyte = {"head": "é" * REFUSED_KEEP_BYTES}
    kept = kept_payload(multibyte)
    assert kept["bytes"] == payload_bytes(multibyte)
    assert kept["head"].startswith('{"head":"éé')
    assert len(kept["head"].encode()) <= REFUSED_KEEP_BYTES  # cut at a character, never inside one
    assert problem_lines(["a", "b"]) == "- a\n- b"
    assert problem_lines([str(n) for n in range(MAX_PROBLEMS)]).count("\n") == MAX_PROBLEMS - 1
