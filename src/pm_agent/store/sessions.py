"""Agent sessions, the lines they print, and the signals they send back.

Every line, `last_lines` and signal payload is stored with its secrets redacted (`pm_agent.redaction`):
agents see API keys and print what they see.

Session events and signals are idempotent on (session_id, seq): a line or a signal stored twice
(a retried MCP call, a replay after a crash) is stored once, and the second call writes nothing.

Sessions are created, updated and read by the plain-sqlite3 functions of `_fast_queries` and
`_fast_writes`, signals recorded (and sessions found by token) by those of `_fast_signals`, through
`signal_store.SignalCalls`, which the signal server's process uses too; the cold reads are here, in
SQLAlchemy Core.
"""

from __future__ import annotations

from sqlalchemy import Connection, select

from pm_agent.store import _fast_queries as fq
from pm_agent.store._fast import raw
from pm_agent.store._sql import fetch_all
from pm_agent.store.records import SessionEventRecord, SessionRecord, SignalRecord
from pm_agent.store.runs import require_run
from pm_agent.store.schema import session_events, signals


def get_session(conn: Connection, session_id: int) -> SessionRecord:
    """The session; NotFoundError if unknown."""
    return fq.get_session(raw(conn), session_id)


def session_events_of(conn: Connection, session_id: int, after_seq: int = 0) -> list[SessionEventRecord]:
    """Lines a session printed, in order."""
    stmt = (
        select(session_events)
        .where(session_events.c.session_id == session_id, session_events.c.seq > after_seq)
        .order_by(session_events.c.seq)
    )
    return fetch_all(conn, stmt, SessionEventRecord)


def get_signal(conn: Connection, signal_id: int) -> SignalRecord:
    """The signal; NotFoundError if unknown."""
    return fq.get_signal(raw(conn), signal_id)


def signals_for_task(conn: Connection, run_id: str, task_id: str) -> list[SignalRecord]:
    """Signals about a task (accepted or refused), oldest first."""
    stmt = select(signals).where(signals.c.run_id == run_id, signals.c.task_id == task_id).order_by(signals.c.id)
    return fetch_all(conn, stmt, SignalRecord)


def unconsumed_signals(conn: Connection, run_id: str) -> list[SignalRecord]:
    """Accepted signals of a run the engine has not acted on yet, oldest first."""
    require_run(conn, run_id)
    stmt = (
        select(signals)
        .where(signals.c.run_id == run_id, signals.c.accepted.is_(True), signals.c.consumed.is_(False))
        .order_by(signals.c.id)
    )
    return fetch_all(conn, stmt, SignalRecord)
