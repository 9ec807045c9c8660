"""The slots: how many agent sessions run at once (`max_parallel_agents`, seed 004's slot model).

A slot is an agent's, not a task's: "when a slot's agent completes, the CLI assigns the next available step
to that slot". A task takes a slot when it is dispatched and gives it back as soon as its agent's process
has ended: pm-agent's own work on it (the session's checks, the gates, the review of the diff, the commit)
holds none, so the next task's agent starts while the finished one is checked. A task that needs an agent
again (the fixer after failed gates, a reviewer, a follow-up) waits for the next slot given back, before any
task not started yet. Every method runs on the loop's thread.

    slots = AgentSlots(3)
    slots.reserve("4")                  # the loop, at dispatch
    await slots.acquire("4")            # the task's flow, before each agent session
    slots.release("4")                  # the session, when the agent's process ends; the loop, when the flow ends
"""

from __future__ import annotations

import asyncio
from collections import deque


class AgentSlots:
    """`size` slots, held by task id; tasks waiting for one are served in the order they asked."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.holders: set[str] = set()
        self.waiters: deque[tuple[str, asyncio.Future[None]]] = deque()
        self._freed: asyncio.Future[None] | None = None

    def free(self) -> int:
        """Slots the loop may give to tasks not started yet: tasks waiting for one are served first."""
        return max(0, self.size - len(self.holders) - len(self.waiters))

    def reserve(self, task_id: str) -> None:
        """The slot of a task being dispatched (the loop checked `free()`)."""
        self.holders.add(task_id)

    def must_wait(self, task_id: str) -> bool:
        """Whether `acquire(task_id)` would wait now."""
        return task_id not in self.holders and (len(self.holders) >= self.size or bool(self.waiters))

    async def acquire(self, task_id: str) -> bool:
        """A slot for the task's next session: the one it holds, a free one, or the next to be given back;
        whether it had to wait."""
        if not self.must_wait(task_id):
            self.holders.add(task_id)
            return False
        handed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiters.append((task_id, handed))
        try:
            await handed
        except asyncio.CancelledError:
            if (task_id, handed) in self.waiters:
                self.waiters.remove((task_id, handed))
            elif task_id in self.holders:  # given the slot as it was cancelled: pass it on
                self.release(task_id)
            raise
        return True

    def release(self, task_id: str) -> None:
        """The task's slot back (nothing if it holds none): to the first task waiting, else to the loop."""
        if task_id not in self.holders:
            return
        self.holders.discard(task_id)
        while self.waiters:
            waiter, handed = self.waiters.popleft()
            if not handed.done():
                self.holders.add(waiter)
                handed.set_result(None)
                return
        if self._freed is not None and not self._freed.done():
            self._freed.set_result(None)

    def freed(self) -> asyncio.Future[None]:
        """Done when a slot is next given back to the loop (for its wait beside the running tasks)."""
        if self._freed is None or self._freed.done():
            self._freed = asyncio.get_running_loop().create_future()
        return self._freed
