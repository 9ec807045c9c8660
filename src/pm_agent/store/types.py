"""Column types that behave the same on SQLite and PostgreSQL.

`JsonText` keeps JSON as TEXT (seed 004's "readable file" wish: `sqlite3 state.db` shows it as
written). `UtcDateTime` always hands back timezone-aware UTC datetimes, even from SQLite, which
stores them as naive text.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from enum import Enum
from pathlib import PurePath
from typing import Any

from pydantic import BaseModel
from sqlalchemy import DateTime, Dialect, Text
from sqlalchemy.types import TypeDecorator


def json_default(value: object) -> Any:
    """`json.dumps` fallback for the values the store is handed: models, enums, paths, datetimes."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raise TypeError(f"cannot store a {type(value).__name__} as JSON")


def dump_json(value: object) -> str:
    """Compact, key-sorted JSON text for a value."""
    return json.dumps(value, default=json_default, sort_keys=True, separators=(",", ":"))


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
