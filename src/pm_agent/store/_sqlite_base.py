"""What every part of `SqliteStore` stands on: the engine, its writer, the clock, closing, the schema version."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Self

from sqlalchemy import Engine

from pm_agent.errors import StoreError
from pm_agent.store._fast import Connections
from pm_agent.store.database import FaultHook, writer
from pm_agent.store.migrations import applied_migrations

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


class SqliteStoreBase:
    """A store on one SQLAlchemy engine: readers use `engine`, every write goes through `_writer`."""

    def __init__(self, engine: Engine, *, clock: Clock | None = None, fault: FaultHook | None = None) -> None:
        self.engine = engine
        self._writer = writer(engine, fault=fault)
        self._clock = clock or utc_now
        self._fault = fault
        # The hot statements run on plain sqlite3 connections of their own (see `_fast`), on the same file.
        database = engine.url.database
        if engine.dialect.name != "sqlite" or database in (None, "", ":memory:"):
            raise StoreError(f"the store needs a SQLite file, not {engine.url!r}")
        self._fast = Connections(Path(str(database)))

    # -- lifecycle
    def now(self) -> datetime:
        return self._clock()

    def close(self) -> None:
        self._fast.close()
        self.engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def applied_migrations(self) -> list[str]:
        return applied_migrations(self.engine)

    def schema_version(self) -> int:
        return len(self.applied_migrations())
