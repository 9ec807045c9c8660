"""Plan forms whose tool runs their tasks one after the other, run by the real Claude Code CLI: a Conductor plan.md
(`- [ ] Task:` items, numbered in plan order), a Kiro tasks.md (`- [ ] 2.1` sub-tasks) and an OpenSpec change (its
tasks.md's groups), and a Task Master tasks.json, run in its dependencies' order. Their tasks run in order though
three slots are free, each committed with its trailer; done, optional, checkpoint and manual-check items are not
run."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from pm_agent.engine.api import drive_run
from pm_agent.engine.runctx import RunContext
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


OPENSPEC_TASKS = """\
# Tasks

## 1. Package layout

- [x] 1.1 Agree on the package layout

## 2. Addition

- [ ] 2.1 Implement add() in `src/calc/add.py`
- [ ] 2.2 Return the sum of two integers

## 3. Subtraction

- [x] 3.1 Name the function sub()
- [ ] 3.2 Implement sub() in `src/calc/sub.py`
"""
CHANGE = "openspec/changes/add-arithmetic"
OPENSPEC_FILES = {
    f"{CHANGE}/proposal.md": "## Why\n\nThe calculator cannot add or subtract yet.\n\n## What Changes\n\n- add, sub\n",
    f"{CHANGE}/design.md": "## Decisions\n\n- One module per operation under `src/calc/`.\n",
    f"{CHANGE}/specs/arithmetic/spec.md": (
        "## ADDED Requirements\n\n### Requirement: Addition\n\nThe system SHALL add two integers.\n\n"
        "#### Scenario: Two and three\n\n- **WHEN** add(2, 3) is called\n- **THEN** it returns 5\n"
    ),
}


@pytest.mark.timeout(600)  # a hang guard, not a speed check
def test_an_openspec_change_runs_group_by_group(target: Callable[..., Target]) -> None:
    """The change's folder is the plan: its two groups left to do are two tasks, run in order, each committed; the
    done group is not run; the change's design.md is the run's design doc and the developer is shown the folder."""
    t = target(OPENSPEC_TASKS, at=f"{CHANGE}/tasks.md", files=OPENSPEC_FILES)
    add_criteria = ("2.1 Implement add() in `src/calc/add.py`", "2.2 Return the sum of two integers")
    t.team.scripts = {
        ("*", "reviewer"): REVIEW,
        ("task-2", "developer"): [
            write("src/calc/add.py", ADD),
            claimed({"src/calc/add.py": ADD}, [(c, "src/calc/add.py", "return") for c in add_criteria]),
        ],
        ("task-3", "developer"): [
            write("src/calc/sub.py", SUB),
            claimed({"src/calc/sub.py": SUB}, [("3.2 Implement sub() in `src/calc/sub.py`", "src/calc/sub.py", "-")]),
        ],
    }
    t.plan = t.repo / CHANGE
    rc = t.start(parallel_tiers=["low", "normal"], max_parallel_agents=3)
    assert rc.run.plan_id == "add-arithmetic"
    assert rc.run.design_doc is not None
    assert rc.run.design_doc.endswith(f"{CHANGE}/design.md")
    events = released_in_order(t, rc, ["2", "3"])  # through the release, which checks the items off
    trailers = git(t.repo, "log", "--format=%(trailers:key=Refs,valueonly)", rc.run.working_branch).split()
    assert trailers == ["release-add-arithmetic", "task-3", "task-2"]
    prompts = "\n".join(r.conversation_text() for r in t.server.requests)
    assert f"OpenSpec change in `{CHANGE}/`" in prompts
    # Released: the working branch's tasks.md has every item checked off, the user's checkout is as it was.
    released = git(t.repo, "show", f"{rc.run.working_branch}:{CHANGE}/tasks.md")
    assert released == OPENSPEC_TASKS.replace("[ ]", "[x]")
    assert "tasks.md: 3 checklist item(s) of the completed tasks checked off" in events
    assert (t.repo / CHANGE / "tasks.md").read_text(encoding="utf-8") == OPENSPEC_TASKS


def released_in_order(t: Target, rc: RunContext, tasks: list[str]) -> str:
    """Drive the run through its release: `tasks` completed, one developer session each, one after the other; the
    run's events as text."""
    result = asyncio.run(drive_run(rc, 0.2))
    events = "\n".join(f"{k}: {m}" for k, m, _ in t.listener.events)
    assert sorted(result.outcome.completed) == tasks, events
    assert result.final is not None
    assert result.final.passed, events
    store = open_store(default_store_path(t.repo))
    try:
        sessions = [s for s in store.list_sessions(rc.run_id) if s.role == "developer"]
    finally:
        store.close()
    assert sorted(s.task_id for s in sessions) == tasks  # one session a task
    ordered = [next(s for s in sessions if s.task_id == task) for task in tasks]
    for before, after in itertools.pairwise(ordered):
        assert before.ended_at is not None
        assert before.ended_at <= after.started_at
    return events


