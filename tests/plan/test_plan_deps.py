"""Dependencies: explicit and inferred edges, cycles, and the execution queue's priorities."""

from __future__ import annotations

import pytest

from pm_agent.errors import PlanError
from pm_agent.plan import (
    Dependency,
    ExpectedFiles,
    Task,
    Tier,
    check_cycles,
    execution_queue,
    resolve_dependencies,
)


def task(
    task_id: str,
    *,
    tier: Tier = Tier.NORMAL,
    deps: tuple[str, ...] = (),
    create: tuple[str, ...] = (),
    modify: tuple[str, ...] = (),
    delete: tuple[str, ...] = (),
    test: tuple[str, ...] = (),
    line: int = 0,
) -> Task:
    return Task(
        id=task_id,
        title=f"Task {task_id}",
        line=line,
        tier=tier,
        depends_on=[Dependency(task_id=d) for d in deps],
        expected_files=ExpectedFiles(
            create=list(create), modify=list(modify), delete=list(delete), test=list(test)
        ),
    )


def edges(tasks: list[Task]) -> dict[str, list[tuple[str, bool, str]]]:
    return {t.id: [(d.task_id, d.inferred, d.reason) for d in t.depends_on] for t in tasks}


def test_modify_delete_and_test_of_an_earlier_created_file_infer_edges() -> None:
    tasks = [
        task("1", create=("src/a.py", "tests/conftest.py")),
        task("2", create=("src/b.py",)),
        task("3", modify=("src/a.py",)),
        task("4", delete=("src/b.py",)),
        task("5", test=("tests/conftest.py",)),
        task("6", create=("docs/x.md",)),
    ]
    assert edges(resolve_dependencies(tasks)) == {
        "1": [],
        "2": [],
        "3": [("1", True, "modifies src/a.py created by Task 1")],
        "4": [("2", True, "deletes src/b.py created by Task 2")],
        "5": [("1", True, "tests tests/conftest.py created by Task 1")],
        "6": [],
    }


def test_write_after_write_orders_tasks_that_change_the_same_file() -> None:
    tasks = [
        task("1", create=("src/a.py",), modify=("README.md",)),
        task("2", create=("src/b.py",), modify=("README.md",)),  # both modify an existing file
        task("3", modify=("src/c.py",)),
        task("4", test=("README.md",)),
        task("5", delete=("README.md",)),
    ]
    assert edges(resolve_dependencies(tasks)) == {
        "1": [],
        "2": [("1", True, "modifies README.md, which Task 1 modifies earlier in the plan")],
        "3": [],
        "4": [("2", True, "tests README.md, which Task 2 modifies earlier in the plan")],
        "5": [("4", True, "deletes README.md, which Task 4 changes earlier in the plan")],
    }


def test_no_edge_to_a_later_creator() -> None:
    tasks = [task("1", modify=("src/a.py",)), task("2", create=("src/a.py",))]
    assert edges(resolve_dependencies(tasks)) == {"1": [], "2": []}


def test_one_edge_per_task_and_explicit_edges_win() -> None:
    tasks = [
        task("1", create=("src/a.py", "src/b.py")),
        task("2", modify=("src/a.py", "src/b.py")),
        task("3", deps=("task-1",), modify=("src/a.py",)),
    ]
    result = resolve_dependencies(tasks)
    assert edges(result) == {
        "1": [],
        "2": [("1", True, "modifies src/a.py created by Task 1")],
        "3": [("1", False, ""), ("2", True, "modifies src/a.py, which Task 2 modifies earlier in the plan")],
    }
    assert result[1].decision_log == ["depends on Task 1 (inferred: modifies src/a.py created by Task 1)"]


def test_resolve_does_not_change_its_input() -> None:
    tasks = [task("1", create=("a.py",)), task("2", modify=("a.py",))]
    resolve_dependencies(tasks)
    assert tasks[1].depends_on == []


def test_three_task_cycle_is_named_from_its_first_task_in_plan_order() -> None:
    tasks = [
        task("1", line=3),
        task("2", deps=("3",), line=10),
        task("3", deps=("4",), line=20),
        task("4", deps=("2",), line=30),
    ]
    with pytest.raises(PlanError) as info:
        resolve_dependencies(tasks, "plan.md")
    assert info.value.message == "dependency cycle: Task 2 -> Task 3 -> Task 4 -> Task 2"
    assert info.value.line == 10
    assert str(info.value.path) == "plan.md"


def test_execution_queue_rejects_cycles_and_unknown_ids() -> None:
    with pytest.raises(PlanError, match=r"dependency cycle: Task a -> Task b -> Task a"):
        execution_queue([task("a", deps=("b",)), task("b", deps=("a",))])
    with pytest.raises(PlanError, match=r"Task a depends on Task zz, which is not in the plan"):
        check_cycles([task("a", deps=("zz",))])


@pytest.mark.parametrize(
    ("tasks", "queue"),
    [
        # plan order when nothing else differs
        ([task("1"), task("2"), task("3")], ["1", "2", "3"]),
        # CRITICAL > NORMAL > LOW among ready tasks
        (
            [task("1", tier=Tier.LOW), task("2"), task("3", tier=Tier.CRITICAL), task("4", tier=Tier.LOW)],
            ["3", "2", "1", "4"],
        ),
        # a dependency holds a CRITICAL task back; it runs as soon as it is ready
        (
            [
                task("1", tier=Tier.LOW),
                task("2"),
                task("3", tier=Tier.CRITICAL, deps=("1",)),
                task("4"),
            ],
            ["2", "4", "1", "3"],
        ),
        # a newly ready CRITICAL task jumps ahead of NORMAL tasks that were ready before it
        (
            [task("1"), task("2", tier=Tier.CRITICAL, deps=("1",)), task("3"), task("4")],
            ["1", "2", "3", "4"],
        ),
        # diamond
        (
            [
                task("1"),
                task("2", deps=("1",)),
                task("3", deps=("1",), tier=Tier.CRITICAL),
                task("4", deps=("2", "3")),
            ],
            ["1", "3", "2", "4"],
        ),
    ],
)
def test_queue_priorities(tasks: list[Task], queue: list[str]) -> None:
    assert execution_queue(tasks) == queue
