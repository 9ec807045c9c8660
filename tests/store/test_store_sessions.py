"""Agent sessions, their output lines, and idempotent signals."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pm_agent.errors import StoreError
from pm_agent.store import SessionStatus, SqliteStore

Arm = Callable[[str | None], None]


def _signal(store: SqliteStore, session_id: int | None, seq: int, **kw: Any) -> Any:
    fields: dict[str, Any] = {
        "run_id": "run1", "task_id": "1", "session_id": session_id, "attempt": 1, "seq": seq,
        "kind": "complete", "payload": {"summary": "done"}, "accepted": True, "reason": "",
    }  # fmt: skip
    fields.update(kw)
    return store.record_signal(**fields)


def test_session_lifecycle(store: SqliteStore, run_id: str) -> None:
    first = store.create_session(run_id, "1", "developer", 1, "tok-1", "claude", "/work/slot1")
    assert (first.status, first.cost_usd, first.last_lines, first.resumed_from) == (
        SessionStatus.STARTING, 0.0, "", None,
    )  # fmt: skip
    assert store.session_by_token("tok-1") == first
    assert store.session_by_token("unknown") is None

    running = store.update_session(
        first.id, status=SessionStatus.RUNNING, pid=4321, agent_session_id="cli-abc"
    )
    assert (running.status, running.pid, running.agent_session_id) == (SessionStatus.RUNNING, 4321, "cli-abc")
    at = store.now()
    store.touch_session(first.id, at)
    assert store.get_session(first.id).last_output_at == at

    ended = store.update_session(
        first.id, status="signalled", exit_code=0, ended_at=store.now(), cost_usd=0.25,
        input_tokens=1000, output_tokens=200, last_lines="bye\n" * 50,
    )  # fmt: skip
    assert ended.status is SessionStatus.SIGNALLED
    resumed = store.create_session(
        run_id, "1", "developer", 1, "tok-2", "claude", "/work/slot1", resumed_from=first.id
    )
    assert resumed.resumed_from == first.id
    assert [s.id for s in store.list_sessions(run_id)] == [first.id, resumed.id]
    assert store.list_sessions(run_id, "2") == []

    kinds = [e.kind for e in store.events(run_id, task_id="1")]
    assert kinds == ["session.created", "session.updated", "session.updated", "session.created"]
    last_update = store.events(run_id, task_id="1")[2].payload
    assert "last_lines" not in last_update
    assert last_update["also_changed"] == ["last_lines"]


def test_session_updates_are_validated(store: SqliteStore, run_id: str) -> None:
    session = store.create_session(run_id, "1", "developer", 1, "tok", "claude", "/w")
    with pytest.raises(StoreError, match="cannot update session field"):
        store.update_session(session.id, token="stolen")
    with pytest.raises(StoreError, match="invalid session update"):
        store.update_session(session.id, status="sleeping")
    with pytest.raises(StoreError, match="UNIQUE"):
        store.create_session(run_id, "2", "developer", 1, "tok", "claude", "/w")


def test_session_events_are_idempotent(store: SqliteStore, run_id: str) -> None:
    session = store.create_session(run_id, "1", "developer", 1, "tok", "claude", "/w")
    assert store.record_session_event(session.id, 1, "system", {"type": "system", "session_id": "x"})
    assert store.record_session_event(session.id, 2, "text", "plain line")
    assert not store.record_session_event(session.id, 1, "system", {"type": "other"})
    lines = store.session_events(session.id)
    assert [(e.seq, e.kind, e.payload) for e in lines] == [
        (1, "system", '{"session_id":"x","type":"system"}'),
        (2, "text", "plain line"),
    ]
    assert [e.seq for e in store.session_events(session.id, after_seq=1)] == [2]


def test_signal_is_idempotent_on_session_and_seq(
    store: SqliteStore, run_id: str, db_path: Path, dump: Callable[[], Any]
) -> None:
    session = store.create_session(run_id, "1", "developer", 1, "tok", "claude", "/w")
    first = _signal(store, session.id, 1)
    assert first.accepted
    assert first.payload == {"summary": "done"}
    before = dump()
    again = _signal(store, session.id, 1, kind="partially-complete", payload={"other": True})
    assert again == first
    assert dump() == before  # nothing written the second time
    assert store.signals_for_session(session.id) == [first]
    events = [e for e in store.events(run_id) if e.kind == "signal.recorded"]
    assert len(events) == 1


def test_refused_signals_are_kept(store: SqliteStore, run_id: str) -> None:
    session = store.create_session(run_id, "1", "developer", 1, "tok", "claude", "/w")
    refused = _signal(store, session.id, 1, accepted=False, reason="role may not send complete")
    assert (refused.accepted, refused.reason) == (False, "role may not send complete")
    # bad token: no session; each call is its own audit row
    a = _signal(store, None, 0, accepted=False, reason="unknown token")
    b = _signal(store, None, 0, accepted=False, reason="unknown token")
    assert a.id != b.id
    assert a.session_id is None
    assert store.unconsumed_signals(run_id) == []  # refused signals are never acted on


def test_signal_must_match_its_session_task(
    store: SqliteStore, run_id: str, db_path: Path, dump: Callable[[], Any]
) -> None:
    session = store.create_session(run_id, "2", "developer", 1, "tok", "claude", "/w")
    before = dump()
    with pytest.raises(StoreError, match="belongs to task '2'"):
        _signal(store, session.id, 1)
    assert dump() == before


def test_unconsumed_signals_and_consuming(store: SqliteStore, run_id: str) -> None:
    s1 = store.create_session(run_id, "1", "developer", 1, "tok1", "claude", "/w")
    s2 = store.create_session(run_id, "2", "tester", 1, "tok2", "claude", "/w")
    a = _signal(store, s1.id, 1)
    b = _signal(store, s2.id, 1, task_id="2", kind="needs-user-input")
    assert [s.id for s in store.unconsumed_signals(run_id)] == [a.id, b.id]
    consumed = store.mark_signal_consumed(a.id)
    assert consumed.consumed
    assert store.mark_signal_consumed(a.id) == consumed  # no-op, no second event
    assert [s.id for s in store.unconsumed_signals(run_id)] == [b.id]
    assert [e.kind for e in store.events(run_id, task_id="1")].count("signal.consumed") == 1


def test_signal_interrupted_leaves_nothing(
    faulty_store: tuple[SqliteStore, Arm],
    db_path: Path,
    dump: Callable[[], Any],
    make_plan: Callable[..., Any],
) -> None:
    store, arm = faulty_store
    store.create_run(
        make_plan(), baseline_sha="a", working_branch="b", shared_context={}, config={}, run_id="run1"
    )
    session = store.create_session("run1", "1", "developer", 1, "tok", "claude", "/w")
    before = dump()
    arm("signal.inserted")
    with pytest.raises(RuntimeError, match="fault at"):
        _signal(store, session.id, 1)
    assert dump() == before
    arm(None)
    assert _signal(store, session.id, 1).seq == 1
