"""A 44-task plan mixing the three formats (generated once by fixtures/make_large_plan.py, checked in)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from pm_agent.plan import Plan, Tier, load_plan

PLAN = Path(__file__).parent / "fixtures" / "large_plan.md"


@pytest.fixture(scope="module")
def plan() -> Plan:
    return load_plan(PLAN)


def test_every_task_is_read(plan: Plan) -> None:
    assert len(plan.tasks) == 44
    assert plan.plan_id == "large-plan"
    ids = [t.id for t in plan.tasks]
    # yaml tasks carry `task_id: task-NN`, the others keep the heading's number
    assert ids[:9] == ["1", "02", "3", "4", "05", "6", "7", "08", "9"]
    assert ids[-2:] == ["43", "44"]
    assert plan.task("44").title == "Schema migrations for all areas"


def test_formats_each_fill_their_fields(plan: Plan) -> None:
    fields_task, yaml_task, files_task = plan.task("1"), plan.task("02"), plan.task("3")
    assert fields_task.ownership == "recipes"
    assert fields_task.acceptance_criteria == [
        "Recipes model works for an empty cookbook",
        "Recipes model works for a cookbook with 10 000 recipes",
    ]
    assert yaml_task.expected_files.create == ["src/cookbook/recipes/service.py"]
    assert yaml_task.acceptance_criteria == ["Recipes service is covered by tests"]
    assert files_task.expected_files.test == ["tests/recipes/test_API_routes.py"]
    assert files_task.steps == ["Write the failing test", "Implement recipes api routes", "Commit"]


def test_dependencies(plan: Plan) -> None:
    # each area's model is created first; the area's other tasks modify it
    assert [(d.task_id, d.inferred) for d in plan.task("9").depends_on] == [("08", True)]
    # `depends_on: [task-01]` in yaml; `**Depends on:** Task 8` in a Files-format task finds task-08
    assert [(d.task_id, d.inferred) for d in plan.task("08").depends_on] == [("1", False)]
    assert [(d.task_id, d.inferred) for d in plan.task("15").depends_on] == [("08", False)]
    assert [d.task_id for d in plan.task("44").depends_on] == ["1", "08", "15", "22", "29", "36"]
    assert plan.task("43").depends_on == []


def test_queue_is_a_valid_topological_order(plan: Plan) -> None:
    assert sorted(plan.queue) == sorted(t.id for t in plan.tasks)
    position = {task_id: i for i, task_id in enumerate(plan.queue)}
    for task in plan.tasks:
        for dep in task.dependency_ids():
            assert position[dep] < position[task.id], (dep, task.id)
    # the CRITICAL migration runs as soon as the six models exist; the LOW changelog runs last
    assert plan.task("44").tier is Tier.CRITICAL
    assert plan.queue.index("44") == plan.queue.index("36") + 1
    assert plan.queue[-1] == "43"


def test_loads_quickly() -> None:
    start = time.perf_counter()
    load_plan(PLAN)
    assert time.perf_counter() - start < 2.0
