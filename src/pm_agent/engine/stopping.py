"""SIGINT and SIGTERM stop a run cleanly: agents and gate commands are ended, the run is marked stopped.

Everything a run did is already durable (each step is a transaction, each accepted task a commit),
so a clean stop only has to end what is in flight and say so; `pm-agent resume` continues from the
store. The run's own tasks (slots, prompts) are cancelled and unwind their helpers themselves, so
agent sessions end through their monitors (which kill the agent's process group and record the
session); gate commands run in threads, in their own process groups, so they are ended here by
group, which lets their threads return at once instead of running to the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pm_agent.agents.base import StopReason
from pm_agent.agents.monitor import MONITOR_EVENT_PREFIX
from pm_agent.store import SessionRecord, SessionStatus, Store

__all__ = ["STOP_SIGNALS", "Stopped", "child_process_groups", "ended_by_stop", "run_until_signal"]

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
SETTLE_S = 30.0  # longest wait for cancelled steps to record how they ended
T = TypeVar("T")


@dataclass(frozen=True)
class Stopped:
    """The run was stopped by `signal` before it ended by itself."""

    signal: signal.Signals


def child_process_groups() -> list[int]:
    """Process groups led by direct children of this process (agents, gate commands); Linux /proc only."""
    me, own_group = os.getpid(), os.getpgrp()
    groups = []
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue  # gone meanwhile
        fields = stat[stat.rfind(")") + 2 :].split()
        pid, ppid, pgrp = int(entry.name), int(fields[1]), int(fields[2])
        if ppid == me and pgrp == pid and pgrp != own_group:
            groups.append(pgrp)
    return groups


def _end_child_groups() -> None:
    for pgid in child_process_groups():
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGTERM)


class _Family:
    """Which task created which: the run's own tasks are cancelled, and each unwinds its helpers itself.

    Cancelling every task at once would also cancel the helpers a cancelled step still needs to
    record how it ended (an agent session's output reader, its exit waiter), so only the children
    of the cancelled run are cancelled: the slots and the prompts.
    """

    def __init__(self, previous: Any = None) -> None:
        self.previous = previous  # a task factory set before ours, still used to make the tasks
        self.parent: weakref.WeakKeyDictionary[asyncio.Task[Any], asyncio.Task[Any] | None] = (
            weakref.WeakKeyDictionary()
        )

    def factory(self, loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        if self.previous is not None:
            task: asyncio.Task[Any] = self.previous(loop, coro, **kwargs)
        else:
            task = asyncio.Task(coro, loop=loop, **kwargs)
        self.parent[task] = asyncio.current_task(loop)
        return task

    def children(self, of: asyncio.Task[Any]) -> list[asyncio.Task[Any]]:
        return [t for t, parent in list(self.parent.items()) if parent is of and not t.done()]


async def _settle(family: _Family, job: asyncio.Task[Any]) -> None:
    """Cancel what the run started and wait (bounded) for it to record how it ended; end commands in flight."""
    children = family.children(job)
    for task in children:
        task.cancel()
    _end_child_groups()  # gate commands: their threads return once the command is gone
    if children:
        await asyncio.wait(children, timeout=SETTLE_S)
    _end_child_groups()  # a step that started a command while being cancelled


async def run_until_signal(
    work: Awaitable[T], on_signal: Callable[[signal.Signals], None] | None = None
) -> T | Stopped:
    """Await `work`; on SIGINT or SIGTERM cancel it and everything else in flight and return Stopped."""
    loop = asyncio.get_running_loop()
    previous_factory = loop.get_task_factory()
    family = _Family(previous_factory)
    loop.set_task_factory(family.factory)
    job = asyncio.ensure_future(work)
    caught: list[signal.Signals] = []

    def stop(sig: signal.Signals) -> None:
        if caught:  # a second Ctrl-C while stopping: the stop is already under way
            return
        caught.append(sig)
        if on_signal is not None:
            on_signal(sig)
        job.cancel()

    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, stop, sig)
    try:
        try:
            return await job
        except asyncio.CancelledError:
            if not caught:
                raise
        await _settle(family, job)
        return Stopped(caught[0])
    finally:
        loop.set_task_factory(previous_factory)
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)


def ended_by_stop(store: Store, session: SessionRecord) -> bool:
    """Whether pm-agent itself ended `session` while stopping (not for its time budget): resumable like a crash."""
    if session.status is not SessionStatus.KILLED:
        return False
    stops = [e.payload for e in store.session_events(session.id) if e.kind == MONITOR_EVENT_PREFIX + "stopped"]
    return any(json.loads(payload).get("reason") == StopReason.CANCELLED.value for payload in stops)
