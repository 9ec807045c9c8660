"""Refs read from the repository's files, as `git for-each-ref` lists them, without a git process.

The checkout guard reads pm-agent's refs after every agent session; `for-each-ref` for it was one git process a
task on the path from a signal to the next dispatch. The files backend is simple to read: `packed-refs` (one
`<object> <name>` line per ref, `^<object>` lines peel the one above) and loose files under `refs/`, a loose
ref overriding a packed one. Anything else (the reftable backend, a symbolic ref, a file that is not one object
id) returns None, and the caller asks git."""

from __future__ import annotations

import os
import re
from pathlib import Path

_OBJECT_ID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


def read_refs(common_dir: Path, prefixes: tuple[str, ...]) -> dict[str, str] | None:
    """Full ref name -> object id for the refs whose names start with one of `prefixes` (each ending in `/`);
    None when only git can tell."""
    if not all(p.startswith("refs/") and p.endswith("/") for p in prefixes) or (common_dir / "reftable").exists():
        return None
    found = _packed(common_dir / "packed-refs", prefixes)
    if found is None:
        return None
    for prefix in prefixes:
        top = common_dir / prefix
        for folder, _, files in os.walk(top):
            for name in files:
                if name.endswith(".lock"):  # a ref being written: git renames it into place when done
                    continue
                path = Path(folder) / name
                try:
                    value = path.read_text(encoding="ascii").strip()
                except (OSError, UnicodeDecodeError):
                    return None
                if not _OBJECT_ID.fullmatch(value):
                    return None
                found[path.relative_to(common_dir).as_posix()] = value
    return found


def _packed(path: Path, prefixes: tuple[str, ...]) -> dict[str, str] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError):
        return None
    found: dict[str, str] = {}
    for line in text.splitlines():
        if not line or line[0] in "#^":
            continue
        value, _, name = line.partition(" ")
        if not _OBJECT_ID.fullmatch(value) or not name:
            return None
        if name.startswith(prefixes):
            found[name] = value
    return found
