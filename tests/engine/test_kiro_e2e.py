"""A Kiro tasks.md run by the real Claude Code CLI: the sub-tasks left to do run one after the other, each with its
details as steps and committed with its trailer; the done, optional and checkpoint items are not run."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pm_agent.store import default_store_path, open_store
from pm_agent.testing.team import Step, write

from .calc_plan import ADD, REVIEW, claimed
from .conftest import Target, git

pytestmark = [pytest.mark.claude, pytest.mark.slow]

PLAN = """\
# Implementation Plan

- [x] 1. Set up the calc package
  - _Requirements: 1.1_

- [ ] 2. Arithmetic
  - [ ] 2.1 Implement add() in `src/calc/add.py`
    - Return the sum of two integers
    - _Requirements: 2.1_

  - [ ]* 2.2 Write property tests for add()

  - [ ] 2.3 Implement sub() in `src/calc/sub.py`
    - Return the difference of two integers

- [ ] 3. Checkpoint - Ensure all tests pass
"""
SUB = '"""sub."""\n\n\ndef sub(a: int, b: int) -> int:\n    return a - b\n'


def scripts() -> dict[tuple[str, str], list[Step]]:
    add, sub = {"src/calc/add.py": ADD}, {"src/calc/sub.py": SUB}
    return {
        ("task-2.1", "developer"): [
            write("src/calc/add.py", ADD),
            claimed(add, [("Implement add() in `src/calc/add.py`", "src/calc/add.py", "return")]),
        ],
        ("task-2.3", "developer"): [
            write("src/calc/sub.py", SUB),
            claimed(sub, [("Implement sub() in `src/calc/sub.py`", "src/calc/sub.py", "return")]),
        ],
        ("*", "reviewer"): REVIEW,
    }


@pytest.mark.timeout(600)  # a hang guard, not a speed check
def test_a_kiro_task_list_runs_its_sub_tasks_in_order(target: Callable[[str], Target]) -> None:
    t = target(PLAN)
    t.team.scripts = scripts()
    rc = t.start(parallel_tiers=["low", "normal"], max_parallel_agents=3)
    outcome = t.drive(rc)
    events = "\n".join(f"{k}: {m}" for k, m, _ in t.listener.events)
    assert sorted(outcome.completed) == ["2.1", "2.3"], events
    store = open_store(default_store_path(t.repo))
    try:
        sessions = [s for s in store.list_sessions(rc.run_id) if s.role == "developer"]
    finally:
        store.close()
    first, second = (next(s for s in sessions if s.task_id == task) for task in ("2.1", "2.3"))
    assert first.ended_at is not None
    assert first.ended_at <= second.started_at  # in order, though the slots would allow both at once
    trailers = git(t.repo, "log", "--format=%(trailers:key=Refs,valueonly)", rc.run.working_branch).split()
    assert trailers == ["task-2.3", "task-2.1"]
