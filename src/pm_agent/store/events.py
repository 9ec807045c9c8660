"""The append-only event log: every state change writes one row here in its own transaction."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, select

from pm_agent.redaction import redact
from pm_agent.store._sql import fetch_all, inserted_id
from pm_agent.store.outbox import rows_after_event
from pm_agent.store.records import EventRecord
from pm_agent.store.schema import events


def append_event_txn(
    conn: Connection,
    run_id: str,
    task_id: str | None,
    kind: str,
    payload: dict[str, Any],
    *,
    now: datetime,
) -> int:
    """Append one event inside the caller's transaction, secrets redacted; returns its id."""
    stored = redact(payload)
    result = conn.execute(
        events.insert().values(run_id=run_id, task_id=task_id, kind=kind, payload=stored, created_at=now)
    )
    event_id = inserted_id(result)
    rows_after_event(conn, event_id, run_id, task_id, kind, stored, now)  # the outbox, in this transaction
    return event_id


def list_events(
    conn: Connection, run_id: str, task_id: str | None = None, after_id: int = 0, limit: int | None = None
) -> list[EventRecord]:
    """Events of a run (or of one task), oldest first, with id > after_id."""
    stmt = select(events).where(events.c.run_id == run_id, events.c.id > after_id).order_by(events.c.id)
    if task_id is not None:
        stmt = stmt.where(events.c.task_id == task_id)
    if limit is not None:
        stmt = stmt.limit(limit)
    return fetch_all(conn, stmt, EventRecord)
