"""The outbox: actions for an outside system, written in the transaction of the change that causes them.
A hook registered for a database file (`register_hook`, kept in `_outbox_hooks` with the rest of the hook side,
which must not import SQLAlchemy) turns each event into outbox rows; the one event writer
(`_fast_writes._event`, which `events.append_event_txn` calls too) calls `rows_after_event_sqlite` right after its
insert, so the rows commit or roll back with the state change. A row's `key` is unique: writing it again is a
no-op, which makes the hook safe to run on a replayed change. A sender reads the unsent rows in order (`Outbox`),
performs them and marks them sent. This module knows nothing of what the rows mean (GitHub lives in
`pm_agent.github`); with no hook registered (the common case) an event costs one dict lookup more.

`bridge_state` is a small key/value table beside it, for what the sender and the poller must keep across
restarts (issue numbers, the poll's `since` and ETag).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Engine, func, select

from pm_agent.store._outbox_hooks import EventHook as EventHook
from pm_agent.store._outbox_hooks import RowLike as RowLike
from pm_agent.store._outbox_hooks import StoredEvent as StoredEvent
from pm_agent.store._outbox_hooks import register_hook as register_hook
from pm_agent.store._outbox_hooks import rows_after_event_sqlite as rows_after_event_sqlite
from pm_agent.store._outbox_hooks import unregister_hook as unregister_hook
from pm_agent.store.database import read_txn, write_txn, writer
from pm_agent.store.schema import bridge_state, outbox


@dataclass(frozen=True)
class OutboxRecord:
    """A stored outbox row."""

    id: int
    run_id: str
    key: str
    kind: str
    payload: dict[str, Any]
    created_at: datetime
    sent_at: datetime | None
    attempts: int
    last_error: str | None


def _insert(conn: Connection, run_id: str, row: RowLike, now: datetime) -> None:
    # Check, then insert: the write transaction holds the lock, and no dialect-specific upsert is needed.
    if conn.execute(select(outbox.c.id).where(outbox.c.key == row.key)).first() is None:
        values = {"run_id": run_id, "key": row.key, "kind": row.kind, "payload": dict(row.payload),
                  "created_at": now, "sent_at": None, "attempts": 0, "last_error": None}  # fmt: skip
        conn.execute(outbox.insert().values(**values))


def _record(row: Any) -> OutboxRecord:
    return OutboxRecord(**dict(row._mapping))


class Outbox:
    """The outbox and bridge state of one store's database, for the sender and the poller."""

    def __init__(self, engine: Engine, clock: Callable[[], datetime]) -> None:
        self.engine = engine
        self._writer = writer(engine)
        self._clock = clock

    def add(self, run_id: str, rows: Sequence[RowLike]) -> None:
        """Write rows outside any state change (a no-op for keys already there)."""
        with write_txn(self._writer) as conn:
            for row in rows:
                _insert(conn, run_id, row, self._clock())

    def pending(self, run_id: str | None = None, limit: int = 100) -> list[OutboxRecord]:
        """Unsent rows, oldest first."""
        stmt = select(outbox).where(outbox.c.sent_at.is_(None)).order_by(outbox.c.id).limit(limit)
        if run_id is not None:
            stmt = stmt.where(outbox.c.run_id == run_id)
        with read_txn(self.engine) as conn:
            return [_record(r) for r in conn.execute(stmt)]

    def rows(self, run_id: str) -> list[OutboxRecord]:
        """Every row of a run, sent or not, oldest first."""
        stmt = select(outbox).where(outbox.c.run_id == run_id).order_by(outbox.c.id)
        with read_txn(self.engine) as conn:
            return [_record(r) for r in conn.execute(stmt)]

    def begin(self, row_id: int) -> None:
        """Count an attempt before making it: a row with attempts > 0 may already be done on the other side."""
        with write_txn(self._writer) as conn:
            conn.execute(outbox.update().where(outbox.c.id == row_id).values(attempts=outbox.c.attempts + 1))

    def mark_sent(self, row_id: int) -> None:
        """The row's action was performed."""
        with write_txn(self._writer) as conn:
            conn.execute(outbox.update().where(outbox.c.id == row_id).values(sent_at=self._clock(), last_error=None))

    def mark_failed(self, row_id: int, error: str) -> None:
        """The attempt failed; the row stays unsent, with the error."""
        with write_txn(self._writer) as conn:
            conn.execute(outbox.update().where(outbox.c.id == row_id).values(last_error=error[:2000]))

    def states(self, prefix: str) -> dict[str, Any]:
        """Every bridge state value whose key starts with `prefix`."""
        stmt = select(bridge_state.c.key, bridge_state.c.value).where(bridge_state.c.key.startswith(prefix))
        with read_txn(self.engine) as conn:
            return {key: json.loads(value) for key, value in conn.execute(stmt)}

    def summary(self, run_id: str) -> tuple[int, str | None]:
        """(unsent rows, the newest error recorded on an unsent row)."""
        with read_txn(self.engine) as conn:
            unsent = outbox.c.sent_at.is_(None)
            count = conn.execute(
                select(func.count()).select_from(outbox).where(outbox.c.run_id == run_id, unsent)
            ).scalar_one()
            error = conn.execute(
                select(outbox.c.last_error)
                .where(outbox.c.run_id == run_id, unsent, outbox.c.last_error.is_not(None))
                .order_by(outbox.c.id.desc())
                .limit(1)
            ).scalar()
        return int(count), error

    def get_state(self, key: str) -> Any:
        """A bridge state value (JSON), or None."""
        with read_txn(self.engine) as conn:
            value = conn.execute(select(bridge_state.c.value).where(bridge_state.c.key == key)).scalar()
        return None if value is None else json.loads(value)

    def set_state(self, key: str, value: Any) -> None:
        """Set a bridge state value (JSON)."""
        text = json.dumps(value, sort_keys=True)
        with write_txn(self._writer) as conn:
            found = conn.execute(select(bridge_state.c.key).where(bridge_state.c.key == key)).first()
            if found is None:
                conn.execute(bridge_state.insert().values(key=key, value=text, updated_at=self._clock()))
            else:
                stmt = bridge_state.update().where(bridge_state.c.key == key)
                conn.execute(stmt.values(value=text, updated_at=self._clock()))
