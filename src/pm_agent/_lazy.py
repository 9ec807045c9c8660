"""Lazy package exports (PEP 562): `from pm_agent.store import open_store` imports only what it names.

A package `__init__` that imported every export eagerly made importing any of its submodules import
the world: the signal server (one process per agent session) imported `pm_agent.store.records` and
paid for SQLAlchemy, the plan parser and the default workflow before its first answer. Such an
`__init__` keeps its literal `__all__` and `TYPE_CHECKING` imports (what mypy reads) and takes its
`__getattr__` and `__dir__` from `lazy_exports`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    namespace: dict[str, Any], where: Mapping[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for the package whose `globals()` is `namespace`; `where` maps each
    module to the names it exports, separated by spaces."""
    package = str(namespace["__name__"])
    home = {name: module for module, names in where.items() for name in names.split()}

    def __getattr__(name: str) -> object:
        module = home.get(name)
        if module is None:
            # AttributeError (not ImportError) so `from package import submodule` still finds submodules.
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value  # later lookups are plain attribute reads
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *home})

    return __getattr__, __dir__
