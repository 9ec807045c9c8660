"""The public surface: __all__ resolves, and SqliteStore implements every Store method as declared."""

from __future__ import annotations

import inspect

import pm_agent.store as store_pkg
from pm_agent.store import SqliteStore, Store


def test_all_names_exist() -> None:
    missing = [name for name in store_pkg.__all__ if not hasattr(store_pkg, name)]
    assert missing == []


def test_sqlite_store_implements_the_protocol_signatures() -> None:
    declared = {
        name: member for name, member in vars(Store).items() if callable(member) and not name.startswith("_")
    }
    assert len(declared) > 40
    for name, member in declared.items():
        implemented = getattr(SqliteStore, name, None)
        assert implemented is not None, name
        want = [(p.name, p.kind, p.default) for p in inspect.signature(member).parameters.values()]
        got = [(p.name, p.kind, p.default) for p in inspect.signature(implemented).parameters.values()]
        assert got == want, name
