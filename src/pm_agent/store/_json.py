"""The store's JSON text (`dump_json`), without SQLAlchemy: `types.JsonText` and the plain-sqlite3 paths share it."""

from __future__ import annotations

import json
from datetime import datetime
from enum import Enum
from pathlib import PurePath
from typing import Any

from pydantic import BaseModel


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
