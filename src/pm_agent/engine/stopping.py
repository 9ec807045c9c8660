"""SIGINT and SIGTERM stop a run cleanly: agents and gate commands are ended, the run is marked stopped.

Everything a run did is already durable (each step is a transaction, each accepted task a commit),
so a clean stop only has to end what is in flight and say so; `pm-agent resume` continues from the
store. Agent sessions end through their monitors (cancellation kills their process group and
records the session); gate commands run in threads, in their own process groups, so they are
ended here by group, which lets their threads return at once instead of running to the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

__all__ = ["STOP_SIGNALS", "Stopped", "child_process_groups", "run_until_signal"]

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


async def _settle() -> None:
    """Cancel every other task of the loop and wait (bounded) for them to record how they ended."""
    current = asyncio.current_task()
    others = [t for t in asyncio.all_tasks() if t is not current and not t.done()]
    for task in others:
        task.cancel()
    _end_child_groups()
    if others:
        await asyncio.wait(others, timeout=SETTLE_S)
    _end_child_groups()  # a step that started a command while being cancelled


async def run_until_signal(
    work: Awaitable[T], on_signal: Callable[[signal.Signals], None] | None = None
) -> T | Stopped:
    """Await `work`; on SIGINT or SIGTERM cancel it and everything else in flight and return Stopped."""
    loop = asyncio.get_running_loop()
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
        await _settle()
        return Stopped(caught[0])
    finally:
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)
