"""A virtual-clock simulation of pm-agent's dispatch: the real `Scheduler`, driven the way `PmLoop.drive` drives it.

    tasks = random_plan(200, seed=1, mix=OPEN)
    timeline = simulate(tasks, Scheduler(max_parallel=8, parallel_tiers=frozenset({Tier.LOW, Tier.NORMAL})))
    timeline.makespan / lower_bound(tasks, 8)

What is copied from engine/loop.py (keep in step with it):
- ready = tasks not started whose dependencies are all completed (`PmLoop._ready`);
- candidates carry `critical_paths` (`remaining_paths` over `task_weight`), as the loop's do: the scheduler sees the
  plan's size estimate (expected files, or `**Estimate:**`), never the true duration;
- one `scheduler.pick(ready, running)` per wake-up; the loop wakes when at least one task finished
  (`asyncio.wait(FIRST_COMPLETED)` returns every task done by then), calls `record_completion(tier)` for each
  in dispatch order, then picks again. Every task succeeds on its first attempt.
A task's duration is its agent's, and it holds its slot all that time; pm-agent's checks after it take no
time here, so the loop's agent slots (engine/agentslots.py: a task gives its slot back when its agent ends)
and its limit of twice the slots in flight never come into play.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pm_agent.engine.scheduler import Candidate, Scheduler, critical_paths, remaining_paths
from pm_agent.errors import PmAgentError
from pm_agent.plan.models import Dependency, ExpectedFiles, Task, Tier


class SimulationError(PmAgentError):
    """The simulated plan cannot finish: a cycle, or a scheduler that starts nothing while nothing runs."""


@dataclass(frozen=True)
class SimTask:
    """A plan task and how long it really takes (virtual minutes); `layer` is where the generator put it."""

    task: Task
    duration: float
    layer: int = 0

    @property
    def id(self) -> str:
        """The task's id."""
        return self.task.id


@dataclass(frozen=True)
class Slice:
    """One task's run on the virtual clock."""

    task_id: str
    tier: Tier
    ownership: str
    start: float
    end: float


@dataclass(frozen=True)
class Timeline:
    """Every task's run, in dispatch order."""

    slices: tuple[Slice, ...]

    @property
    def makespan(self) -> float:
        """When the last task finished."""
        return max((s.end for s in self.slices), default=0.0)


def make_task(
    task_id: str,
    tier: Tier = Tier.NORMAL,
    deps: Sequence[str] = (),
    *,
    files: int = 1,
    ownership: str = "",
    estimate: float | None = None,
) -> Task:
    """A plan task as the loader would give it: `files` expected files (its size for the scheduler)."""
    return Task(
        id=task_id,
        title=f"Task {task_id}",
        tier=tier,
        ownership=ownership,
        estimate=estimate,
        expected_files=ExpectedFiles(modify=[f"src/m{task_id}_{i}.py" for i in range(files)]),
        depends_on=[Dependency(task_id=d) for d in deps],
    )


def _candidates(tasks: Sequence[SimTask]) -> dict[str, Candidate]:
    """The candidates as `PmLoop._candidate` makes them, with `critical_paths` (queue order = plan order)."""
    paths = critical_paths({t.id: t.task for t in tasks})
    return {
        t.id: Candidate(
            task_id=t.id,
            tier=t.task.tier,
            plan_order=order,
            queue_order=order,
            ownership=t.task.ownership,
            depends_on=tuple(t.task.dependency_ids()),
            remaining=paths[t.id],
        )
        for order, t in enumerate(tasks)
    }


def simulate(tasks: Sequence[SimTask], scheduler: Scheduler) -> Timeline:
    """Run the plan on a virtual clock with `scheduler` deciding every dispatch; every task succeeds."""
    cands = _candidates(tasks)
    duration = {t.id: t.duration for t in tasks}
    pending = {t.id: len(set(t.task.dependency_ids())) for t in tasks}  # dependencies not completed yet
    dependents: dict[str, list[str]] = {t.id: [] for t in tasks}
    for t in tasks:
        for dep in set(t.task.dependency_ids()):
            if dep not in dependents:
                raise SimulationError(f"task {t.id} depends on unknown task {dep}")
            dependents[dep].append(t.id)
    waiting = {i for i, n in pending.items() if n == 0}  # ready and not started
    running: dict[str, float] = {}  # task id -> end time, in dispatch order (the loop's `flows`)
    slices: list[Slice] = []
    now = 0.0
    done = 0
    while done < len(tasks):
        ready = [cands[i] for i in sorted(waiting, key=lambda i: cands[i].plan_order)]
        for cand in scheduler.pick(ready, [cands[i] for i in running]):
            waiting.discard(cand.task_id)
            end = now + duration[cand.task_id]
            running[cand.task_id] = end
            slices.append(Slice(cand.task_id, cand.tier, cand.ownership, now, end))
        if not running:
            raise SimulationError(
                f"nothing runs at t={now:g} with {len(tasks) - done} tasks left (ready: {len(ready)})"
            )
        now = min(running.values())
        for task_id in [i for i, end in running.items() if end == now]:
            del running[task_id]
            done += 1
            scheduler.record_completion(cands[task_id].tier)
            for child in dependents[task_id]:
                pending[child] -= 1
                if pending[child] == 0:
                    waiting.add(child)
    return Timeline(tuple(slices))


def serial_time(tasks: Sequence[SimTask]) -> float:
    """One task at a time: the sum of the durations."""
    return sum(t.duration for t in tasks)