ADD_CRITERION = "add() in `src/calc/add.py` returns the sum."


def _tm(task_id: int, title: str, description: str, status: str, deps: list[int], **more: object) -> object:
    return {"id": task_id, "title": title, "description": description, "status": status, "dependencies": deps, **more}


TASKMASTER = {
    "master": {
        "tasks": [
            _tm(1, "Package layout", "Agree on it.", "done", []),
            _tm(2, "Add", ADD_CRITERION, "pending", [1], subtasks=[]),
            _tm(3, "Subtract", "sub()", "pending", [2], subtasks=[{"id": 1, "title": "Write sub()", "status": ""}]),
        ],
        "metadata": {"description": "Tasks for master context"},
    }
}


@pytest.mark.timeout(600)  # a hang guard, not a speed check
def test_a_task_master_list_runs_and_its_statuses_are_set_done(target: Callable[..., Target]) -> None:
    """`.taskmaster` is the plan: tasks 2 and 3 run in their dependencies' order (task 1 is done), and the release
    sets their statuses to done in the working branch's tasks.json, as `task-master set-status` would."""
    text = json.dumps(TASKMASTER, indent=2) + "\n"
    t = target(text, at=".taskmaster/tasks/tasks.json", files={".taskmaster/docs/prd.txt": "Add and subtract.\n"})
    t.team.scripts = {
        ("*", "reviewer"): REVIEW,
        ("task-2", "developer"): [
            write("src/calc/add.py", ADD),
            claimed({"src/calc/add.py": ADD}, [(ADD_CRITERION, "src/calc/add.py", "+")]),
        ],
        ("task-3", "developer"): [
            write("src/calc/sub.py", SUB),
            claimed({"src/calc/sub.py": SUB}, [("3.1 Write sub()", "src/calc/sub.py", "-")]),
        ],
    }
    t.plan = t.repo / ".taskmaster"
    rc = t.start(parallel_tiers=["low", "normal"], max_parallel_agents=3)
    assert (rc.run.plan_id, Path(rc.run.design_doc or "").name) == ("taskmaster", "prd.txt")
    events = released_in_order(t, rc, ["2", "3"])
    trailers = git(t.repo, "log", "--format=%(trailers:key=Refs,valueonly)", rc.run.working_branch).split()
    assert trailers == ["release-taskmaster", "task-3", "task-2"]
    released = json.loads(git(t.repo, "show", f"{rc.run.working_branch}:.taskmaster/tasks/tasks.json"))
    tasks = released["master"]["tasks"]
    assert [(x["status"], [s["status"] for s in x.get("subtasks", [])]) for x in tasks] == [
        ("done", []),
        ("done", []),
        ("done", ["done"]),
    ]
    assert "3 task status(es) set to done" in events
    assert (t.repo / ".taskmaster" / "tasks" / "tasks.json").read_text(encoding="utf-8") == text
