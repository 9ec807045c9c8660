"""A Spec Kit task list run by the real Claude Code CLI: T001, then the [P] run T002-T004 side by side in three
slots, then T005; each task committed with its `Refs: task-T00N` trailer."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pm_agent.store import default_store_path, open_store
from pm_agent.testing.team import Step, bash, write

from .calc_plan import ADD, REVIEW, claimed
from .conftest import Target, git

pytestmark = [pytest.mark.claude, pytest.mark.slow]

PLAN = """\
# Tasks: calc operations

**Input**: the calc package

## Format: `[ID] [P?] [Story] Description`

## Phase 1: Setup

- [ ] T001 Create add() in src/calc/add.py with its test in tests/test_add.py

## Phase 2: Operations

- [ ] T002 [P] Create sub() in src/calc/sub.py with its test in tests/test_sub.py
- [ ] T003 [P] Create mul() in src/calc/mul.py with its test in tests/test_mul.py
- [ ] T004 [P] Create neg() in src/calc/neg.py with its test in tests/test_neg.py
- [ ] T005 List every operation in src/calc/ops.py
      (depends on T001)
"""

OPS = {"T002": ("sub", "a - b", "sub(5, 3) == 2"), "T003": ("mul", "a * b", "mul(2, 3) == 6")}
# Each item is its task's acceptance criterion (no analyst session): the developer maps it to a line.
ITEMS = {
    "T001": "Create add() in src/calc/add.py with its test in tests/test_add.py",
    "T002": "Create sub() in src/calc/sub.py with its test in tests/test_sub.py",
    "T003": "Create mul() in src/calc/mul.py with its test in tests/test_mul.py",
    "T004": "Create neg() in src/calc/neg.py with its test in tests/test_neg.py",
    "T005": "List every operation in src/calc/ops.py (depends on T001)",  # with its continuation line
}

def op_files(task: str) -> dict[str, str]:
    if task == "T004":
        name, source, check = "neg", '"""neg."""\n\n\ndef neg(a: int) -> int:\n    return -a\n', "neg(2) == -2"
    else:
        name, body, check = OPS[task]
        source = f'"""{name}."""\n\n\ndef {name}(a: int, b: int) -> int:\n    return {body}\n'
    test = f"from calc.{name} import {name}\n\n\ndef test_{name}() -> None:\n    assert {check}\n"
    return {f"src/calc/{name}.py": source, f"tests/test_{name}.py": test}


def scripts() -> dict[tuple[str, str], list[Step]]:
    add = {"src/calc/add.py": ADD, "tests/test_add.py": "from calc.add import add\n\n\ndef test_add() -> None:\n"
           "    assert add(2, 3) == 5\n"}  # fmt: skip
    ops = {"src/calc/ops.py": '"""ops."""\n\nOPERATIONS = ["add", "sub", "mul", "neg"]\n'}
    result: dict[tuple[str, str], list[Step]] = {
        ("task-T001", "developer"): [
            *(write(p, t) for p, t in add.items()),
            claimed(add, [(ITEMS["T001"], "src/calc/add.py", "return")]),
        ],
        ("task-T005", "developer"): [
            *(write(p, t) for p, t in ops.items()),
            claimed(ops, [(ITEMS["T005"], "src/calc/ops.py", "OPERATIONS")]),
        ],
        ("*", "reviewer"): REVIEW,
    }
    for task in ("T002", "T003", "T004"):
        files = op_files(task)
        # The sleep keeps each session open long enough that the three overlap even on a loaded machine.
        source = next(path for path in files if path.startswith("src/"))
        done = claimed(files, [(ITEMS[task], source, "return")])
        result[(f"task-{task}", "developer")] = [*(write(p, t) for p, t in files.items()), bash("sleep 15"), done]
    return result


@pytest.mark.timeout(600)  # a hang guard, not a speed check
def test_a_spec_kit_task_list_runs_its_p_items_side_by_side(target: Callable[[str], Target]) -> None:
    t = target(PLAN)
    t.team.scripts = scripts()
    rc = t.start(parallel_tiers=["low", "normal"], max_parallel_agents=3)
    outcome = t.drive(rc)
    events = "\n".join(f"{k}: {m}" for k, m, _ in t.listener.events)
    assert sorted(outcome.completed) == ["T001", "T002", "T003", "T004", "T005"], events

    store = open_store(default_store_path(t.repo))
    try:
        sessions = [s for s in store.list_sessions(rc.run_id) if s.role == "developer"]
    finally:
        store.close()
    middle = [s for s in sessions if s.task_id in ("T002", "T003", "T004")]
    assert sorted(s.task_id for s in middle) == ["T002", "T003", "T004"], events
    latest_start = max(s.started_at for s in middle)
    earliest_end = min(s.ended_at for s in middle if s.ended_at is not None)
    assert latest_start < earliest_end, [(s.task_id, s.started_at, s.ended_at) for s in middle]
    (first,) = [s for s in sessions if s.task_id == "T001"]
    (last,) = [s for s in sessions if s.task_id == "T005"]
    assert first.ended_at is not None
    assert first.ended_at <= min(s.started_at for s in middle)
    assert last.started_at >= max(s.ended_at or last.started_at for s in middle)  # the item after the [P] run
    trailers = git(t.repo, "log", "--format=%(trailers:key=Refs,valueonly)", rc.run.working_branch).split()
    assert sorted(trailers) == ["task-T001", "task-T002", "task-T003", "task-T004", "task-T005"]
