"""Signals in plain `sqlite3` (see `_fast`): a session by its token, and recording a signal with its event.

The signal server (one process per agent session) records each signal_back call through these, without
SQLAlchemy; `SqliteStore` calls them too (both through `signal_store.SignalCalls`), so a signal is written
by one function whichever process writes it. The event goes through the one event writer (`_fast_writes._event`),
so the outbox hook and the event stream see a signal exactly as they see any other change.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pm_agent.errors import StoreError
from pm_agent.redaction import redact
from pm_agent.store._connect import FaultHook
from pm_agent.store._fast import insert, require_run
from pm_agent.store._fast_queries import SESSIONS, SIGNALS, get_session, get_signal
from pm_agent.store._fast_writes import _event
from pm_agent.store.records import SessionRecord, SignalRecord


def session_by_token(conn: sqlite3.Connection, token: str) -> SessionRecord | None:
    """The session holding this token, or None (a refused signal, not an error)."""
    row = conn.execute(f"{SESSIONS.select} WHERE token = ?", (token,)).fetchone()
    return None if row is None else SESSIONS.record(row, SessionRecord)


def record_signal(
    conn: sqlite3.Connection,
    *,
    run_id: str,
    task_id: str,
    session_id: int | None,
    attempt: int,
    seq: int,
    kind: str,
    payload: Mapping[str, Any],
    accepted: bool,
    reason: str,
    now: datetime,
    fault: FaultHook | None,
) -> tuple[SignalRecord, bool]:
    """Store a signal and a `signal.recorded` event in the caller's transaction; (record, True) if new.

    The same (session_id, seq) again returns the stored record and writes nothing. Refused signals
    with no valid session (session_id None) are always stored: they are an audit trail.
    """
    if session_id is not None:
        found = conn.execute(f"{SIGNALS.select} WHERE session_id = ? AND seq = ?", (session_id, seq)).fetchone()
        if found is not None:
            return SIGNALS.record(found, SignalRecord), False
        session = get_session(conn, session_id)
        if (session.run_id, session.task_id) != (run_id, task_id):
            raise StoreError(f"session {session_id} belongs to task {session.task_id!r}, not {task_id!r}")
    require_run(conn, run_id)
    row = {"run_id": run_id, "task_id": task_id, "session_id": session_id, "attempt": attempt, "seq": seq,
           "kind": kind, "payload": redact(dict(payload)), "accepted": accepted, "reason": redact(reason),
           "consumed": False, "created_at": now}  # fmt: skip
    signal_id = insert(conn, "signals", SIGNALS.encode(row))
    if fault is not None:
        fault("signal.inserted")
    event = {
        "signal_id": signal_id,
        "session_id": session_id,
        "kind": kind,
        "seq": seq,
        "attempt": attempt,
        "accepted": accepted,
        "reason": reason,  # redacted with the event
    }
    _event(conn, run_id, task_id, "signal.recorded", event, now)
    return get_signal(conn, signal_id), True
