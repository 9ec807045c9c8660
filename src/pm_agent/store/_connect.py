"""What every connection to the store gets, whichever path opens it (SQLAlchemy's engine in `database`,
plain sqlite3 in `_fast`), and this process's write lock on each file (`write_lock`, see `database`); no
SQLAlchemy import, so the signal server can open the file cheaply."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from pm_agent.errors import StoreError

BUSY_TIMEOUT_MS = 10_000

FaultHook = Callable[[str], None]

PRAGMAS = (
    f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}",  # first: switching to WAL may wait for a lock
    "PRAGMA journal_mode = WAL",
    "PRAGMA synchronous = FULL",
    "PRAGMA foreign_keys = ON",
)

_LOCKED_RETRY_S = 0.02


def apply_pragmas(execute: Callable[[str], object], *, limit_s: float = BUSY_TIMEOUT_MS / 1000) -> None:
    """Run `PRAGMAS` on a new connection, each retried while SQLite says the database is locked (up to `limit_s`).

    The busy timeout does not cover every case: a connection switching a new file to WAL while another does
    the same can get SQLITE_BUSY at once (SQLite's deadlock avoidance skips the busy handler), and four
    processes opening a fresh store together sometimes saw one fail so."""
    deadline = time.monotonic() + limit_s
    for pragma in PRAGMAS:
        while True:
            try:
                execute(pragma)
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() >= deadline:
                    raise
                time.sleep(_LOCKED_RETRY_S)


_write_locks: dict[str, threading.RLock] = {}
_write_locks_guard = threading.Lock()


def _lock_of(database: str | Path) -> threading.RLock:
    key = str(database)
    lock = _write_locks.get(key)
    if lock is None:
        with _write_locks_guard:
            lock = _write_locks.setdefault(str(Path(key).resolve()), threading.RLock())
            _write_locks[key] = lock
    return lock


@contextmanager
def write_lock(database: str | Path) -> Iterator[None]:
    """Hold this process's write lock on `database` (one per file). Waits as long as SQLite would, then fails
    as SQLite would. Re-entrant, so that a nested write in one thread meets SQLite's answer, as before."""
    lock = _lock_of(database)
    if not lock.acquire(timeout=BUSY_TIMEOUT_MS / 1000):
        raise StoreError(f"store write failed: database is locked (another writer held it {BUSY_TIMEOUT_MS} ms)")
    try:
        yield
    finally:
        lock.release()
