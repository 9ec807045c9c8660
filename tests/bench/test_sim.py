"""bench/sim.py: hand-made plans give the makespan worked out by hand; timelines keep seed 001's rules."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pm_agent.engine.scheduler import Scheduler
from pm_agent.plan.models import Tier

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
# bench/ is not a package: its modules import each other by plain name
from bench_schedule import LOW_NORMAL, measure
from sim import (
    OPEN,
    REALISTIC,
    Mix,
    SimTask,
    SimulationError,
    Timeline,
    critical_path,
    lower_bound,
    make_task,
    random_plan,
    rule_bound,
    serial_time,
    simulate,
)

LOW, NORMAL, CRITICAL = Tier.LOW, Tier.NORMAL, Tier.CRITICAL
BOTH = frozenset({LOW, NORMAL})


def sched(slots: int = 3, tiers: frozenset[Tier] = BOTH, starvation: int = 3) -> Scheduler:
    return Scheduler(max_parallel=slots, parallel_tiers=tiers, anti_starvation_interval=starvation)


def st(
    task_id: str,
    duration: float,
    tier: Tier = NORMAL,
    deps: tuple[str, ...] = (),
    *,
    files: int = 0,
    ownership: str = "",
) -> SimTask:
    """A task whose plan size is `files` (default: its true duration, so the scheduler's estimate is exact)."""
    task = make_task(task_id, tier, deps, files=files or round(duration), ownership=ownership)
    return SimTask(task, duration)


def spans(timeline: Timeline) -> dict[str, tuple[float, float]]:
    return {s.task_id: (s.start, s.end) for s in timeline.slices}


def overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def assert_rules(tasks: list[SimTask], timeline: Timeline, scheduler: Scheduler) -> None:
    """Over the whole timeline: each task once for its duration, after its dependencies, within the rules."""
    by_id = {t.id: t for t in tasks}
    runs = spans(timeline)
    assert sorted(runs) == sorted(by_id)
    assert len(timeline.slices) == len(tasks)
    for task_id, (start, end) in runs.items():
        assert end - start == pytest.approx(by_id[task_id].duration)
        for dep in by_id[task_id].task.dependency_ids():
            assert runs[dep][1] <= start, f"task {task_id} started before its dependency {dep} finished"
    alone = {t.id for t in tasks if t.task.tier is CRITICAL or t.task.tier not in scheduler.parallel_tiers}
    slices = timeline.slices
    for i, a in enumerate(slices):
        beside = [b for b in slices[i + 1 :] if overlap((a.start, a.end), (b.start, b.end))]
        for b in beside:
            assert a.task_id not in alone, f"task {a.task_id} ran beside task {b.task_id}"
            assert b.task_id not in alone, f"task {b.task_id} ran beside task {a.task_id}"
            area = by_id[a.task_id].task.ownership  # the plan's, not what the timeline says of itself
            assert not (area and area == by_id[b.task_id].task.ownership), f"{a.task_id}, {b.task_id} share {area}"
        # at most max_parallel at the moment a starts
        at_start = [b for b in slices if b.start <= a.start < b.end]
        assert len(at_start) <= scheduler.max_parallel


def test_chain_runs_one_after_another() -> None:
    tasks = [st("1", 1), st("2", 2, deps=("1",)), st("3", 3, deps=("2",))]
    timeline = simulate(tasks, sched())
    assert timeline.makespan == 6
    assert spans(timeline) == {"1": (0, 1), "2": (1, 3), "3": (3, 6)}
    assert critical_path(tasks) == 6


def test_diamond_runs_its_middle_together() -> None:
    tasks = [st("1", 1), st("2", 2, deps=("1",)), st("3", 3, deps=("1",)), st("4", 4, deps=("1",))]
    tasks.append(st("5", 1, deps=("2", "3", "4")))
    timeline = simulate(tasks, sched(3))
    assert timeline.makespan == 6  # 1 + max(2, 3, 4) + 1
    runs = spans(timeline)
    assert runs["2"][0] == runs["3"][0] == runs["4"][0] == 1
    assert runs["5"] == (5, 6)
    assert lower_bound(tasks, 3) == 6


def test_diamond_of_normal_tasks_under_the_default_runs_one_at_a_time() -> None:
    tasks = [st("1", 1), st("2", 2, deps=("1",)), st("3", 3, deps=("1",)), st("4", 4, deps=("1",))]
    tasks.append(st("5", 1, deps=("2", "3", "4")))
    scheduler = sched(3, frozenset({LOW}))
    timeline = simulate(tasks, scheduler)
    assert timeline.makespan == serial_time(tasks) == 11
    assert rule_bound(tasks, scheduler) == 11  # all of it must run alone
    assert_rules(tasks, timeline, scheduler)


def test_four_independent_tasks_in_two_slots_longest_first() -> None:
    tasks = [st("1", 1), st("2", 2), st("3", 3), st("4", 4)]
    timeline = simulate(tasks, sched(2))
    runs = spans(timeline)
    # The longest two start at once; 2 follows 3 at t=3, 1 follows 4 at t=4: both end at 5.
    assert runs == {"4": (0, 4), "3": (0, 3), "2": (3, 5), "1": (4, 5)}
    assert timeline.makespan == 5 == lower_bound(tasks, 2)


def test_plan_order_breaks_ties_when_sizes_are_equal() -> None:
    tasks = [st("1", 1, files=1), st("2", 1, files=1), st("3", 1, files=1), st("4", 1, files=1)]
    runs = spans(simulate(tasks, sched(2)))
    assert runs == {"1": (0, 1), "2": (0, 1), "3": (1, 2), "4": (1, 2)}


def test_critical_task_runs_alone() -> None:
    tasks = [st("1", 2, LOW), st("2", 3, CRITICAL), st("3", 2, LOW)]
    scheduler = sched(3, frozenset({LOW}))
    timeline = simulate(tasks, scheduler)
    # CRITICAL has the longest remaining path: it goes first, alone; then both LOW tasks together.
    assert spans(timeline) == {"2": (0, 3), "1": (3, 5), "3": (3, 5)}
    assert timeline.makespan == 5 == rule_bound(tasks, scheduler)
    assert lower_bound(tasks, 3) == 3  # the bound cannot see the rule
    assert_rules(tasks, timeline, scheduler)


def test_critical_task_waits_for_the_slots_to_drain() -> None:
    # 1 (LOW, 4) is longest and starts first; 2 (CRITICAL, 3) then ranks first and may not join it, so it waits
    # for 1, and 3 (LOW, 1) waits behind 2 instead of filling the free slot.
    tasks = [st("1", 4, LOW), st("2", 3, CRITICAL), st("3", 1, LOW)]
    timeline = simulate(tasks, sched(3, frozenset({LOW})))
    assert spans(timeline) == {"1": (0, 4), "2": (4, 7), "3": (7, 8)}


def test_rule_bound_adds_work_that_runs_alone_to_a_chain() -> None:
    # 1 -> 2 (LOW, 2 each) and CRITICAL 3 (3) beside them: 3 cannot overlap 1 or 2, so nothing beats 2 + 2 + 3.
    tasks = [st("1", 2, LOW), st("2", 2, LOW, ("1",)), st("3", 3, CRITICAL)]
    scheduler = sched(3, frozenset({LOW}))
    timeline = simulate(tasks, scheduler)
    assert spans(timeline) == {"1": (0, 2), "3": (2, 5), "2": (5, 7)}
    assert timeline.makespan == 7 == rule_bound(tasks, scheduler)
    assert lower_bound(tasks, 3) == 4


def test_two_tasks_of_one_area_never_overlap() -> None:
    tasks = [st("1", 2, LOW, ownership="api"), st("2", 3, LOW, ownership="api"), st("3", 1, LOW, ownership="ui")]
    scheduler = sched(3, frozenset({LOW}))
    timeline = simulate(tasks, scheduler)
    assert spans(timeline) == {"2": (0, 3), "3": (0, 1), "1": (3, 5)}
    assert timeline.makespan == 5 == rule_bound(tasks, scheduler)
    assert_rules(tasks, timeline, scheduler)


def test_anti_starvation_lets_a_low_task_jump_the_queue() -> None:
    # One slot: after 3 NORMAL completions the LOW task goes before the longer NORMAL one.
    tasks = [st(str(i), 5, NORMAL) for i in range(1, 6)] + [st("6", 1, LOW)]
    order = [s.task_id for s in simulate(tasks, sched(1)).slices]
    assert order == ["1", "2", "3", "6", "4", "5"]


def test_scheduler_sees_the_estimate_not_the_duration() -> None:
    # Task 1 really takes longest but its plan says 1 file: the scheduler starts 2 and 3 first.
    tasks = [st("1", 9, files=1), st("2", 1, files=5), st("3", 1, files=4)]
    runs = spans(simulate(tasks, sched(2)))
    assert runs["2"] == (0, 1)
    assert runs["3"] == (0, 1)
    assert runs["1"] == (1, 10)


def test_unknown_dependency_is_refused() -> None:
    with pytest.raises(SimulationError, match="unknown task"):
        simulate([st("1", 1, deps=("9",))], sched())


def test_cycle_is_reported_not_looped() -> None:
    with pytest.raises(SimulationError, match="nothing runs"):
        simulate([st("1", 1, deps=("2",)), st("2", 1, deps=("1",))], sched())


@pytest.mark.parametrize("mix", [OPEN, REALISTIC], ids=lambda m: m.name)
@pytest.mark.parametrize("tiers", [frozenset({LOW}), BOTH], ids=["low", "low+normal"])
@pytest.mark.parametrize("slots", [3, 8])
def test_random_plans_keep_every_rule(mix: Mix, tiers: frozenset[Tier], slots: int) -> None:
    for seed in range(3):
        tasks = random_plan(120, seed, mix)
        scheduler = sched(slots, tiers)
        timeline = simulate(tasks, scheduler)
        assert_rules(tasks, timeline, scheduler)
        assert timeline.makespan >= rule_bound(tasks, scheduler) - 1e-9 >= lower_bound(tasks, slots) - 2e-9
        assert timeline.makespan <= serial_time(tasks) + 1e-9


@pytest.mark.parametrize("n", [3, 50, 200, 1000])
def test_random_plan_shape(n: int) -> None:
    tasks = random_plan(n, 7, REALISTIC)
    assert [t.id for t in tasks] == [str(i) for i in range(1, n + 1)]
    layer_of = {t.id: t.layer for t in tasks}
    widths: dict[int, int] = {}
    for t in tasks:
        widths[t.layer] = widths.get(t.layer, 0) + 1
        deps = t.task.dependency_ids()
        if t.layer == 0:
            assert deps == []
            continue
        assert 1 <= len(deps) <= 3
        assert len(set(deps)) == len(deps)
        assert any(layer_of[d] == t.layer - 1 for d in deps)
        assert all(t.layer - 3 <= layer_of[d] < t.layer for d in deps)
        assert t.duration > 0
    assert all(w >= 3 for w in widths.values())
    assert all(w <= 12 for k, w in widths.items() if k < len(widths) - 1)  # the last layer may absorb a stub


def test_random_plan_is_deterministic_and_mixes_as_stated() -> None:
    a, b = random_plan(1000, 3, REALISTIC), random_plan(1000, 3, REALISTIC)
    assert [(t.task, t.duration) for t in a] == [(t.task, t.duration) for t in b]
    assert [t.duration for t in random_plan(1000, 4, REALISTIC)] != [t.duration for t in a]
    tiers = [t.task.tier for t in a]
    assert 0.02 < tiers.count(CRITICAL) / 1000 < 0.08
    assert 0.45 < tiers.count(NORMAL) / 1000 < 0.55
    assert len({t.task.ownership for t in a}) <= 100  # n/10 areas: tasks share them
    open_plan = random_plan(1000, 3, OPEN)
    assert {t.task.tier for t in open_plan} == {LOW, NORMAL}
    assert len({t.task.ownership for t in open_plan}) == 1000


def test_random_plan_needs_a_first_layer() -> None:
    with pytest.raises(SimulationError, match="at least 3"):
        random_plan(2, 1)


def test_bench_schedule_measure_stays_within_what_is_possible() -> None:
    ratio, rule, speedup = measure(OPEN, 50, 3, LOW_NORMAL)
    assert ratio >= 1.0
    assert rule >= 1.0
    assert 1.0 <= speedup <= 3.0  # three slots cannot do better than three at a time
    ratio_default, _, speedup_default = measure(REALISTIC, 50, 3, frozenset({LOW}))
    assert ratio_default > ratio  # NORMAL tasks run alone under the default: the plan takes longer
    assert speedup_default < speedup
