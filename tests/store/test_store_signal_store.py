"""The signal server's store (`signal_store`): plain sqlite3, the same rows and events as `SqliteStore`."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pm_agent.errors import NotFoundError, StoreError
from pm_agent.store import SqliteStore, open_store
from pm_agent.store.columns import MIGRATIONS
from pm_agent.store.migrations import migration_names
from pm_agent.store.outbox import Outbox, StoredEvent, register_hook, unregister_hook
from pm_agent.store.signal_store import PlainSignalStore, open_signal_store
from pm_agent.testing.clock import TickClock

NOON = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
PAYLOAD = {"signal": "complete", "stepId": "1", "summary": "done with key sk_live_" + "a" * 24}


def _record(store: Any, session_id: int | None, seq: int, *, accepted: bool = True) -> Any:
    return store.record_signal(
        run_id="run1", task_id="1", session_id=session_id, attempt=1, seq=seq, kind="complete",
        payload=PAYLOAD, accepted=accepted, reason="",
    )  # fmt: skip


def _world(db: Path, make_plan: Callable[..., Any]) -> tuple[int, str]:
    with open_store(db, clock=TickClock()) as store:
        store.create_run(make_plan(), baseline_sha="a", working_branch="b", shared_context={}, config={}, run_id="run1")
        session = store.create_session("run1", "1", "developer", 1, "tok", "claude", "/w")
    return session.id, session.token


def test_the_migrations_it_expects_are_the_stores() -> None:
    assert tuple(migration_names()) == MIGRATIONS


def test_a_signal_writes_the_same_rows_and_events_as_the_full_store(
    tmp_path: Path, make_plan: Callable[..., Any]
) -> None:
    dumps = []
    for name, opener in (("full", lambda db: open_store(db, clock=lambda: NOON)),
                         ("light", lambda db: PlainSignalStore(db, clock=lambda: NOON))):  # fmt: skip
        db = tmp_path / name / "state.db"
        session_id, token = _world(db, make_plan)
        with opener(db) as store:
            assert store.session_by_token(token).id == session_id
            assert store.session_by_token("nope") is None
            first = _record(store, session_id, 1)
            assert _record(store, session_id, 1) == first  # idempotent on (session, seq)
            _record(store, None, 0, accepted=False)  # the audit trail of an unknown token
            assert [s.seq for s in store.signals_for_session(session_id)] == [1]
            assert store.get_task("run1", "1").attempt == 0
            assert "sk_live_" not in str(first.payload)  # redacted before it is stored
        con = sqlite3.connect(db)
        dumps.append({t: con.execute(f"SELECT * FROM {t} ORDER BY id").fetchall() for t in ("signals", "events")})
        con.close()
    assert dumps[0] == dumps[1]
    assert [row[3] for row in dumps[1]["events"]][-2:] == ["signal.recorded", "signal.recorded"]


def test_errors_are_the_full_stores(tmp_path: Path, make_plan: Callable[..., Any]) -> None:
    db = tmp_path / "state.db"
    session_id, _ = _world(db, make_plan)
    store = open_signal_store(db)
    assert store is not None
    with store:
        with pytest.raises(NotFoundError, match="unknown task '9' in run 'run1'"):
            store.get_task("run1", "9")
        with pytest.raises(StoreError, match="belongs to task '1', not '2'"):
            store.record_signal(
                run_id="run1", task_id="2", session_id=session_id, attempt=1, seq=1, kind="complete",
                payload={}, accepted=True,
            )  # fmt: skip
        with pytest.raises(NotFoundError, match="unknown run 'run9'"):
            store.record_signal(
                run_id="run9", task_id="1", session_id=None, attempt=0, seq=0, kind="x", payload={}, accepted=False
            )
        assert store.signals_for_session(session_id) == []


def test_the_outbox_hook_sees_a_signal_in_its_transaction(tmp_path: Path, make_plan: Callable[..., Any]) -> None:
    @dataclass(frozen=True)
    class Row:
        key: str
        kind: str
        payload: dict[str, Any]

    db = tmp_path / "state.db"
    session_id, _ = _world(db, make_plan)
    seen: list[StoredEvent] = []

    def hook(event: StoredEvent) -> list[Row]:
        seen.append(event)
        return [Row(f"k{event.id}", event.kind, {"signal": event.payload.get("signal_id")})]

    register_hook(db, hook)
    try:
        with PlainSignalStore(db) as store:
            record = _record(store, session_id, 1)
    finally:
        unregister_hook(db)
    assert [e.kind for e in seen] == ["signal.recorded"]
    with open_store(db) as full:
        rows = Outbox(full.engine, full.now).rows("run1")
    assert [(r.kind, r.payload) for r in rows] == [("signal.recorded", {"signal": record.id})]


def test_a_store_not_at_this_schema_is_left_to_open_store(tmp_path: Path, make_plan: Callable[..., Any]) -> None:
    assert open_signal_store(tmp_path / "absent.db") is None
    assert not (tmp_path / "absent.db").exists()  # never creates a stray store
    junk = tmp_path / "junk.db"
    junk.write_text("not a database")
    assert open_signal_store(junk) is None
    db = tmp_path / "state.db"
    _world(db, make_plan)
    con = sqlite3.connect(db)
    con.execute("DELETE FROM migrations WHERE name = ?", (MIGRATIONS[-1],))
    con.commit()
    con.close()
    assert open_signal_store(db) is None
    con = sqlite3.connect(db)
    con.execute("INSERT INTO migrations (name, applied_at) VALUES (?, '2026-01-01 00:00:00.000000')", (MIGRATIONS[-1],))
    con.commit()
    con.close()
    ready = open_signal_store(db)
    assert isinstance(ready, PlainSignalStore)
    ready.close()
    assert isinstance(open_store(db), SqliteStore)
