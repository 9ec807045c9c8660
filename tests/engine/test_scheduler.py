from __future__ import annotations

from pm_agent.engine.scheduler import Candidate, Scheduler
from pm_agent.plan.models import Tier


def c(task_id: str, tier: Tier, order: int, ownership: str = "", deps: tuple[str, ...] = ()) -> Candidate:
    return Candidate(task_id, tier, plan_order=order, queue_order=order, ownership=ownership, depends_on=deps)


def ids(cands: list[Candidate]) -> list[str]:
    return [x.task_id for x in cands]


def test_priority_critical_then_normal_then_low_then_plan_order() -> None:
    s = Scheduler()
    ready = [c("1", Tier.LOW, 1), c("2", Tier.NORMAL, 2), c("3", Tier.CRITICAL, 3), c("4", Tier.NORMAL, 4)]
    assert ids(s.order(ready)) == ["3", "2", "4", "1"]


def test_critical_runs_alone() -> None:
    s = Scheduler()
    ready = [c("1", Tier.CRITICAL, 1), c("2", Tier.LOW, 2), c("3", Tier.LOW, 3)]
    assert ids(s.pick(ready, running=[])) == ["1"]
    # While it runs nothing joins it.
    assert s.pick([c("2", Tier.LOW, 2)], running=[c("1", Tier.CRITICAL, 1)]) == []


def test_independent_low_tasks_run_in_parallel_up_to_the_limit() -> None:
    s = Scheduler(max_parallel=3)
    ready = [c(str(i), Tier.LOW, i) for i in range(1, 6)]
    assert ids(s.pick(ready, running=[])) == ["1", "2", "3"]
    assert ids(s.pick(ready[3:], running=[c("1", Tier.LOW, 1)])) == ["4", "5"]


def test_room_counts_free_agent_slots_while_the_rules_count_every_task_in_flight() -> None:
    s = Scheduler(max_parallel=2)
    checked = [c("1", Tier.LOW, 1, "docs"), c("2", Tier.LOW, 2, "config")]  # in pm-agent's checks: no slot held
    ready = [c("3", Tier.LOW, 3), c("4", Tier.LOW, 4), c("5", Tier.LOW, 5, "docs")]
    assert s.pick(ready, running=checked) == []  # by default the slots are the tasks in flight
    assert ids(s.pick(ready, running=checked, room=2)) == ["3", "4"]
    assert ids(s.pick(ready, running=checked, room=1)) == ["3"]
    assert ids(s.pick(ready[2:], running=checked, room=2)) == []  # task 1 in its checks still holds 'docs'
    assert s.pick(ready, running=[c("1", Tier.CRITICAL, 1)], room=2) == []  # a CRITICAL task in its checks: alone


def test_ready_tasks_with_completed_dependencies_share_the_slots() -> None:
    s = Scheduler()
    # Ready means every dependency is completed: the task is independent for dispatch.
    assert ids(s.pick([c("2", Tier.LOW, 2, deps=("1",)), c("3", Tier.LOW, 3)], running=[])) == ["2", "3"]
    assert ids(s.pick([c("4", Tier.LOW, 4, deps=("2",))], running=[c("3", Tier.LOW, 3, deps=("1",))])) == ["4"]


def test_tiers_outside_parallel_tiers_run_serially() -> None:
    s = Scheduler()
    assert ids(s.pick([c("2", Tier.NORMAL, 2), c("3", Tier.NORMAL, 3)], running=[])) == ["2"]
    assert s.pick([c("3", Tier.NORMAL, 3)], running=[c("2", Tier.NORMAL, 2)]) == []


def test_critical_runs_alone_even_when_listed_in_parallel_tiers() -> None:
    s = Scheduler(parallel_tiers=frozenset(Tier))
    assert ids(s.pick([c("1", Tier.CRITICAL, 1), c("2", Tier.LOW, 2)], running=[])) == ["1"]
    assert s.pick([c("2", Tier.LOW, 2)], running=[c("1", Tier.CRITICAL, 1)]) == []


def test_same_ownership_area_never_runs_twice_at_once() -> None:
    s = Scheduler()
    ready = [c("1", Tier.LOW, 1, "docs"), c("2", Tier.LOW, 2, "docs"), c("3", Tier.LOW, 3, "config")]
    assert ids(s.pick(ready, running=[])) == ["1", "3"]
    assert "ownership area 'docs' is locked" in s.decisions[-1]


def test_serial_task_outranking_the_rest_waits_for_slots_to_drain() -> None:
    s = Scheduler()
    ready = [c("5", Tier.NORMAL, 5), c("6", Tier.LOW, 6)]
    assert s.pick(ready, running=[c("1", Tier.LOW, 1)]) == []


def test_anti_starvation_lets_one_low_go_first_after_three_completions() -> None:
    s = Scheduler(anti_starvation_interval=3)
    ready = [c("1", Tier.NORMAL, 1), c("2", Tier.LOW, 2), c("3", Tier.CRITICAL, 3)]
    for tier in (Tier.CRITICAL, Tier.NORMAL):
        s.record_completion(tier)
    assert ids(s.order(ready))[0] == "3"
    s.record_completion(Tier.NORMAL)
    assert ids(s.order(ready)) == ["2", "3", "1"]
    assert ids(s.pick(ready, running=[])) == ["2"]
    s.record_completion(Tier.LOW)
    assert ids(s.order(ready))[0] == "3"
