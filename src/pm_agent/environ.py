"""The process environment as a plain mapping, and values derived from it, cached until it changes.

`os.environ` decodes every variable each time it is walked; pm-agent walks it for every git call (the
child's environment) and every payload it stores (the credential values redaction looks for), thousands
of times per run. `current()` checks `os.environ`'s raw (bytes) mapping against the copy it last saw, a
dict comparison in C, so a variable set or removed through `os.environ` is seen by the next call.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, TypeVar

__all__ = ["current", "derived"]

T = TypeVar("T")

_lock = threading.Lock()
_raw: dict[Any, Any] | None = None
_env: Mapping[str, str] = MappingProxyType({})
_derived: dict[Callable[..., Any], tuple[Mapping[str, str], Any]] = {}


def current() -> Mapping[str, str]:
    """`os.environ` as a read-only mapping; the same object until the environment changes."""
    global _raw, _env
    raw = getattr(os.environ, "_data", None)
    if not isinstance(raw, dict):  # not CPython's os._Environ: nothing to compare cheaply
        return MappingProxyType(dict(os.environ))
    with _lock:
        if _raw is None or raw != _raw:
            _raw = dict(raw)
            _env = MappingProxyType(dict(os.environ))
        return _env


def derived(fn: Callable[[Mapping[str, str]], T]) -> T:
    """`fn(current())`, computed once per state of the environment (`fn` must not depend on anything else)."""
    env = current()
    with _lock:
        hit = _derived.get(fn)
        if hit is not None and hit[0] is env:
            return hit[1]  # type: ignore[no-any-return]
    value = fn(env)
    with _lock:
        _derived[fn] = (env, value)
    return value
