"""Agent sessions, the lines they print, and the signals they send back.

Every line, `last_lines` and signal payload is stored with its secrets redacted (`pm_agent.redaction`):
agents see API keys and print what they see.

Session events and signals are idempotent on (session_id, seq): a line or a signal stored twice
(a retried MCP call, a replay after a crash) is stored once, and the second call writes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, func, select

from pm_agent.errors import NotFoundError, StoreError
from pm_agent.redaction import redact
from pm_agent.store._sql import fetch_all, fetch_one, inserted_id, json_payload, merge
from pm_agent.store.database import fault_point
from pm_agent.store.events import append_event_txn
from pm_agent.store.records import SessionEventRecord, SessionRecord, SessionStatus, SignalRecord
from pm_agent.store.runs import get_task, require_run
from pm_agent.store.schema import session_events, sessions, signals
from pm_agent.store.types import dump_json

SESSION_FIELDS = frozenset(
    {
        "agent_session_id",
        "status",
        "pid",
        "exit_code",
        "workdir",
        "last_output_at",
        "ended_at",
        "cost_usd",
        "input_tokens",
        "output_tokens",
        "last_lines",
    }
)


def get_session(conn: Connection, session_id: int) -> SessionRecord:
    """The session; NotFoundError if unknown."""
    session = fetch_one(conn, select(sessions).where(sessions.c.id == session_id), SessionRecord)
    if session is None:
        raise NotFoundError(f"unknown session {session_id!r}")
    return session


def session_by_token(conn: Connection, token: str) -> SessionRecord | None:
    """The session holding this token, or None (a refused signal, not an error)."""
    return fetch_one(conn, select(sessions).where(sessions.c.token == token), SessionRecord)


def sessions_cost(conn: Connection, run_id: str) -> float:
    """What every agent session of the run cost, summed in SQL."""
    require_run(conn, run_id)
    stmt = select(func.coalesce(func.sum(sessions.c.cost_usd), 0.0)).where(sessions.c.run_id == run_id)
    return float(conn.execute(stmt).scalar_one())


def list_sessions(conn: Connection, run_id: str, task_id: str | None = None) -> list[SessionRecord]:
    """Sessions of a run (or task), oldest first."""
    require_run(conn, run_id)
    stmt = select(sessions).where(sessions.c.run_id == run_id).order_by(sessions.c.id)
    if task_id is not None:
        stmt = stmt.where(sessions.c.task_id == task_id)
    return fetch_all(conn, stmt, SessionRecord)


def session_events_of(conn: Connection, session_id: int, after_seq: int = 0) -> list[SessionEventRecord]:
    """Lines a session printed, in order."""
    stmt = (
        select(session_events)
        .where(session_events.c.session_id == session_id, session_events.c.seq > after_seq)
        .order_by(session_events.c.seq)
    )
    return fetch_all(conn, stmt, SessionEventRecord)


def create_session_txn(
    conn: Connection,
    *,
    run_id: str,
    task_id: str,
    role: str,
    attempt: int,
    token: str,
    runner: str,
    workdir: str,
    resumed_from: int | None,
    now: datetime,
) -> SessionRecord:
    """Insert a `starting` session and a `session.created` event."""
    get_task(conn, run_id, task_id)
    if resumed_from is not None:
        get_session(conn, resumed_from)
    result = conn.execute(
        sessions.insert().values(
            run_id=run_id,
            task_id=task_id,
            role=role,
            attempt=attempt,
            token=token,
            runner=runner,
            agent_session_id=None,
            resumed_from=resumed_from,
            status=SessionStatus.STARTING.value,
            pid=None,
            exit_code=None,
            workdir=workdir,
            started_at=now,
            last_output_at=None,
            ended_at=None,
            cost_usd=0.0,
            input_tokens=0,
            output_tokens=0,
            last_lines="",
        )
    )
    session_id = inserted_id(result)
    payload = {
        "session_id": session_id,
        "role": role,
        "attempt": attempt,
        "runner": runner,
        "resumed_from": resumed_from,
    }
    append_event_txn(conn, run_id, task_id, "session.created", payload, now=now)
    return get_session(conn, session_id)


def update_session_txn(
    conn: Connection, session_id: int, fields: Mapping[str, Any], *, now: datetime
) -> SessionRecord:
    """Change session fields (validated) and write a `session.updated` event."""
    current = get_session(conn, session_id)
    if isinstance(fields.get("last_lines"), str):
        fields = {**fields, "last_lines": redact(fields["last_lines"])}
    _, values = merge(current, fields, SESSION_FIELDS, "session")
    if values:
        conn.execute(sessions.update().where(sessions.c.id == session_id).values(**values))
    payload = {"session_id": session_id, **json_payload(values, skip=("last_lines",))}
    append_event_txn(conn, current.run_id, current.task_id, "session.updated", payload, now=now)
    return get_session(conn, session_id)


def touch_session_txn(conn: Connection, session_id: int, at: datetime) -> None:
    """Set last_output_at only: the cheap heartbeat for every line of output (no event)."""
    result = conn.execute(sessions.update().where(sessions.c.id == session_id).values(last_output_at=at))
    if result.rowcount != 1:
        raise NotFoundError(f"unknown session {session_id!r}")


def record_session_event_txn(
    conn: Connection, session_id: int, seq: int, kind: str, payload: Any, *, now: datetime
) -> bool:
    """Store one printed line (text as is, anything else as JSON), secrets redacted; False if (session, seq)
    was there."""
    exists = conn.scalar(
        select(session_events.c.id).where(
            session_events.c.session_id == session_id, session_events.c.seq == seq
        )
    )
    if exists is not None:
        return False
    get_session(conn, session_id)
    cleaned = redact(payload)
    text = cleaned if isinstance(cleaned, str) else dump_json(cleaned)
    conn.execute(
        session_events.insert().values(
            session_id=session_id, seq=seq, kind=kind, payload=text, created_at=now
        )
    )
    return True


def _existing_signal(conn: Connection, session_id: int, seq: int) -> SignalRecord | None:
    stmt = select(signals).where(signals.c.session_id == session_id, signals.c.seq == seq)
    return fetch_one(conn, stmt, SignalRecord)


def get_signal(conn: Connection, signal_id: int) -> SignalRecord:
    """The signal; NotFoundError if unknown."""
    signal = fetch_one(conn, select(signals).where(signals.c.id == signal_id), SignalRecord)
    if signal is None:
        raise NotFoundError(f"unknown signal {signal_id!r}")
    return signal


def record_signal_txn(
    conn: Connection,
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
) -> tuple[SignalRecord, bool]:
    """Store a signal and a `signal.recorded` event; (record, True) if new.

    The same (session_id, seq) again returns the stored record and writes nothing. Refused signals
    with no valid session (session_id None) are always stored: they are an audit trail.
    """
    if session_id is not None:
        existing = _existing_signal(conn, session_id, seq)
        if existing is not None:
            return existing, False
        session = get_session(conn, session_id)
        if (session.run_id, session.task_id) != (run_id, task_id):
            raise StoreError(f"session {session_id} belongs to task {session.task_id!r}, not {task_id!r}")
    require_run(conn, run_id)
    result = conn.execute(
        signals.insert().values(
            run_id=run_id,
            task_id=task_id,
            session_id=session_id,
            attempt=attempt,
            seq=seq,
            kind=kind,
            payload=redact(dict(payload)),
            accepted=accepted,
            reason=redact(reason),
            consumed=False,
            created_at=now,
        )
    )
    signal_id = inserted_id(result)
    fault_point(conn, "signal.inserted")
    event = {
        "signal_id": signal_id,
        "session_id": session_id,
        "kind": kind,
        "seq": seq,
        "attempt": attempt,
        "accepted": accepted,
        "reason": reason,  # redacted with the event
    }
    append_event_txn(conn, run_id, task_id, "signal.recorded", event, now=now)
    return get_signal(conn, signal_id), True


def signals_for_session(conn: Connection, session_id: int) -> list[SignalRecord]:
    """Signals a session sent, by seq."""
    stmt = select(signals).where(signals.c.session_id == session_id).order_by(signals.c.seq)
    return fetch_all(conn, stmt, SignalRecord)


def signals_for_task(conn: Connection, run_id: str, task_id: str) -> list[SignalRecord]:
    """Signals about a task (accepted or refused), oldest first."""
    stmt = (
        select(signals).where(signals.c.run_id == run_id, signals.c.task_id == task_id).order_by(signals.c.id)
    )
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


def mark_signal_consumed_txn(conn: Connection, signal_id: int, *, now: datetime) -> SignalRecord:
    """Mark a signal acted on, with a `signal.consumed` event; a no-op if it already was."""
    signal = get_signal(conn, signal_id)
    if signal.consumed:
        return signal
    conn.execute(signals.update().where(signals.c.id == signal_id).values(consumed=True))
    payload = {"signal_id": signal_id, "kind": signal.kind}
    append_event_txn(conn, signal.run_id, signal.task_id, "signal.consumed", payload, now=now)
    return get_signal(conn, signal_id)
