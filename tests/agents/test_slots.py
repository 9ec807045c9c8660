"""The slot pool with fake agents: concurrency limit, refill as slots free up, worktrees kept on failure."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from pm_agent.agents.session import AgentHost, start_session
from pm_agent.agents.slots import Slot, SlotPool, SlotRun, Worktrees
from pm_agent.store import SessionStatus
from pm_agent.testing.repo import git

from .conftest import World


async def test_slots_limit_concurrency_and_refill() -> None:
    running = 0
    peak = 0
    items = list(range(7))
    done: list[int] = []

    async def work(slot: Slot, item: int) -> int:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.05 * (item % 3 + 1))
        running -= 1
        if item == 4:
            raise RuntimeError("item 4 fails")
        return item * 10

    pool: SlotPool[int, int] = SlotPool(
        3, next_ready=lambda: items.pop(0) if items else None, work=work, on_done=lambda run: done.append(run.item)
    )
    runs = await pool.run()
    assert peak == 3
    assert sorted(done) == list(range(7))
    by_item = {run.item: run for run in runs}
    assert by_item[2].result == 20
    assert by_item[2].ok
    assert not by_item[4].ok
    assert isinstance(by_item[4].error, RuntimeError)
    assert {run.slot for run in runs} == {0, 1, 2}


async def test_async_next_ready_wake_and_close() -> None:
    ready: asyncio.Queue[str] = asyncio.Queue()

    async def next_ready() -> str | None:
        return None if ready.empty() else ready.get_nowait()

    async def work(slot: Slot, item: str) -> str:
        return item.upper()

    pool: SlotPool[str, str] = SlotPool(2, next_ready=next_ready, work=work)
    runner = asyncio.ensure_future(pool.run(until_idle=False))
    await asyncio.sleep(0.05)
    assert not runner.done()  # idle, waiting for something to become ready
    ready.put_nowait("a")
    pool.wake()
    await asyncio.sleep(0.05)
    pool.close()
    runs = await asyncio.wait_for(runner, 5)
    assert [run.result for run in runs] == ["A"]


def test_worktrees_need_branch_names() -> None:
    async def work(slot: Slot, item: Any) -> None:
        return None

    with pytest.raises(ValueError, match="branch_for"):
        SlotPool(1, next_ready=lambda: None, work=work, worktrees=Worktrees(Path(), Path(), "main"))
    with pytest.raises(ValueError, match="at least one"):
        SlotPool(0, next_ready=lambda: None, work=work)


async def test_fake_agents_in_worktrees_failed_one_is_kept(world: World, fake_host: AgentHost) -> None:
    done = {"signal": "complete", "stepId": "t1", "summary": "ok"}
    scripts = {
        "t1": [{"write": "t1.txt", "content": "1"}, {"signal": done}],
        "t2": [{"write": "t2.txt", "content": "2"}, {"exit": 2}],
    }
    markers = {task: world.script(task, steps) for task, steps in scripts.items()}
    queue = ["t1", "t2"]

    async def work(slot: Slot, task: str) -> Any:
        assert slot.worktree is not None
        assert git(slot.worktree.path, "rev-parse", "--abbrev-ref", "HEAD") == f"feat/{task}"
        return await start_session(
            fake_host, run_id=world.run_id, task_id=task, role="developer", workdir=slot.worktree.path,
            prompt=markers[task],
        )  # fmt: skip

    pool: SlotPool[str, Any] = SlotPool(
        2,
        next_ready=lambda: queue.pop(0) if queue else None,
        work=work,
        worktrees=Worktrees(world.repo, world.tmp / "wt", "main"),
        branch_for=lambda task: f"feat/{task}",
        succeeded=lambda result: result.status is SessionStatus.SIGNALLED,
    )
    runs: dict[str, SlotRun[str, Any]] = {run.item: run for run in await pool.run()}
    assert runs["t1"].ok
    assert runs["t1"].kept_worktree is None
    assert runs["t1"].worktree is not None
    assert not runs["t1"].worktree.path.exists()
    assert not runs["t2"].ok
    assert runs["t2"].result.status is SessionStatus.CRASHED
    kept = runs["t2"].kept_worktree
    assert kept is not None
    assert (kept / "t2.txt").read_text() == "2"  # left for inspection
    assert git(world.repo, "branch", "--list", "--format=%(refname:short)", "feat/*").split() == ["feat/t1", "feat/t2"]
