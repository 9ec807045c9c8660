"""Dependency inference where a one-token change would go unnoticed.

A task that creates and tests the same file must not depend on itself, and inference must go on past
a file no earlier task created. Written against mutmut's survivors (make mutation).
"""

from __future__ import annotations

from pm_agent.plan import Dependency, ExpectedFiles, Task, resolve_dependencies


def _task(task_id: str, *, deps: tuple[str, ...] = (), **files: list[str]) -> Task:
    return Task(
        id=task_id,
        title=f"Task {task_id}",
        depends_on=[Dependency(task_id=d) for d in deps],
        expected_files=ExpectedFiles(**files),
    )


def _edges(tasks: list[Task]) -> dict[str, list[tuple[str, bool, str]]]:
    return {t.id: [(d.task_id, d.inferred, d.reason) for d in t.depends_on] for t in tasks}


def test_a_task_that_creates_and_tests_a_file_does_not_depend_on_itself() -> None:
    tasks = [
        _task("1", create=["src/a.py"]),
        _task("2", create=["tests/test_b.py", "src/b.py"], test=["tests/test_b.py"], modify=["src/b.py"]),
    ]
    result = resolve_dependencies(tasks)
    assert _edges(result) == {"1": [], "2": []}
    assert result[1].decision_log == []


def test_inference_goes_on_past_files_no_earlier_task_created() -> None:
    tasks = [
        _task("1", create=["src/a.py"]),
        _task("2", create=["src/b.py"]),
        # README.md exists before the plan; src/later.py is created by a later task; both come first
        _task("3", modify=["README.md", "src/later.py", "src/a.py"], delete=["old.py", "src/b.py"]),
        _task("4", create=["src/later.py"]),
    ]
    result = resolve_dependencies(tasks)
    assert _edges(result)["3"] == [
        ("1", True, "modifies src/a.py created by Task 1"),
        ("2", True, "deletes src/b.py created by Task 2"),
    ]
    assert result[2].decision_log == [
        "depends on Task 1 (inferred: modifies src/a.py created by Task 1)",
        "depends on Task 2 (inferred: deletes src/b.py created by Task 2)",
    ]


def test_the_latest_writer_of_a_path_is_the_dependency() -> None:
    tasks = [
        _task("1", create=["src/a.py"]),
        _task("2", create=["src/a.py"]),  # writes it again: a later task sees task 2's version (plan order)
        _task("3", test=["src/a.py"]),
    ]
    assert _edges(resolve_dependencies(tasks)) == {
        "1": [],
        "2": [],
        "3": [("2", True, "tests src/a.py created by Task 2")],
    }


def test_an_inferred_edge_adds_to_explicit_ones_to_other_tasks() -> None:
    tasks = [
        _task("1", create=["src/a.py"]),
        _task("2"),
        _task("3", deps=("2",), modify=["src/a.py"]),
    ]
    result = resolve_dependencies(tasks)
    assert _edges(result)["3"] == [("2", False, ""), ("1", True, "modifies src/a.py created by Task 1")]
    assert result[2].decision_log == ["depends on Task 1 (inferred: modifies src/a.py created by Task 1)"]
