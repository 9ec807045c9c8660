"""Finished tasks' worktrees kept for the next tasks of a run: `WorktreePool`.

A new worktree checks every file of the repository out (`git worktree add`: ~20-30 ms for 40 files, ~300 ms for
10,000, and it holds the metadata lock meanwhile); a finished one already has nearly the same files. So a
finished task's worktree is retired instead of removed: its HEAD detached where its branch is (written in
process), every untracked or ignored file thrown away (`clean -ffdx`), and moved aside to `spare-*` in the run's
worktree folder. The next new task takes a spare over: `checkout -f -b <branch> <start>` there (git rewrites only
the files that differ, and any change left in them) and `worktree move` to the task's own path, so everything that
finds a task's worktree by its path finds it as before. Retiring runs after the next dispatch, off the path
between a signal and the next agent's start; taking over is on that path.

What the agent then finds is what `worktree add` gives: the branch at its start, a clean status, nothing
untracked or ignored. Crashes: a spare is checked out to the new branch before it moves, so a task's path never
holds anything but its own branch; spares a stopped pm-agent left (and a branch one was checked out to) are
removed by the next run's `sweep`. Whatever fails falls back to what pm-agent did before (`worktree add`,
`worktree remove`); a `worktree move` git refuses (a repository with submodules) turns the pool off for the run.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import threading
from pathlib import Path

from pm_agent.errors import VcsError
from pm_agent.vcs import _batch
from pm_agent.vcs.git import Git

SPARE_PREFIX = "spare-"


class WorktreePool:
    """At most `limit` retired worktrees in `folder`, each taken over by the next new task's worktree."""

    def __init__(self, git: Git, folder: Path, limit: int) -> None:
        self.git = git
        self.folder = folder
        self.limit = limit
        self.enabled = limit > 0
        self._token = secrets.token_hex(3)  # this pool's spares; any other `spare-*` was left by a stopped one
        self._count = 0
        self._spares: list[Path] = []
        self.taken = 0  # worktrees taken over, for the benchmark and the tests
        self.retired = 0
        self._guard = threading.Lock()  # slots take and retire from worker threads

    def spares(self) -> list[Path]:
        """The spare worktrees free now."""
        with self._guard:
            return list(self._spares)

    def ensure(self, path: Path, branch: str, start: str) -> tuple[Git, bool]:
        """`Git.ensure_worktree`, taking a spare over when the task's worktree and branch are both new."""
        target = path.resolve()
        if self.enabled and not target.exists() and not self.git.branch_exists(branch):
            taken = self._take(target, branch, start)
            if taken is not None:
                return taken, True
        return self.git.ensure_worktree(path, branch, start)

    def _take(self, target: Path, branch: str, start: str) -> Git | None:
        if not self._spares:  # read without the guard: a spare retired just now is taken next time
            return None
        self.git.check_writable(branch, "check out")
        start_sha = self.git.rev_parse(start)
        with self._guard:
            spare = self._spares.pop() if self._spares else None
        if spare is None:
            return None
        made = False
        try:
            with self.git.metadata_lock():
                # Checked out first, moved second: a crash between the two leaves the branch in a spare, which the
                # next run's sweep removes, never a task's path on another commit.
                self.git._at(spare).run("checkout", "--quiet", "--force", "--no-track", "-b", branch, start_sha)
                made = True
                self.git.worktree_move(spare, target)
        except VcsError:
            # The branch did not exist before (`ensure`): whatever made it (a post-checkout hook may fail after
            # the checkout), it goes with the spare, and `worktree add` starts again from nothing.
            _batch.close_batch(spare.resolve())
            self._discard(spare, branch)
            self.enabled = self.enabled and not made  # git refused the move itself: not again this run
            return None
        _batch.moved(spare.resolve(), target)
        self.taken += 1
        return self.git._at(target)

    def retire(self, path: Path, branch: str, *, keep_branch: bool = False, spare: bool = True) -> None:
        """Done with a finished task's worktree: keep it as a spare (or remove it: the pool is full, or not
        `spare`, as when no task is left to take it), and delete its branch unless `keep_branch`. Best effort, as
        removing was: a leftover worktree is harmless and listed by git."""
        at: Path | None = None
        with self._guard:
            if spare and self.enabled and len(self._spares) < self.limit:
                self._count += 1
                at = self.folder / f"{SPARE_PREFIX}{self._token}-{self._count}"
        try:
            if at is not None and self._retire(path, at):
                with self._guard:  # in the pool before its branch goes: a failure there leaks no spare
                    self._spares.append(at)
                    self.retired += 1
            else:
                self.git.worktree_remove(path, force=True)
            if not keep_branch:
                self.git.delete_branch(branch)
        except Exception:  # best effort, as worktree removal always was
            return

    def _retire(self, path: Path, spare: Path) -> bool:
        """Detach, clean and move the worktree at `path` to `spare`; False when it stays at `path`."""
        worktree = self.git._at(path)
        try:
            self._detach(worktree)
            worktree.run("clean", "--quiet", "-ffdx")
        except (VcsError, OSError):
            return False
        try:
            with self.git.metadata_lock():
                self.git.worktree_move(path, spare)
        except VcsError:
            self.enabled = False
            return False
        _batch.moved(path.resolve(), spare.resolve())  # its batch process goes with it, for the next task
        return True

    def _detach(self, worktree: Git) -> None:
        """The worktree's HEAD off its branch, at the same commit, so that the branch can go. In process: the files
        stay as they are (the next task's `checkout --force` sets every one), and a `checkout --detach` for it was
        the dearest git process of a task (~10 ms)."""
        head = worktree.git_path("HEAD")
        sha = self.git.rev_parse(head.read_text(encoding="utf-8").strip().removeprefix("ref: "))
        lock = head.with_name("HEAD.lock")  # git's own lock: a git process working there makes this fail
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            os.write(fd, f"{sha}\n".encode())
        finally:
            os.close(fd)
        lock.replace(head)

    def _discard(self, spare: Path, branch: str) -> None:
        """Remove a spare that could not be taken over, and the branch made in it if any (it holds nothing yet)."""
        self._remove(spare)
        if self.git.branch_exists(branch):
            with contextlib.suppress(Exception):
                self.git.delete_branch(branch)

    def sweep(self) -> int:
        """Remove spares a stopped pm-agent left in the folder (not this pool's); how many there were."""
        try:
            left = [p for p in self.folder.iterdir() if p.name.startswith(SPARE_PREFIX) and self._token not in p.name]
        except OSError:
            return 0
        for spare in left:
            self._remove(spare)
        return len(left)

    def close(self) -> None:
        """Remove every spare (the run's tasks are over for now)."""
        with self._guard:
            spares, self._spares = self._spares, []
        for spare in spares:
            self._remove(spare)

    def _remove(self, spare: Path) -> None:
        _batch.close_batch(spare.resolve())
        try:
            with self.git.metadata_lock():  # forced twice: a spare is pm-agent's own, even when locked
                self.git.run("worktree", "remove", "--force", "--force", str(spare))
        except Exception:  # not a worktree git knows (any more): the folder goes, `worktree prune` forgets it
            shutil.rmtree(spare, ignore_errors=True)
            with contextlib.suppress(Exception):
                self.git.worktree_prune()