def critical_path(tasks: Sequence[SimTask]) -> float:
    """The longest chain of true durations through the dependencies."""
    paths = remaining_paths({t.id: t.duration for t in tasks}, {t.id: t.task.dependency_ids() for t in tasks})
    return max(paths.values(), default=0.0)


def lower_bound(tasks: Sequence[SimTask], slots: int) -> float:
    """Issue 11's bound, blind to the dispatch rules: max(critical path, total work / slots)."""
    return max(critical_path(tasks), serial_time(tasks) / slots)


def rule_bound(tasks: Sequence[SimTask], scheduler: Scheduler) -> float:
    """A bound that knows seed 001's rules: work that runs alone adds up, one ownership area runs one at a time.

    max(alone + the heaviest chain of shared work, alone + shared / slots, alone + the busiest area's shared
    work), where `alone` is the work of CRITICAL tasks and of tiers outside `parallel_tiers` (nothing runs beside
    them), `shared` the rest, and a task without an area counts as an area of its own. A chain's shared tasks
    cannot overlap any task that runs alone, so alone + chain bounds the makespan (and is at least the critical
    path). Not tight: it ignores the wait for running tasks to drain before a task that runs alone, and
    dependencies among the shared tasks beyond one chain.
    """
    probe = {t.id: Candidate(t.id, t.task.tier, 0, 0, t.task.ownership) for t in tasks}
    alone_ids = {t.id for t in tasks if not scheduler.parallel_ok(probe[t.id])}
    alone = sum(t.duration for t in tasks if t.id in alone_ids)
    shared = [t for t in tasks if t.id not in alone_ids]
    chain = remaining_paths(
        {t.id: 0.0 if t.id in alone_ids else t.duration for t in tasks}, {t.id: t.task.dependency_ids() for t in tasks}
    )
    areas: dict[str, float] = {}
    for t in shared:  # a task without an area is an area of its own: it too takes its whole duration
        key = t.task.ownership or f"\0{t.id}"
        areas[key] = areas.get(key, 0.0) + t.duration
    busiest = max(areas.values(), default=0.0)
    slots = scheduler.max_parallel
    return alone + max(max(chain.values(), default=0.0), sum(t.duration for t in shared) / slots, busiest)


# ---------------------------------------------------------------- random plans


@dataclass(frozen=True)
class Mix:
    """How a random plan draws tiers and ownership areas.

    `tiers`: (tier, weight) pairs; `areas(n)`: how many ownership areas a plan of n tasks draws from,
    0 for one area per task (no two tasks share one).
    """

    name: str
    tiers: tuple[tuple[Tier, float], ...]
    areas: Callable[[int], int]


# open: LOW/NORMAL half and half, every task its own area; no rule forbids parallelism (the goals' case).
OPEN = Mix("open", ((Tier.LOW, 0.5), (Tier.NORMAL, 0.5)), lambda n: 0)
# realistic, as seed 001 would classify a feature plan: 5% CRITICAL (auth, schema, public API), 50% NORMAL,
# 45% LOW (pm-agent has no HIGH tier); max(4, n/10) areas, about ten tasks per module, so tasks beside each
# other often share an area.
REALISTIC = Mix("realistic", ((Tier.CRITICAL, 0.05), (Tier.NORMAL, 0.50), (Tier.LOW, 0.45)), lambda n: max(4, n // 10))


def random_plan(
    n: int, seed: int, mix: Mix = OPEN, *, width: tuple[int, int] = (3, 12), sigma: float = 0.5
) -> list[SimTask]:
    """A layered random DAG of `n` tasks (n >= width[0]), deterministic for a seed.

    Layers hold width[0]..width[1] tasks (the last one takes what is left, merged into the one before when
    fewer than width[0]). Each task after the first layer depends on 1-3 tasks: one in the layer just before
    (so layer k is at depth k) and the others in the three layers before it. Size: 1-6 expected files; the
    true duration is size x lognormal(0, sigma) x 10 minutes, so the scheduler's estimate is right only on
    average.
    """
    if n < width[0]:
        raise SimulationError(f"a plan of width >= {width[0]} needs at least {width[0]} tasks, not {n}")
    rng = random.Random(seed)
    sizes: list[int] = []
    while sum(sizes) < n:
        sizes.append(min(rng.randint(*width), n - sum(sizes)))
    if len(sizes) > 1 and sizes[-1] < width[0]:
        stub = sizes.pop()  # not `sizes[-2] += sizes.pop()`: the target index is taken before the pop
        sizes[-1] += stub
    n_areas = mix.areas(n)
    tiers, weights = zip(*mix.tiers, strict=True)
    layers: list[list[str]] = []
    tasks: list[SimTask] = []
    for k, size in enumerate(sizes):
        layer = [str(len(tasks) + i + 1) for i in range(size)]
        for task_id in layer:
            deps: list[str] = []
            if k:
                deps.append(rng.choice(layers[k - 1]))
                pool = [d for earlier in layers[max(0, k - 3) : k] for d in earlier if d not in deps]
                deps += rng.sample(pool, min(len(pool), rng.randint(0, 2)))
            files = rng.randint(1, 6)
            area = f"area-{rng.randrange(n_areas)}" if n_areas else f"own-{task_id}"
            task = make_task(task_id, rng.choices(tiers, weights)[0], deps, files=files, ownership=area)
            duration = files * math.exp(rng.gauss(0.0, sigma)) * 10.0
            tasks.append(SimTask(task, duration, k))
        layers.append(layer)
    return tasks
