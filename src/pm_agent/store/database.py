"""Connections: the SQLite setup every connection gets, write transactions, fault points.

Every connection runs `_connect.PRAGMAS` (`PRAGMA busy_timeout`, `journal_mode=WAL`, `synchronous=FULL` and
`foreign_keys=ON`) in its connect hook (the only SQLite-specific SQL in the store), and SQLAlchemy
emits BEGIN itself (the sqlite3 driver's own transaction handling is switched off). Connections of
the *writer* engine begin with `BEGIN IMMEDIATE`, so a write transaction takes the write lock up
front and waits up to the busy timeout for it, instead of failing half-way when a reader tries to
upgrade; readers use plain `BEGIN` and see one consistent snapshot (WAL lets them run beside a
writer, in this process or another).

Writers of one database file in one process take `write_lock(path)` before BEGIN IMMEDIATE. SQLite's
own wait for its write lock sleeps 1, 2, 5, 10, 15, 20, 25 ms ... between tries, so with the loop, its
slots' monitors and its worker threads all writing, a transaction waited 10-25 ms behind another that
took 4 (its fsync); queued on a Python lock a writer starts the moment the other ends. Other processes
(the signal server, `pm-agent answer`) still meet SQLite's own wait.

Fault points: a write transaction can call `fault_point(conn, "name")` between its steps. A hook
given to `writer(engine, fault=...)` runs there; crash tests make it raise, to prove that nothing of
an interrupted transaction is left.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.exc import SQLAlchemyError

from pm_agent.errors import StoreError
from pm_agent.store._connect import BUSY_TIMEOUT_MS as BUSY_TIMEOUT_MS
from pm_agent.store._connect import FaultHook as FaultHook
from pm_agent.store._connect import apply_pragmas, write_lock

WRITE_OPTION = "pm_agent_write"
FAULT_OPTION = "pm_agent_fault"


def _on_connect(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.isolation_level = None  # SQLAlchemy's begin hook emits BEGIN, not sqlite3
    cursor = dbapi_connection.cursor()
    try:
        apply_pragmas(cursor.execute)
        mode = cursor.execute("PRAGMA journal_mode").fetchone()[0]
    finally:
        cursor.close()
    if str(mode).lower() != "wal":
        raise StoreError(f"SQLite refused WAL mode (journal_mode is {mode!r})")


def _on_begin(conn: Connection) -> None:
    write = conn.get_execution_options().get(WRITE_OPTION, False)
    conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def sqlite_engine(path: Path) -> Engine:
    """An engine on the SQLite file `path` (created with its folder if missing), set up as above."""
    path.parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(
        f"sqlite:///{path}",
        connect_args={"check_same_thread": False, "timeout": BUSY_TIMEOUT_MS / 1000},
    )
    event.listen(engine, "connect", _on_connect)
    event.listen(engine, "begin", _on_begin)
    return engine


def writer(engine: Engine, *, fault: FaultHook | None = None) -> Engine:
    """The same engine and pool, but its transactions are write transactions (BEGIN IMMEDIATE)."""
    return engine.execution_options(**{WRITE_OPTION: True, FAULT_OPTION: fault})


def fault_hook(conn: Connection) -> FaultHook | None:
    """The fault hook of this write transaction's engine, if any (for steps run on its `raw` connection)."""
    hook: FaultHook | None = conn.get_execution_options().get(FAULT_OPTION)
    return hook


def fault_point(conn: Connection, name: str) -> None:
    """Run the fault hook, if any, at the named point of a write transaction."""
    hook = fault_hook(conn)
    if hook is not None:
        hook(name)


@contextmanager
def write_txn(engine: Engine) -> Iterator[Connection]:
    """One write transaction: committed when the block ends, rolled back whole if anything raises.

    Database errors (a broken constraint, a lock held past the busy timeout) become StoreError;
    other exceptions propagate unchanged, after the rollback.
    """
    try:
        with write_lock(str(engine.url.database)), engine.begin() as conn:
            yield conn
    except SQLAlchemyError as exc:
        raise StoreError(f"store write failed: {_reason(exc)}") from exc


@contextmanager
def read_txn(engine: Engine) -> Iterator[Connection]:
    """One read transaction: a consistent snapshot, never writes."""
    try:
        with engine.connect() as conn:
            yield conn
    except SQLAlchemyError as exc:
        raise StoreError(f"store read failed: {_reason(exc)}") from exc


def _reason(exc: SQLAlchemyError) -> str:
    orig = getattr(exc, "orig", None)
    return str(orig) if orig is not None else str(exc).splitlines()[0]
