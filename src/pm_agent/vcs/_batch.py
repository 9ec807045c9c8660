"""One long-lived `git cat-file` per worktree, to resolve revisions and read objects without starting git each time.

pm-agent asks git "which commit is HEAD / this branch" some fifteen times per task; each answer used to be a
`git rev-parse` process (about 0.5 ms of pm-agent's CPU to start, and a few ms of git's). `cat-file
--batch-check` reads one revision a line and answers `<sha> <type> <size>`, resolving each line afresh:
a ref moved by another process, a new commit or a repacked branch is seen at the next line, so its answers
are what `rev-parse` would say at that moment. With git 2.36 or later the process is `--batch-command`, which
also gives an object's content (`contents`: the trees `vcs/_objects.py` edits, a commit being picked); before,
it is `--batch-check` and `contents` raises OSError (the caller asks git as before).

The processes live in a small registry keyed by worktree path, each behind a lock (slots ask from threads),
at most `MAX_OPEN` at once (the least recently used is closed), closed with the worktree they run in
(`close_batch`) and at exit. A process found git's repository when it started: if the worktree's `.git`
is no longer the one it started with (the folder removed and a worktree added again at the same path,
by pm-agent or anyone), a new process takes over. Anything unusual (a revision with a newline, a process
that died, an answer that does not parse) falls back to the caller's plain `git rev-parse`.
"""

from __future__ import annotations

import atexit
import re
import stat
import subprocess
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path

MAX_OPEN = 12  # a run needs one per slot's worktree and the repository; tests make hundreds of repositories
_TYPES = frozenset({"commit", "tree", "blob", "tag"})


class CatFile:
    """A `git cat-file` batch process on one worktree; `resolve` answers one revision at a time, `contents` reads one
    object (with `--batch-command`)."""

    def __init__(self, path: Path, env: Mapping[str, str], stamp: tuple[int, int]) -> None:
        self.stamp = stamp
        self.commands = _batch_command(env)
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
            ["git", "-c", "core.quotepath=off", "cat-file", "--batch-command" if self.commands else "--batch-check"],
            cwd=path,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=dict(env),
        )

    def _ask(self, command: str, revision: str) -> tuple[bytes, subprocess.Popen[bytes]]:
        """Send one request (under the lock) and read its header line."""
        proc = self._proc
        if proc is None or proc.stdin is None or proc.stdout is None:
            raise OSError("cat-file batch is closed")
        line = f"{command} {revision}\n" if self.commands else f"{revision}\n"
        proc.stdin.write(line.encode("utf-8", "surrogateescape"))
        proc.stdin.flush()
        head = proc.stdout.readline()
        if not head:
            raise OSError("cat-file batch ended")
        return head, proc

    def resolve(self, revision: str) -> tuple[str, str] | None:
        """(sha, type) of the object `revision` names; None when it names none; OSError when the process broke."""
        with self._lock:
            head, _ = self._ask("info", revision)
        line = head.decode("utf-8", "replace")
        parts = line.split()
        if len(parts) == 3 and parts[1] in _TYPES and len(parts[0]) in (40, 64):
            return parts[0], parts[1]
        if line.rstrip("\n").endswith((" missing", " ambiguous")):
            return None
        raise OSError(f"cat-file batch answered {line!r}")

    def contents(self, sha: str) -> tuple[str, bytes] | None:
        """(type, content) of the object `sha` names; None when there is none; OSError without `--batch-command`."""
        if not self.commands:
            raise OSError("this git has no cat-file --batch-command")
        with self._lock:
            head, proc = self._ask("contents", sha)
            parts = head.split()
            if len(parts) != 3 or parts[1].decode("ascii", "replace") not in _TYPES or not parts[2].isdigit():
                if head.rstrip(b"\n").endswith((b" missing", b" ambiguous")):
                    return None
                raise OSError(f"cat-file batch answered {head!r}")
            size = int(parts[2])
            assert proc.stdout is not None
            data = proc.stdout.read(size + 1)  # the content and its closing newline
        if len(data) != size + 1:
            raise OSError("cat-file batch ended")
        return parts[1].decode("ascii"), data[:size]

    def close(self) -> None:
        """End the process (its stdin closed, so it exits by itself; killed if it lingers)."""
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


_OPEN: OrderedDict[Path, CatFile] = OrderedDict()
_GUARD = threading.Lock()
_COMMANDS: list[bool] = []  # whether this git has `cat-file --batch-command` (2.36), asked once


