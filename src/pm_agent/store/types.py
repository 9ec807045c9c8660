"""Column types that behave the same on SQLite and PostgreSQL.

`JsonText` keeps JSON as TEXT (seed 004's "readable file" wish: `sqlite3 state.db` shows it as
written). `UtcDateTime` always hands back timezone-aware UTC datetimes, even from SQLite, which
stores them as naive text.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime, Dialect, Text
from sqlalchemy.types import TypeDecorator

from pm_agent.store._json import dump_json, json_default

__all__ = ["JsonText", "UtcDateTime", "dump_json", "json_default"]


class JsonText(TypeDecorator[Any]):
    """Any JSON value, stored as TEXT; None is stored as SQL NULL."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> str | None:
        return None if value is None else dump_json(value)

    def process_result_value(self, value: Any, dialect: Dialect) -> Any:
        return None if value is None else json.loads(value)


class UtcDateTime(TypeDecorator[datetime]):
    """A timestamp that must be timezone-aware going in and is UTC-aware coming out."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value!r}: the store only takes timezone-aware times")
        return value.astimezone(UTC).replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
