"""Critical-path ranking (issue 11): remaining path lengths, and `pick` on plans whose dependencies completed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pm_agent.engine.scheduler import Candidate, Scheduler, remaining_paths, task_weight
from pm_agent.plan.models import ExpectedFiles, Task, Tier

DIAMOND = {"1": [], "2": ["1"], "3": ["1"], "4": ["1"], "5": ["2", "3", "4"]}


def unit(deps: Mapping[str, Sequence[str]]) -> dict[str, float]:
    return remaining_paths(dict.fromkeys(deps, 1.0), deps)


def cands(
    deps: Mapping[str, Sequence[str]],
    tiers: Mapping[str, Tier],
    weights: Mapping[str, float] | None = None,
    ownership: Mapping[str, str] | None = None,
) -> dict[str, Candidate]:
    paths = remaining_paths(dict(weights) if weights else dict.fromkeys(deps, 1.0), deps)
    return {
        tid: Candidate(
            tid,
            tiers[tid],
            plan_order=i,
            queue_order=i,
            ownership=(ownership or {}).get(tid, ""),
            depends_on=tuple(deps[tid]),
            remaining=paths[tid],
        )
        for i, tid in enumerate(deps, start=1)
    }


def ids(cs: list[Candidate]) -> list[str]:
    return [x.task_id for x in cs]


def test_diamond_paths() -> None:
    assert unit(DIAMOND) == {"1": 3.0, "2": 2.0, "3": 2.0, "4": 2.0, "5": 1.0}


def test_chain_paths_count_down_to_the_end() -> None:
    chain = {str(i): [str(i - 1)] if i > 1 else [] for i in range(1, 6)}
    assert unit(chain) == {"1": 5.0, "2": 4.0, "3": 3.0, "4": 2.0, "5": 1.0}


def test_wide_plan_every_task_is_its_own_path() -> None:
    wide = {str(i): [] for i in range(1, 51)}
    assert set(unit(wide).values()) == {1.0}


def test_weights_pick_the_heavier_branch() -> None:
    weights = {"1": 1.0, "2": 5.0, "3": 1.0, "4": 1.0, "5": 2.0}
    assert remaining_paths(weights, DIAMOND) == {"1": 8.0, "2": 7.0, "3": 3.0, "4": 3.0, "5": 2.0}


def test_deep_chain_does_not_recurse() -> None:
    chain = {str(i): [str(i - 1)] if i > 1 else [] for i in range(1, 5001)}
    assert unit(chain)["1"] == 5000.0


def test_unknown_dependencies_are_ignored() -> None:
    assert unit({"1": ["gone"], "2": ["1"]}) == {"1": 2.0, "2": 1.0}


def test_edges_of_tasks_outside_the_weights_are_skipped_and_tasks_without_edges_read_as_sinks() -> None:
    # "x" is not a task: its edges are skipped, the next task's are still read; "a" has no entry at all.
    assert remaining_paths({"a": 1.0, "b": 2.0}, {"x": ["a"], "b": ["a"]}) == {"a": 3.0, "b": 2.0}


def test_a_cycle_leaves_its_tasks_at_their_own_weight() -> None:
    assert remaining_paths({"a": 1.0, "b": 2.0, "c": 4.0}, {"a": ["b"], "b": ["a"], "c": []}) == {
        "a": 1.0,
        "b": 2.0,
        "c": 4.0,
    }


def test_task_weight_is_the_estimate_else_the_expected_files_min_one() -> None:
    files = ExpectedFiles(create=["a.py", "b.py"], test=["tests/test_a.py"])
    assert task_weight(Task(id="1", title="t", expected_files=files)) == 3.0
    assert task_weight(Task(id="1", title="t", expected_files=files, estimate=0.5)) == 0.5
    assert task_weight(Task(id="1", title="t")) == 1.0


def test_diamond_middle_layer_runs_at_once_after_the_root_completes() -> None:
    s = Scheduler(max_parallel=3, parallel_tiers=frozenset({Tier.LOW, Tier.NORMAL}))
    c = cands(DIAMOND, dict.fromkeys(DIAMOND, Tier.NORMAL))
    assert ids(s.pick([c["1"]], running=[])) == ["1"]
    # 1 completed: the loop passes 2, 3 and 4 as ready (their dependencies are all completed).
    assert ids(s.pick([c["2"], c["3"], c["4"]], running=[])) == ["2", "3", "4"]
    # One of them finished: nothing else is ready yet, and 5 waits for all three.
    assert s.pick([], running=[c["3"], c["4"]]) == []


def test_critical_path_beats_plan_order() -> None:
    # 1 and 2 are independent; only 2 leads on to 3 and 4. Plan order would run 1 first and leave
    # the long chain for later; with one slot the critical path starts 2 first.
    deps: dict[str, list[str]] = {"1": [], "2": [], "3": ["2"], "4": ["3"]}
    s = Scheduler(max_parallel=1, parallel_tiers=frozenset({Tier.LOW, Tier.NORMAL}))
    c = cands(deps, dict.fromkeys(deps, Tier.NORMAL))
    assert ids(s.order([c["1"], c["2"]])) == ["2", "1"]
    assert ids(s.pick([c["1"], c["2"]], running=[])) == ["2"]


def test_critical_path_beats_tier_and_size_counts() -> None:
    deps: dict[str, list[str]] = {"1": [], "2": [], "3": ["2"]}
    tiers = {"1": Tier.CRITICAL, "2": Tier.LOW, "3": Tier.LOW}
    c = cands(deps, tiers, weights={"1": 2.0, "2": 1.0, "3": 3.0})
    assert ids(Scheduler().order([c["1"], c["2"]])) == ["2", "1"]
    # Equal paths: tier decides, then plan order.
    c = cands(deps, tiers, weights={"1": 4.0, "2": 1.0, "3": 3.0})
    assert ids(Scheduler().order([c["2"], c["1"]])) == ["1", "2"]


def test_anti_starvation_still_lets_a_low_task_first() -> None:
    deps: dict[str, list[str]] = {"1": [], "2": ["1"], "3": []}
    c = cands(deps, {"1": Tier.NORMAL, "2": Tier.NORMAL, "3": Tier.LOW})
    s = Scheduler(anti_starvation_interval=2)
    assert ids(s.order([c["1"], c["3"]])) == ["1", "3"]
    s.record_completion(Tier.NORMAL)
    s.record_completion(Tier.NORMAL)
    assert ids(s.order([c["1"], c["3"]])) == ["3", "1"]


def test_critical_alone_with_dependencies_completed() -> None:
    tiers = {"1": Tier.NORMAL, "2": Tier.CRITICAL, "3": Tier.NORMAL, "4": Tier.NORMAL, "5": Tier.NORMAL}
    s = Scheduler(max_parallel=3, parallel_tiers=frozenset({Tier.LOW, Tier.NORMAL}))
    c = cands(DIAMOND, tiers)
    # Ranked first (equal paths, CRITICAL tier), task 2 starts alone; 3 and 4 wait for it.
    assert ids(s.pick([c["2"], c["3"], c["4"]], running=[])) == ["2"]
    assert s.pick([c["3"], c["4"]], running=[c["2"]]) == []
    # Once 2 is done, 3 and 4 share the slots.
    assert ids(s.pick([c["3"], c["4"]], running=[])) == ["3", "4"]


def test_ownership_lock_with_dependencies_completed() -> None:
    s = Scheduler(max_parallel=3, parallel_tiers=frozenset({Tier.LOW, Tier.NORMAL}))
    c = cands(DIAMOND, dict.fromkeys(DIAMOND, Tier.NORMAL), ownership={"2": "api", "3": "api", "4": "docs"})
    assert ids(s.pick([c["2"], c["3"], c["4"]], running=[])) == ["2", "4"]
    assert "ownership area 'api' is locked" in s.decisions[-1]
    assert ids(s.pick([c["3"]], running=[c["4"]])) == ["3"]
