"""Slots: N agent sessions at once (default 3), fed from whatever decides what is ready next.

    pool = SlotPool(3, next_ready=scheduler_pick, work=run_task, worktrees=Worktrees(repo, root, "pm/p/work"),
                    branch_for=lambda task: task_branch(plan_id, task.id, task.title))
    runs = await pool.run()

A free slot asks `next_ready()` (sync or async) for an item; None means nothing is ready now. After
every finished item, and on `wake()`, the free slots ask again. `run()` returns when nothing runs
and nothing is ready (`until_idle=True`), or after `close()`.

With `worktrees`, each item works in its own git worktree on its own branch, created from the base
(working) branch; the worktree is removed when the item ends OK and kept when it fails (an
exception, or `succeeded(result)` false), its path reported in `SlotRun.kept_worktree`.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Generic, TypeVar

from pm_agent.errors import VcsError
from pm_agent.vcs import Git

__all__ = ["Slot", "SlotPool", "SlotRun", "Worktree", "Worktrees"]

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Worktree:
    """A task's git worktree: where it is, its branch, and the commit it started from."""

    path: Path
    branch: str
    base_sha: str


class Worktrees:
    """Creates and removes task worktrees under `root`, branches from `base_branch`; git calls serialised."""

    def __init__(self, repo: Path, root: Path, base_branch: str) -> None:
        self.repo = Git(repo)
        self.root = root
        self.base_branch = base_branch
        self._lock = asyncio.Lock()

    def path_for(self, branch: str) -> Path:
        """Where the worktree of `branch` goes."""
        return self.root / branch.replace("/", "__")

    async def create(self, branch: str) -> Worktree:
        """A worktree on `branch` (created from the base branch when new)."""
        async with self._lock:
            return await asyncio.to_thread(self._create, branch)

    def _create(self, branch: str) -> Worktree:
        self.root.mkdir(parents=True, exist_ok=True)
        base = self.repo.rev_parse(self.base_branch)
        git = self.repo.worktree_add(self.path_for(branch), branch, start=base)
        return Worktree(git.path, branch, git.head_sha())

    async def remove(self, worktree: Worktree, *, force: bool = False) -> None:
        """Remove the worktree (its branch stays)."""
        async with self._lock:
            await asyncio.to_thread(self.repo.worktree_remove, worktree.path, force)


@dataclass(frozen=True)
class Slot:
    """Where an item runs: the slot number and its worktree (None without worktrees)."""

    index: int
    worktree: Worktree | None


@dataclass
class SlotRun(Generic[T, R]):
    """One item's time in a slot."""

    slot: int
    item: T
    started_at: datetime
    started: float  # time.monotonic()
    worktree: Worktree | None = None
    ended_at: datetime | None = None
    ended: float | None = None
    result: R | None = None
    error: BaseException | None = None
    ok: bool = False
    kept_worktree: Path | None = None  # a failed item's worktree, left for inspection


def _always_ok(_result: Any) -> bool:
    return True


@dataclass
class SlotPool(Generic[T, R]):
    """Runs `work(slot, item)` for ready items, at most `size` at a time."""

    size: int
    next_ready: Callable[[], Any]  # () -> T | None, or an awaitable of it
    work: Callable[[Slot, T], Awaitable[R]]
    worktrees: Worktrees | None = None
    branch_for: Callable[[T], str] | None = None
    succeeded: Callable[[R], bool] = _always_ok
    on_done: Callable[[SlotRun[T, R]], Any] | None = None  # may return an awaitable
    runs: list[SlotRun[T, R]] = field(default_factory=list)
    _wake: asyncio.Event = field(default_factory=asyncio.Event, init=False, repr=False)
    _closed: bool = field(default=False, init=False, repr=False)
    _running: dict[int, asyncio.Task[None]] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.size < 1:
            raise ValueError("a slot pool needs at least one slot")
        if self.worktrees is not None and self.branch_for is None:
            raise ValueError("worktrees need branch_for(item) to name each item's branch")

    @property
    def busy(self) -> int:
        """How many slots are running an item."""
        return len(self._running)

    def wake(self) -> None:
        """Ask the free slots to look for ready items again (something outside changed)."""
        self._wake.set()

    def close(self) -> None:
        """Take no new items; `run()` returns when the running ones end."""
        self._closed = True
        self._wake.set()

    async def _next(self) -> T | None:
        item = self.next_ready()
        if inspect.isawaitable(item):
            item = await item
        return item  # type: ignore[no-any-return]

    async def run(self, *, until_idle: bool = True) -> list[SlotRun[T, R]]:
        """Fill free slots until idle (or closed); every run, in start order. Cancelling stops all."""
        try:
            while True:
                self._wake.clear()
                await self._fill()
                if not self._running and (self._closed or until_idle):
                    return self.runs
                await self._wake.wait()
        except asyncio.CancelledError:
            for task in self._running.values():
                task.cancel()
            with contextlib.suppress(Exception):
                await asyncio.gather(*self._running.values(), return_exceptions=True)
            raise

    async def _fill(self) -> None:
        while not self._closed and len(self._running) < self.size:
            item = await self._next()
            if item is None:
                return
            index = next(i for i in range(self.size) if i not in self._running)
            run: SlotRun[T, R] = SlotRun(index, item, datetime.now(UTC), time.monotonic())
            self.runs.append(run)
            self._running[index] = asyncio.ensure_future(self._run_one(run))

    async def _run_one(self, run: SlotRun[T, R]) -> None:
        try:
            if self.worktrees is not None and self.branch_for is not None:
                run.worktree = await self.worktrees.create(self.branch_for(run.item))
            run.result = await self.work(Slot(run.slot, run.worktree), run.item)
            run.ok = self.succeeded(run.result)
        except asyncio.CancelledError:
            run.error = asyncio.CancelledError()
            raise
        except Exception as exc:  # one item failing must not stop the other slots
            run.error = exc
            run.ok = False
        finally:
            run.ended_at = datetime.now(UTC)
            run.ended = time.monotonic()
            await self._release(run)
            self._running.pop(run.slot, None)
            self._wake.set()
        if self.on_done is not None:
            done = self.on_done(run)
            if inspect.isawaitable(done):
                await done

    async def _release(self, run: SlotRun[T, R]) -> None:
        if run.worktree is None or self.worktrees is None:
            return
        if not run.ok:
            run.kept_worktree = run.worktree.path
            return
        try:  # the item succeeded: what is left in its worktree (commits are on its branch) can go
            await asyncio.shield(self.worktrees.remove(run.worktree, force=True))
        except VcsError as exc:
            run.kept_worktree = run.worktree.path
            if run.error is None:
                run.error = exc
