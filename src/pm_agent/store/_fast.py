"""Plain `sqlite3` for the store's hot statements: the same tables, values and records as SQLAlchemy's.

The PM loop reads a task, its sessions, signals and events, and appends events and transcript lines,
hundreds of times per task. Through SQLAlchemy Core each statement costs about 0.3-0.5 ms of CPU (building
the statement, its cache key, the pool, the begin hook); here a statement is a cached SQL string on a
connection of the calling thread, about a tenth of that. So these statements (`_fast_queries`,
`_fast_writes`) are the store's only implementation of what they do: `SqliteStore` calls them on its own
connections, and the colder SQLAlchemy functions (`runs`, `sessions`, `outcomes`, `planedit`) call them on
the DBAPI connection under their own transaction (`raw`), so a task, an event or a session is read and
written by one function whichever path asks.

The columns are read and written exactly as `types.JsonText` and `types.UtcDateTime` (and SQLAlchemy's
SQLite dialect) do, so a row written here reads back the same through SQLAlchemy and the other way round;
`schema.py` stays the one description of the tables; the columns come from its plain-text copy in `columns.py`,
so this module and its callers do not import SQLAlchemy (the signal server, one process per agent session,
uses them). Connections get the pragmas of `_connect.PRAGMAS`; writes take `BEGIN IMMEDIATE`.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from pm_agent.errors import NotFoundError, StoreError
from pm_agent.store._connect import BUSY_TIMEOUT_MS, apply_pragmas, write_lock
from pm_agent.store._json import dump_json
from pm_agent.store.columns import columns_of

if TYPE_CHECKING:
    from sqlalchemy import Connection

R = TypeVar("R", bound=BaseModel)
Decoder = Callable[[Any], Any]

_SQLITE_DATETIME = "%Y-%m-%d %H:%M:%S.%f"  # SQLAlchemy's SQLite storage format for DateTime


def _json(value: Any) -> Any:
    return None if value is None else json.loads(value)


def _datetime(value: Any) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value).replace(tzinfo=UTC)


def _bool(value: Any) -> bool | None:
    return None if value is None else bool(value)


def db_time(value: datetime) -> str:
    """A timezone-aware time as its column holds it (naive UTC text), like `UtcDateTime`."""
    if value.tzinfo is None:
        raise StoreError(f"naive datetime {value!r}: the store only takes timezone-aware times")
    return value.astimezone(UTC).strftime(_SQLITE_DATETIME)


def db_json(value: Any) -> str | None:
    """A JSON column's text, like `JsonText`."""
    return None if value is None else dump_json(value)


def _db_time_or_none(value: Any) -> str | None:
    return None if value is None else db_time(value)


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(bool(value))


class Columns:
    """One table's columns: the SELECT list and how each value is read back."""

    def __init__(self, table: str) -> None:
        self.table = table
        columns = columns_of(table)
        self.names = [name for name, _ in columns]
        self.select = f"SELECT {', '.join(self.names)} FROM {table}"
        decoders: list[tuple[int, Decoder]] = []
        self.encoders: dict[str, Decoder] = {}
        for i, (name, kind) in enumerate(columns):
            if kind == "json":
                decoders.append((i, _json))
                self.encoders[name] = db_json
            elif kind == "time":
                decoders.append((i, _datetime))
                self.encoders[name] = _db_time_or_none
            elif kind == "bool":
                decoders.append((i, _bool))
                self.encoders[name] = _int_or_none
        self.decoders = decoders

    def encode(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """Column values as the table stores them (JSON text, naive UTC text, 0/1)."""
        encoders = self.encoders
        return {name: (encoders[name](v) if name in encoders else v) for name, v in values.items()}

    def record(self, row: Sequence[Any], model: type[R]) -> R:
        """One row as `model`, validated like `fetch_one` does."""
        values = list(row)
        for i, decode in self.decoders:
            values[i] = decode(values[i])
        return model.model_validate(dict(zip(self.names, values, strict=True)))


class Connections:
    """One sqlite3 connection per thread on one database file, closed together."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()

    def get(self) -> sqlite3.Connection:
        """This thread's connection (opened, with the store's pragmas, on first use)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
            )
            apply_pragmas(conn.execute)
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    def close(self) -> None:
        """Close every connection (the store is closing)."""
        with self._lock:
            conns, self._all = self._all, []
        for conn in conns:
            conn.close()
        self._local = threading.local()

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """One read transaction (one snapshot); database errors become StoreError."""
        conn = self.get()
        try:
            conn.execute("BEGIN")
            try:
                yield conn
            finally:
                conn.execute("ROLLBACK")
        except sqlite3.Error as exc:
            raise StoreError(f"store read failed: {exc}") from exc

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (BEGIN IMMEDIATE), committed at the end, rolled back whole on any error."""
        conn = self.get()
        with write_lock(self.path):  # see store/database.py: in-process writers queue here, not in SQLite
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise StoreError(f"store write failed: {exc}") from exc
            try:
                yield conn
            except BaseException as exc:
                conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise StoreError(f"store write failed: {exc}") from exc
                raise
            try:
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise StoreError(f"store write failed: {exc}") from exc


def raw(conn: Connection) -> sqlite3.Connection:
    """The sqlite3 connection under a SQLAlchemy one: statements on it run inside that connection's transaction."""
    driver = conn.connection.driver_connection
    if not isinstance(driver, sqlite3.Connection):
        raise StoreError(f"the store runs on sqlite3, not on {type(driver).__name__}")
    return driver


def require_run(conn: sqlite3.Connection, run_id: str) -> None:
    """NotFoundError if the run is unknown."""
    if conn.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is None:
        raise NotFoundError(f"unknown run {run_id!r}")


def require_task(conn: sqlite3.Connection, run_id: str, task_id: str) -> None:
    """NotFoundError naming the run or the task if either is unknown."""
    found = conn.execute("SELECT 1 FROM tasks WHERE run_id = ? AND task_id = ?", (run_id, task_id)).fetchone()
    if found is None:
        require_run(conn, run_id)
        raise NotFoundError(f"unknown task {task_id!r} in run {run_id!r}")


def insert(conn: sqlite3.Connection, table: str, values: dict[str, Any]) -> int:
    """INSERT one row of already encoded values; its integer primary key."""
    names = ", ".join(values)
    marks = ", ".join("?" * len(values))
    cursor = conn.execute(f"INSERT INTO {table} ({names}) VALUES ({marks})", tuple(values.values()))
    if cursor.lastrowid is None:
        raise StoreError("the database did not report the new row's id")
    return cursor.lastrowid
