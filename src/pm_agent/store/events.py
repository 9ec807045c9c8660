"""The append-only event log: every state change writes one row here in its own transaction.

Every event row, whichever path writes it, is written by `_fast_writes._event`: the SQLAlchemy
functions reach it through `append_event_txn`, on the DBAPI connection of their transaction.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from pm_agent.store._fast import raw
from pm_agent.store._fast_writes import _event


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
    return _event(raw(conn), run_id, task_id, kind, payload, now)
