"""Readiness kept one task at a time (issue 11) gives what a full scan of the table gives, whatever the order."""

from __future__ import annotations

import random

import pytest

from pm_agent.engine.scheduler import Readiness

Table = dict[str, tuple[tuple[str, ...], bool, bool]]  # task: (dependencies, completed, open)


def full_scan(table: Table, busy: set[str]) -> list[str]:
    """The loop's old `_ready`: every task with every dependency, in table order."""
    done = {t for t, (_, completed, _) in table.items() if completed}
    return [t for t, (deps, _, is_open) in table.items() if is_open and t not in busy and all(d in done for d in deps)]


def test_a_diamond_opens_layer_by_layer() -> None:
    r = Readiness()
    plan = {"1": (), "2": ("1",), "3": ("1",), "4": ("1",), "5": ("2", "3", "4", "4")}  # a repeat counts once
    for tid, deps in plan.items():
        r.update(tid, deps, completed=False, is_open=True)
    assert r.ready() == ["1"]
    r.update("1", (), completed=True, is_open=False)
    assert r.ready() == ["2", "3", "4"]
    assert r.ready(busy={"3"}) == ["2", "4"]
    for tid in ("2", "3"):
        r.update(tid, plan[tid], completed=True, is_open=False)
    assert r.ready() == ["4"]
    r.update("4", plan["4"], completed=True, is_open=False)
    assert r.ready() == ["5"]
    r.update("2", plan["2"], completed=False, is_open=True)  # repaired back: 5 waits again, 2 runs again
    assert r.ready() == ["2"]


def test_changed_dependencies_and_unknown_ones() -> None:
    r = Readiness()
    r.update("1", (), completed=True, is_open=False)
    r.update("2", ("1", "1"), completed=False, is_open=True)  # a repeated dependency counts once
    r.update("3", ("9",), completed=False, is_open=True)  # a task the table does not hold (yet)
    assert r.ready() == ["2"]
    r.update("2", ("1", "3"), completed=False, is_open=True)  # sliced: it now waits for another task
    assert r.ready() == []
    r.update("9", (), completed=True, is_open=False)
    assert r.ready() == ["3"]
    r.update("3", ("9",), completed=True, is_open=False)
    assert r.ready() == ["2"]
    r.update("4", ("4",), completed=False, is_open=True)  # a task that waits on itself never runs
    assert r.ready() == ["2"]


@pytest.mark.parametrize("seed", range(40))
def test_random_changes_agree_with_a_full_scan(seed: int) -> None:
    rng = random.Random(seed)
    ids = [str(i) for i in range(rng.randint(1, 25))]
    r, table = Readiness(), {}
    for _ in range(300):
        tid = rng.choice(ids)
        deps = tuple(rng.sample(ids, rng.randint(0, min(3, len(ids)))))
        if tid in table and rng.random() < 0.7:
            deps = table[tid][0]  # most changes are of state, not of the dependencies
        completed = rng.random() < 0.5
        is_open = not completed and rng.random() < 0.8
        table[tid] = (deps, completed, is_open)
        r.update(tid, deps, completed=completed, is_open=is_open)
        busy = set(rng.sample(ids, rng.randint(0, min(2, len(ids)))))
        assert r.ready(busy) == full_scan(table, busy)
