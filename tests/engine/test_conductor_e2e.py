"""A Conductor plan.md run by the real Claude Code CLI: its `- [ ] Task:` items, numbered in plan order, run one
after the other, each committed with its trailer; the done item and the user's manual check are not run."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pm_agent.store import default_store_path, open_store
from pm_agent.testing.team import Step, write

from .calc_plan import ADD, REVIEW, claimed
from .conftest import Target, git

pytestmark = [pytest.mark.claude, pytest.mark.slow]

PLAN = """\
# Implementation Plan: calc

## Phase 1: Addition [checkpoint: 0000000]

- [x] Task: Agree on the package layout `0000000`
- [ ] Task: Implement add() in `src/calc/add.py`
    - [ ] Write `add(a, b)` returning the sum
- [ ] Task: Conductor - User Manual Verification 'Phase 1: Addition' (Protocol in workflow.md)

## Phase 2: Subtraction

- [ ] Task: Implement sub() in `src/calc/sub.py`
    - [ ] Write `sub(a, b)` returning the difference
"""
SUB = '"""sub."""\n\n\ndef sub(a: int, b: int) -> int:\n    return a - b\n'


def scripts() -> dict[tuple[str, str], list[Step]]:
    add, sub = {"src/calc/add.py": ADD}, {"src/calc/sub.py": SUB}
    return {
        ("task-2", "developer"): [write("src/calc/add.py", ADD), claimed(add, [])],
        ("task-4", "developer"): [write("src/calc/sub.py", SUB), claimed(sub, [])],
        ("*", "reviewer"): REVIEW,
    }


@pytest.mark.timeout(600)  # a hang guard, not a speed check
def test_a_conductor_plan_runs_its_tasks_in_order(target: Callable[[str], Target]) -> None:
    t = target(PLAN)
    t.team.scripts = scripts()
    rc = t.start(parallel_tiers=["low", "normal"], max_parallel_agents=3)
    outcome = t.drive(rc)
    events = "\n".join(f"{k}: {m}" for k, m, _ in t.listener.events)
    assert sorted(outcome.completed) == ["2", "4"], events
    store = open_store(default_store_path(t.repo))
    try:
        sessions = [s for s in store.list_sessions(rc.run_id) if s.role == "developer"]
    finally:
        store.close()
    first, second = (next(s for s in sessions if s.task_id == task) for task in ("2", "4"))
    assert first.ended_at is not None
    assert first.ended_at <= second.started_at  # in order, though the slots would allow both at once
    subjects = git(t.repo, "log", "--format=%(trailers:key=Refs,valueonly)", rc.run.working_branch).split()
    assert subjects == ["task-4", "task-2"]
