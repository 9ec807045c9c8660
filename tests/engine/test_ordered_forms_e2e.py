"""Plan forms whose tool runs their tasks one after the other, run by the real Claude Code CLI: a Conductor plan.md
(`- [ ] Task:` items, numbered in plan order) and a Kiro tasks.md (`- [ ] 2.1` sub-tasks). Their tasks run in
order though three slots are free, each committed with its trailer; done, optional, checkpoint and manual-check
items are not run."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pm_agent.store import default_store_path, open_store
from pm_agent.testing.team import Step, write

from .calc_plan import ADD, REVIEW, claimed
from .conftest import Target, git

pytestmark = [pytest.mark.claude, pytest.mark.slow]

CONDUCTOR = """\
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

KIRO = """\
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
# The form, its plan, its two tasks' ids, and the criteria the plan gives them (Conductor's items have none).
FORMS = {
    "conductor": (CONDUCTOR, ("2", "4"), (None, None)),
    "kiro": (KIRO, ("2.1", "2.3"), ("Implement add() in `src/calc/add.py`", "Implement sub() in `src/calc/sub.py`")),
}


def scripts(ids: tuple[str, str], criteria: tuple[str | None, str | None]) -> dict[tuple[str, str], list[Step]]:
    result: dict[tuple[str, str], list[Step]] = {("*", "reviewer"): REVIEW}
    for task, criterion, (path, source) in zip(ids, criteria, (("src/calc/add.py", ADD), ("src/calc/sub.py", SUB)),
                                               strict=True):  # fmt: skip
        mapped = [(criterion, path, "return")] if criterion is not None else []
        result[(f"task-{task}", "developer")] = [write(path, source), claimed({path: source}, mapped)]
    return result


@pytest.mark.timeout(600)  # a hang guard, not a speed check
@pytest.mark.parametrize("form", sorted(FORMS))
def test_the_tasks_run_in_order(form: str, target: Callable[[str], Target]) -> None:
    plan, ids, criteria = FORMS[form]
    t = target(plan)
    t.team.scripts = scripts(ids, criteria)
    rc = t.start(parallel_tiers=["low", "normal"], max_parallel_agents=3)
    outcome = t.drive(rc)
    events = "\n".join(f"{k}: {m}" for k, m, _ in t.listener.events)
    assert sorted(outcome.completed) == sorted(ids), events
    store = open_store(default_store_path(t.repo))
    try:
        sessions = [s for s in store.list_sessions(rc.run_id) if s.role == "developer"]
    finally:
        store.close()
    first, second = (next(s for s in sessions if s.task_id == task) for task in ids)
    assert first.ended_at is not None
    assert first.ended_at <= second.started_at  # in order, though the slots would allow both at once
    trailers = git(t.repo, "log", "--format=%(trailers:key=Refs,valueonly)", rc.run.working_branch).split()
    assert trailers == [f"task-{ids[1]}", f"task-{ids[0]}"]
