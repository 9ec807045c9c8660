"""store/columns.py is a plain-text copy of part of schema.py: it must say exactly what the Tables say."""

from __future__ import annotations

from sqlalchemy import Boolean

from pm_agent.store import schema
from pm_agent.store._fast import Columns
from pm_agent.store.columns import TABLES, columns_of
from pm_agent.store.types import JsonText, UtcDateTime


def _kind(column: object) -> str:
    kind = getattr(column, "type", None)
    if isinstance(kind, JsonText):
        return "json"
    if isinstance(kind, UtcDateTime):
        return "time"
    return "bool" if isinstance(kind, Boolean) else ""


def test_every_listed_table_matches_its_schema_table_column_for_column() -> None:
    assert set(TABLES) == {"tasks", "sessions", "signals", "events", "gate_results", "commits", "transitions"}
    for name in TABLES:
        table = schema.metadata.tables[name]
        assert columns_of(name) == [(c.name, _kind(c)) for c in table.columns], name


def test_columns_select_every_column_and_encode_the_typed_ones() -> None:
    signals = Columns("signals")
    assert signals.select == f"SELECT {', '.join(c.name for c in schema.signals.columns)} FROM signals"
    assert sorted(signals.encoders) == ["accepted", "consumed", "created_at", "payload"]
    assert signals.encode({"accepted": True, "payload": {"b": 1, "a": [2]}, "kind": "complete"}) == {
        "accepted": 1,
        "payload": '{"a":[2],"b":1}',
        "kind": "complete",
    }