def _batch_command(env: Mapping[str, str]) -> bool:
    """Whether the git on PATH takes `cat-file --batch-command` (git 2.36 and later)."""
    if not _COMMANDS:
        try:
            out = subprocess.run(["git", "version"], capture_output=True, text=True, env=dict(env), timeout=30).stdout
        except (OSError, subprocess.SubprocessError):
            out = ""
        found = re.match(r"git version (\d+)\.(\d+)", out)
        _COMMANDS.append(found is not None and (int(found[1]), int(found[2])) >= (2, 36))
    return _COMMANDS[0]


def _stamp(path: Path) -> tuple[int, int]:
    """Which `.git` the worktree has: its inode, and for a worktree's `.git` file its change time too (a
    directory's change time moves with every file git writes in it; a file's only when it is made anew)."""
    info = (path / ".git").stat()  # OSError when the worktree is gone: the caller falls back
    return info.st_ino, (info.st_ctime_ns if stat.S_ISREG(info.st_mode) else 0)


def _batch(path: Path, env: Callable[[], Mapping[str, str]]) -> CatFile:
    """The worktree's batch process, started (or started again for a new `.git`) when needed."""
    stamp = _stamp(path)
    stale: list[CatFile] = []
    with _GUARD:
        batch = _OPEN.get(path)
        if batch is not None and batch.stamp != stamp:
            stale.append(batch)
            batch = None
        if batch is None:
            batch = _OPEN[path] = CatFile(path, env(), stamp)
        _OPEN.move_to_end(path)
        if len(_OPEN) > MAX_OPEN:
            stale.append(_OPEN.popitem(last=False)[1])
    for old in stale:
        old.close()
    return batch


def resolve(path: Path, revision: str, env: Callable[[], Mapping[str, str]]) -> tuple[str, str] | None:
    """(sha, type) of `revision` in the worktree at `path`, through its batch process; OSError if that fails."""
    if "\n" in revision or not revision:
        raise OSError("not a revision the batch can take")
    batch = _batch(path, env)
    try:
        return batch.resolve(revision)
    except OSError:
        close_batch(path)  # the next question starts a fresh process
        raise


def contents(path: Path, sha: str, env: Callable[[], Mapping[str, str]]) -> tuple[str, bytes] | None:
    """(type, content) of the object `sha` names, through the worktree's batch process; OSError if it cannot."""
    if "\n" in sha or not sha:
        raise OSError("not an object the batch can take")
    batch = _batch(path, env)
    if not batch.commands:
        raise OSError("this git has no cat-file --batch-command")
    try:
        return batch.contents(sha)
    except OSError:
        close_batch(path)
        raise


# Where a worktree keeps a git file (`rev-parse --git-path`) never changes while its `.git` stays the same one.
_GIT_PATHS: dict[tuple[Path, str], tuple[tuple[int, int], Path]] = {}


def known_git_path(path: Path, name: str) -> Path | None:
    """A git path asked before for this worktree with its current `.git`, or None."""
    try:
        stamp = _stamp(path)
    except OSError:
        return None
    found = _GIT_PATHS.get((path, name))
    return found[1] if found is not None and found[0] == stamp else None


def remember_git_path(path: Path, name: str, where: Path) -> None:
    """Keep what git answered for `name` in this worktree (nothing when the worktree has no `.git` here)."""
    try:
        _GIT_PATHS[(path, name)] = (_stamp(path), where)
    except OSError:
        return


def close_batch(path: Path) -> None:
    """Close the batch process of the worktree at `path`, if any (before the worktree goes away)."""
    with _GUARD:
        batch = _OPEN.pop(path, None)
    if batch is not None:
        batch.close()


def moved(path: Path, target: Path) -> None:
    """The worktree at `path` was renamed to `target`: its batch process serves it there. A rename keeps the
    folder (the process's working directory) and its `.git`; the repository the process found is the same one."""
    with _GUARD:
        batch = _OPEN.pop(path, None)
        if batch is None:
            return
        stale = _OPEN.pop(target, None)
        _OPEN[target] = batch
    if stale is not None:
        stale.close()


def close_all() -> None:
    """Close every batch process (at exit)."""
    with _GUARD:
        batches = list(_OPEN.values())
        _OPEN.clear()
    for batch in batches:
        batch.close()


atexit.register(close_all)
