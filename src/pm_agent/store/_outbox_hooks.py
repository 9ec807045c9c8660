"""The outbox's event hooks (see `outbox`): which database file has a hook, and the rows it writes for each
event, inside the event's own transaction. Apart from `outbox` (its SQLAlchemy side) because the one event
writer (`_fast_writes._event`) calls `rows_after_event_sqlite` on every event, and the signal server, which
writes events, must not import SQLAlchemy.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from pm_agent.store._fast import db_json, db_time


@dataclass(frozen=True)
class StoredEvent:
    """An event as it was just written (payload redacted), handed to the hook."""

    id: int
    run_id: str
    task_id: str | None
    kind: str
    payload: Mapping[str, Any]


class RowLike(Protocol):
    """One action to perform later; `key` makes writing it twice a no-op."""

    @property
    def key(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def payload(self) -> Mapping[str, Any]: ...


EventHook = Callable[[StoredEvent], Sequence[RowLike]]

_hooks: dict[str, EventHook] = {}
_hooks_lock = threading.Lock()


def _key(path: Path | str) -> str:
    return os.path.realpath(path)


def register_hook(db_path: Path | str, hook: EventHook) -> None:
    """From now on, every event written to the database at `db_path` (by this process) also writes `hook`'s rows."""
    with _hooks_lock:
        _hooks[_key(db_path)] = hook


def unregister_hook(db_path: Path | str) -> None:
    """Stop writing outbox rows for the database at `db_path` (a no-op if none was registered)."""
    with _hooks_lock:
        _hooks.pop(_key(db_path), None)


def rows_after_event_sqlite(
    conn: sqlite3.Connection, event_id: int, run_id: str, task_id: str | None, kind: str, payload: Any, now: datetime
) -> None:
    """Inside the plain-sqlite3 writer's transaction: the hook's rows for the event just inserted."""
    if not _hooks:
        return
    # The path of a sqlite3 connection is only known to SQLite itself; asked only when some hook exists.
    path = conn.execute("PRAGMA database_list").fetchone()[2]
    hook = _hooks.get(_key(path)) if path else None
    if hook is None:
        return
    for row in hook(StoredEvent(event_id, run_id, task_id, kind, payload)):
        conn.execute(
            "INSERT OR IGNORE INTO outbox (run_id, key, kind, payload, created_at, sent_at, attempts, last_error)"
            " VALUES (?, ?, ?, ?, ?, NULL, 0, NULL)",
            (run_id, row.key, row.kind, db_json(dict(row.payload)), db_time(now)),
        )
