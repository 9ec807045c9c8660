"""The store as the signal server uses it: the four calls of the signal desk, on plain sqlite3.

Every agent session starts one signal server process; opening the store through `open_store` cost it the
import of SQLAlchemy and the migration check's engine, most of its CPU, on a machine where that CPU
competes with the agents and the orchestrator. `open_signal_store` opens the file with the pragmas every
connection gets (`_connect.PRAGMAS`) and hands back a `PlainSignalStore`; when the database is not exactly at
this pm-agent's schema (or not in WAL mode, or unreadable) it returns None, and the caller opens the store
the full way, which migrates it or raises the error it always raised. The reads and the write are the same
functions `SqliteStore` calls (`_fast_queries`, `_fast_signals`), in the same transactions.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from pm_agent.store import _fast_queries as fq
from pm_agent.store import _fast_signals as fs
from pm_agent.store._connect import FaultHook
from pm_agent.store._fast import Connections
from pm_agent.store.columns import MIGRATIONS
from pm_agent.store.records import SessionRecord, SignalRecord, TaskRecord

__all__ = ["PlainSignalStore", "SignalCalls", "open_signal_store"]


def _utc_now() -> datetime:
    return datetime.now(UTC)


class SignalCalls:
    """The signal desk's four calls on the store's plain-sqlite3 connections: `PlainSignalStore` and
    `SqliteStore` (through its sessions part) share them, so the server and the orchestrator read and
    record signals with one implementation."""

    _fast: Connections
    _clock: Callable[[], datetime]
    _fault: FaultHook | None

    def session_by_token(self, token: str) -> SessionRecord | None:
        """The session holding `token`, or None."""
        with self._fast.read() as fast:
            return fs.session_by_token(fast, token)

    def signals_for_session(self, session_id: int) -> list[SignalRecord]:
        """Signals a session sent, by seq."""
        with self._fast.read() as fast:
            return fq.signals_for_session(fast, session_id)

    def get_task(self, run_id: str, task_id: str) -> TaskRecord:
        """The task; NotFoundError naming the unknown run or task."""
        with self._fast.read() as fast:
            return fq.get_task(fast, run_id, task_id)

    def record_signal(
        self,
        *,
        run_id: str,
        task_id: str,
        session_id: int | None,
        attempt: int,
        seq: int,
        kind: str,
        payload: Mapping[str, Any],
        accepted: bool,
        reason: str = "",
    ) -> SignalRecord:
        """Store a signal with a `signal.recorded` event, in one write transaction (see `Store.record_signal`)."""
        with self._fast.write() as fast:
            record, _ = fs.record_signal(
                fast,
                run_id=run_id,
                task_id=task_id,
                session_id=session_id,
                attempt=attempt,
                seq=seq,
                kind=kind,
                payload=payload,
                accepted=accepted,
                reason=reason,
                now=self._clock(),
                fault=self._fault,
            )
            return record


class PlainSignalStore(SignalCalls):
    """The signal desk's `SignalStore` on plain sqlite3: sessions by token, their signals, a task, a new signal."""

    def __init__(self, path: Path, *, clock: Callable[[], datetime] | None = None) -> None:
        self._fast = Connections(path)
        self._clock = clock or _utc_now
        self._fault = None

    def close(self) -> None:
        """Release the connection."""
        self._fast.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def _ready(conn: sqlite3.Connection) -> bool:
    """True when the database is in WAL mode and has exactly this pm-agent's migrations, in order."""
    if str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
        return False
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'migrations'").fetchone() is None:
        return False
    applied = tuple(name for (name,) in conn.execute("SELECT name FROM migrations ORDER BY id"))
    return applied == MIGRATIONS


def open_signal_store(path: Path) -> PlainSignalStore | None:
    """A `PlainSignalStore` on the existing store file `path`, or None when it needs the full `open_store`."""
    if not path.is_file():  # sqlite3 would create it
        return None
    store = PlainSignalStore(path)
    try:
        with store._fast.read() as conn:
            ready = _ready(conn)
    except Exception:  # whatever it is, `open_store` reports it as it always did
        ready = False
    if not ready:
        store.close()
        return None
    return store
