"""The plan's files as the loop watches them: a cheap stamp each pass (`fingerprint`), a hash when it moves
(`content_sha`). A plan is one file (Markdown, or Task Master's tasks.json) or a folder of Markdown files
(`.taskmaster/`: its tasks.json)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from pm_agent.plan import taskmaster
from pm_agent.plan.folder import markdown_files

__all__ = ["content_sha", "fingerprint", "newest"]


def _files(path: Path) -> list[Path]:
    if path.is_dir() and taskmaster.is_task_list(path):
        return [path / "tasks" / "tasks.json"]
    return markdown_files(path) if path.is_dir() else [path]


def fingerprint(path: Path) -> tuple[tuple[str, int, int], ...]:
    """Name, size and mtime of each plan file: cheap, and it moves whenever an editor saves."""
    out = []
    for file in _files(path):
        try:
            st = file.stat()
        except OSError:
            continue
        out.append((str(file), st.st_size, st.st_mtime_ns))
    return tuple(out)


def newest(stamp: tuple[tuple[str, int, int], ...]) -> float:
    """When the newest file of a `fingerprint` was written (epoch seconds; 0 for none)."""
    return max((mtime for _, _, mtime in stamp), default=0) / 1e9


def content_sha(path: Path) -> str:
    """The sha of the plan's text (every file of a folder, with its name)."""
    digest = hashlib.sha256()
    for file in _files(path):
        digest.update(str(file).encode())
        try:
            digest.update(file.read_bytes())
        except OSError:
            digest.update(b"\0missing")
    return digest.hexdigest()[:16]
