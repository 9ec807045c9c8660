"""Which ready task goes next, and which may run beside the ones running (seed 001 phase 2 and 4)."""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter

from pm_agent.plan.models import Task, Tier

TIER_RANK = {Tier.CRITICAL: 0, Tier.NORMAL: 1, Tier.LOW: 2}
_RANK = attrgetter("rank")


@dataclass(frozen=True)
class Candidate:
    """What the scheduler needs to know of a task; `remaining` is its critical-path length."""

    task_id: str
    tier: Tier
    plan_order: int
    queue_order: int
    ownership: str = ""
    depends_on: tuple[str, ...] = ()
    remaining: float = 0.0
    # The ranking key, made once: the loop keeps a task's candidate and ranks every ready task at each dispatch.
    rank: tuple[float, int, int, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "rank", (-self.remaining, TIER_RANK[self.tier], self.plan_order, self.queue_order))


def remaining_paths(weights: Mapping[str, float], depends_on: Mapping[str, Sequence[str]]) -> dict[str, float]:
    """For each task, the heaviest path from it to the end of the plan, its own weight included.

    `weights` holds every task; edges to tasks not in `weights` are ignored. Iterative (a plan may be
    10,000 tasks deep) and linear in tasks plus edges; a cycle, which the plan loader already refuses,
    leaves its tasks at their own weight instead of looping.
    """
    dependents: dict[str, list[str]] = {t: [] for t in weights}
    pending = dict.fromkeys(weights, 0)  # dependents not yet finished, per task
    for task, deps in depends_on.items():
        if task not in weights:
            continue
        for dep in set(deps):
            if dep in weights and dep != task:
                dependents[dep].append(task)
                pending[dep] += 1
    result: dict[str, float] = {}
    # Kahn's algorithm from the sinks backwards: a task is final once all its dependents are.
    stack = [t for t, n in pending.items() if n == 0]
    while stack:
        task = stack.pop()
        result[task] = weights[task] + max((result[d] for d in dependents[task]), default=0.0)
        for dep in set(depends_on.get(task, ())):
            if dep in pending and dep != task:
                pending[dep] -= 1
                if pending[dep] == 0:
                    stack.append(dep)
    for task in weights:
        result.setdefault(task, weights[task])
    return result


@dataclass
class Readiness:
    """Which tasks are ready (open, every dependency completed), kept up to date one task at a time.

    The loop tells it each task's dependencies and whether it is completed or open (neither terminal nor
    waiting for a human) whenever the task's record changes; `ready` then costs the open tasks, not every
    task with every dependency (at 1,000 tasks the full scan was ~3 ms a look, several looks a task).
    """

    done: set[str] = field(default_factory=set)
    open: set[str] = field(default_factory=set)
    order: dict[str, int] = field(default_factory=dict)  # first seen first: the table's (plan) order
    deps: dict[str, tuple[str, ...]] = field(default_factory=dict)
    dependents: dict[str, set[str]] = field(default_factory=dict)
    missing: dict[str, int] = field(default_factory=dict)  # per task: its dependencies not completed

    def update(self, task_id: str, depends_on: Iterable[str], *, completed: bool, is_open: bool) -> None:
        """The task as it is now."""
        self.order.setdefault(task_id, len(self.order))
        deps = tuple(dict.fromkeys(depends_on))
        old = self.deps.get(task_id)
        if old != deps:
            for dep in old or ():
                self.dependents[dep].discard(task_id)
            for dep in deps:
                self.dependents.setdefault(dep, set()).add(task_id)
            self.deps[task_id] = deps
            self.missing[task_id] = sum(1 for dep in deps if dep not in self.done)
        if completed != (task_id in self.done):
            if completed:
                self.done.add(task_id)
            else:
                self.done.discard(task_id)
            step = -1 if completed else 1
            for waiting in self.dependents.get(task_id, ()):
                self.missing[waiting] += step
        if is_open:
            self.open.add(task_id)
        else:
            self.open.discard(task_id)

    def ready(self, busy: Container[str] = ()) -> list[str]:
        """Open tasks whose dependencies are all completed, not in `busy`, in the order first seen."""
        found = [t for t in self.open if not self.missing[t] and t not in busy]
        return sorted(found, key=self.order.__getitem__)


@dataclass
class Scheduler:
    """Seed 001's dispatch rules as one object with a tiny state (the anti-starvation counter).

    Every task passed as ready has all its dependencies completed, so it is independent for dispatch.
    - CRITICAL tasks, and tiers outside `parallel_tiers`, run alone (serial).
    - Tasks of `parallel_tiers` may run beside each other, at most `max_parallel`,
      never two in the same ownership area.
    - Ranking: longest remaining path to the end of the plan first (`Candidate.remaining`, the
      critical path weighted by size), then CRITICAL > NORMAL > LOW, then plan order;
      after `anti_starvation_interval` CRITICAL/NORMAL completions one ready LOW task goes first.
    """

    max_parallel: int = 3
    parallel_tiers: frozenset[Tier] = frozenset({Tier.LOW})
    anti_starvation_interval: int = 3
    completions_since_low: int = 0
    decisions: list[str] = field(default_factory=list)

    def parallel_ok(self, task: Candidate) -> bool:
        """May this task share the slots with others? Its dependencies are completed by the time it is ready."""
        return task.tier in self.parallel_tiers and task.tier is not Tier.CRITICAL

    def record_completion(self, tier: Tier) -> None:
        """Count completions for the anti-starvation rule."""
        if tier is Tier.LOW:
            self.completions_since_low = 0
        else:
            self.completions_since_low += 1

    def order(self, ready: Iterable[Candidate]) -> list[Candidate]:
        """Ready tasks by priority, with the anti-starvation exception applied."""
        ranked = sorted(ready, key=_RANK)
        if self.completions_since_low >= self.anti_starvation_interval:
            lows = [c for c in ranked if c.tier is Tier.LOW]
            if lows:
                ranked.remove(lows[0])
                ranked.insert(0, lows[0])
        return ranked

    def pick(
        self, ready: Sequence[Candidate], running: Sequence[Candidate], *, room: int | None = None
    ) -> list[Candidate]:
        """The tasks to start now, given the ready ones and those already running (in flight); at most `room`
        (default: the slots `running` leaves free)."""
        limit = self.max_parallel - len(running) if room is None else room
        started: list[Candidate] = []
        active = list(running)
        for candidate in self.order(ready):
            if active and not all(self.parallel_ok(a) for a in active):
                break  # a serial task holds the slots
            if active and not self.parallel_ok(candidate):
                break  # serial work outranks what is left: it waits for the slots to drain
            if len(started) >= limit:
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


def task_weight(task: Task) -> float:
    """A task's size for the critical path: its Estimate if the plan gives one, else its expected files (min 1)."""
    if task.estimate is not None:
        return task.estimate
    return float(max(1, len(task.expected_files.all_paths())))


def critical_paths(tasks: Mapping[str, Task]) -> dict[str, float]:
    """Each task's critical-path length to the end of the plan, weighted by its size (`task_weight`)."""
    return remaining_paths(
        {tid: task_weight(t) for tid, t in tasks.items()}, {tid: t.dependency_ids() for tid, t in tasks.items()}
    )
