"""What every connection to the store gets, whichever path opens it (SQLAlchemy's engine in `database`,
plain sqlite3 in `_fast`); no SQLAlchemy import, so the signal server can open the file cheaply."""

from __future__ import annotations

from collections.abc import Callable

BUSY_TIMEOUT_MS = 10_000

FaultHook = Callable[[str], None]

PRAGMAS = (
    f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}",  # first: switching to WAL may wait for a lock
    "PRAGMA journal_mode = WAL",
    "PRAGMA synchronous = FULL",
    "PRAGMA foreign_keys = ON",
)
