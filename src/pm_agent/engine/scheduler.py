"""Which ready task goes next, and which may run beside the ones running (seed 001 phase 2 and 4)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from pm_agent.plan.models import Tier

TIER_RANK = {Tier.CRITICAL: 0, Tier.NORMAL: 1, Tier.LOW: 2}


@dataclass(frozen=True)
class Candidate:
    """What the scheduler needs to know of a task."""

    task_id: str
    tier: Tier
    plan_order: int
    queue_order: int
    ownership: str = ""
    depends_on: tuple[str, ...] = ()


@dataclass
class Scheduler:
    """Seed 001's dispatch rules as one object with a tiny state (the anti-starvation counter).

    - CRITICAL tasks and tasks with dependencies run alone (serial).
    - Independent tasks of `parallel_tiers` may run beside each other, at most `max_parallel`,
      never two in the same ownership area.
    - Priority CRITICAL > NORMAL > LOW, then dependency (queue) order, then plan order;
      after `anti_starvation_interval` CRITICAL/NORMAL completions one ready LOW task goes first.
    """

    max_parallel: int = 3
    parallel_tiers: frozenset[Tier] = frozenset({Tier.LOW})
    anti_starvation_interval: int = 3
    completions_since_low: int = 0
    decisions: list[str] = field(default_factory=list)

    def parallel_ok(self, task: Candidate) -> bool:
        """May this task share the slots with others?"""
        return task.tier in self.parallel_tiers and not task.depends_on

    def record_completion(self, tier: Tier) -> None:
        """Count completions for the anti-starvation rule."""
        if tier is Tier.LOW:
            self.completions_since_low = 0
        else:
            self.completions_since_low += 1

    def order(self, ready: Iterable[Candidate]) -> list[Candidate]:
        """Ready tasks by priority, with the anti-starvation exception applied."""
        ranked = sorted(ready, key=lambda c: (TIER_RANK[c.tier], c.queue_order, c.plan_order))
        if self.completions_since_low >= self.anti_starvation_interval:
            lows = [c for c in ranked if c.tier is Tier.LOW]
            if lows:
                ranked.remove(lows[0])
                ranked.insert(0, lows[0])
        return ranked

    def pick(self, ready: Sequence[Candidate], running: Sequence[Candidate]) -> list[Candidate]:
        """The tasks to start now, given the ready ones and those already running."""
        started: list[Candidate] = []
        active = list(running)
        for candidate in self.order(ready):
            if active and not all(self.parallel_ok(a) for a in active):
                break  # a serial task holds the slots
            if active and not self.parallel_ok(candidate):
                break  # serial work outranks what is left: it waits for the slots to drain
            if len(active) >= self.max_parallel:
                break
            owners = {a.ownership for a in active if a.ownership}
            if candidate.ownership and candidate.ownership in owners:
                self.decisions.append(
                    f"task-{candidate.task_id} waits: ownership area {candidate.ownership!r} is locked"
                )
                continue
            started.append(candidate)
            active.append(candidate)
        return started
