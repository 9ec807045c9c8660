"""The agent slots (engine/agentslots.py): a slot is held by an agent session, not by a task in flight."""

from __future__ import annotations

import asyncio

import pytest

from pm_agent.engine.agentslots import AgentSlots


def run(coro: object) -> None:
    asyncio.run(coro)  # type: ignore[arg-type]


def test_dispatch_reserves_and_the_first_session_takes_the_reserved_slot() -> None:
    async def main() -> None:
        slots = AgentSlots(2)
        slots.reserve("1")
        assert slots.free() == 1
        assert not slots.must_wait("2")
        assert await slots.acquire("1") is False  # its own slot: no wait
        assert await slots.acquire("2") is False  # a free one
        assert slots.free() == 0
        assert slots.holders == {"1", "2"}

    run(main())


def test_a_task_needing_an_agent_again_waits_and_goes_before_new_tasks() -> None:
    async def main() -> None:
        slots = AgentSlots(1)
        slots.reserve("1")
        assert slots.must_wait("2")
        assert not slots.must_wait("1")
        fixer = asyncio.create_task(slots.acquire("2"))  # task 2's fixer: every slot is taken
        await asyncio.sleep(0)
        assert slots.must_wait("3")
        assert not fixer.done()
        assert slots.free() == 0  # the waiting fixer's claim: the loop dispatches nothing new
        freed = slots.freed()
        slots.release("1")
        assert await fixer is True
        assert slots.holders == {"2"}
        assert not freed.done()  # handed to the waiter, not to the loop
        slots.release("2")
        assert freed.done()
        assert slots.free() == 1

    run(main())


def test_waiters_are_served_in_the_order_they_asked() -> None:
    async def main() -> None:
        slots = AgentSlots(1)
        slots.reserve("0")
        order: list[str] = []

        async def want(task: str) -> None:
            await slots.acquire(task)
            order.append(task)

        waiters = [asyncio.create_task(want(t)) for t in ("3", "1", "2")]
        await asyncio.sleep(0)
        for holder in ("0", "3", "1"):
            slots.release(holder)
            await asyncio.sleep(0)
        await asyncio.gather(*waiters)
        assert order == ["3", "1", "2"]

    run(main())


def test_a_task_holding_a_slot_never_waits_for_one_even_when_all_are_taken() -> None:
    async def main() -> None:
        slots = AgentSlots(1)
        slots.reserve("1")
        assert await asyncio.wait_for(slots.acquire("1"), 1.0) is False
        assert slots.holders == {"1"}

    run(main())


def test_release_is_idempotent_and_ignores_tasks_without_a_slot() -> None:
    async def main() -> None:
        slots = AgentSlots(2)
        slots.reserve("1")
        slots.release("1")
        slots.release("1")  # the session's exit, then the flow's end
        slots.release("9")
        assert slots.free() == 2
        assert slots.holders == set()

    run(main())


def test_a_cancelled_waiter_leaves_the_queue() -> None:
    async def main() -> None:
        slots = AgentSlots(1)
        slots.reserve("1")
        waiter = asyncio.create_task(slots.acquire("2"))
        await asyncio.sleep(0)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        assert not slots.waiters
        assert slots.free() == 0
        freed = slots.freed()
        slots.release("1")
        assert freed.done()  # nobody waits: the slot goes back to the loop
        assert slots.free() == 1

    run(main())


def test_a_waiter_cancelled_as_it_is_handed_the_slot_passes_it_on() -> None:
    async def main() -> None:
        slots = AgentSlots(1)
        slots.reserve("1")
        first = asyncio.create_task(slots.acquire("2"))
        second = asyncio.create_task(slots.acquire("3"))
        await asyncio.sleep(0)
        slots.release("1")  # handed to "2"
        first.cancel()  # ... which is cancelled before it runs again
        with pytest.raises(asyncio.CancelledError):
            await first
        assert await second is True
        assert slots.holders == {"3"}

    run(main())
