"""One pm-agent run at a time per repository: an OS file lock in `.pm-agent/run.lock`.

    with run_lock(repo, "run"):
        ...  # start or resume, drive to the end

`flock` belongs to the open file, so the kernel drops it when the process ends however it ends
(`kill -9` included): a stale lock file is harmless, it is only locked while its holder lives. The
file also holds the holder's pid and command, so a refused second process can say who holds it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from pm_agent.errors import InputError
from pm_agent.statefile import default_store_path  # not pm_agent.store: `status` reads the lock, cheaply

__all__ = ["LOCK_FILE", "lock_holder", "run_lock"]

LOCK_FILE = "run.lock"


def _lock_path(repo: Path) -> Path:
    return default_store_path(repo).parent / LOCK_FILE


def lock_holder(repo: Path) -> dict[str, object] | None:
    """Who holds the run lock of `repo` (pid, command, since), or None when no live process does."""
    path = _lock_path(repo)
    if not path.exists():
        return None
    fd = os.open(path, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_holder(path)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _read_holder(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        data = {}
    return data if isinstance(data, dict) else {}


@contextlib.contextmanager
def run_lock(repo: Path, command: str) -> Iterator[None]:
    """Hold the repository's run lock for the block; InputError (exit 2) naming the holder when taken."""
    path = _lock_path(repo)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise _taken(repo, path) from None
        holder = {
            "pid": os.getpid(),
            "command": command,
            "argv": sys.argv,
            "since": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(holder).encode("utf-8"), 0)
        yield
    finally:
        os.close(fd)  # releases the lock; the file stays, unlocked, for the next run


def _taken(repo: Path, path: Path) -> InputError:
    holder = _read_holder(path)
    pid = holder.get("pid", "unknown")
    command = holder.get("command", "run")
    since = f" since {holder['since']}" if holder.get("since") else ""
    return InputError(
        f"another pm-agent {command} is working on this repository (pid {pid}{since}); "
        f"watch it with `pm-agent status -C {repo}`, and start or resume a run once it has ended",
        path=path,
    )
