"""Plan order carries meaning: inferred ordering edges, `Depends on: none`, edges that would close a cycle."""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.errors import PlanError
from pm_agent.plan import Dependency, ExpectedFiles, Task, load_plan, resolve_dependencies
from pm_agent.plan.deps import resolve
from pm_agent.plan.infer import verification_reason

BAD = Path(__file__).parent / "fixtures" / "bad"


def task(
    task_id: str, title: str = "", *, deps: tuple[str, ...] = (), steps: tuple[str, ...] = (), **files: tuple[str, ...]
) -> Task:
    return Task(
        id=task_id,
        title=title or f"Task {task_id}",
        line=int(task_id) if task_id.isdigit() else 1,
        steps=list(steps),
        depends_on=[Dependency(task_id=d) for d in deps],
        expected_files=ExpectedFiles(**{kind: list(paths) for kind, paths in files.items()}),
    )


def edges(tasks: list[Task]) -> dict[str, list[tuple[str, bool]]]:
    return {t.id: [(d.task_id, d.inferred) for d in t.depends_on] for t in tasks}


def test_write_after_write_chains_through_the_latest_writer() -> None:
    tasks = [
        task("1", modify=("app.py",)),
        task("2", modify=("app.py",)),
        task("3", test=("app.py",)),
        task("4", modify=("other.py",)),
        task("5", delete=("app.py",)),
    ]
    assert edges(resolve_dependencies(tasks)) == {
        "1": [],
        "2": [("1", True)],
        "3": [("2", True)],
        "4": [],
        "5": [("3", True)],
    }


@pytest.mark.parametrize(
    ("title", "steps", "verifies"),
    [
        ("Final verification", (), True),
        ("Re-run security probes", (), True),
        ("Manual smoke test", (), True),
        ("Validate from the new location", (), True),
        ("Consistency sweep and full gates", (), True),
        ("Live before/after evals", (), True),
        ("End-to-end validation", (), True),
        ("Wrap-up", ("Run the full test suite",), True),
        ("Wrap-up", ("Re-run all probes",), True),
        ("Remove stubs and final verification", (), True),
        ("Clean up and final checks", (), True),
        ("Add compile-time validation to the compiler", (), False),
        ("Add the final review notes template", (), False),
        ("Create the test suite for all pipelines", (), False),
        ("Push and open the PR", ("Check the branch is clean",), False),
        ("Branch off dev", ("Sanity check",), False),
        ("验证文件结构", (), True),
        ("最终检查", (), True),
        ("数据验证逻辑实现", (), False),  # a Trae plan's third task: the validation logic, implemented
        ("实现数据验证", (), False),
    ],
)
def test_which_tasks_without_files_are_verification(title: str, steps: tuple[str, ...], verifies: bool) -> None:
    assert (verification_reason(task("9", title, steps=steps)) is not None) is verifies


def test_a_task_with_files_is_never_a_verification_task() -> None:
    assert verification_reason(task("9", "Final verification", create=("report.md",))) is None


def test_verification_depends_on_every_earlier_task_and_later_tasks_still_run_after_it() -> None:
    tasks = [task("1", create=("a.py",)), task("2", create=("b.py",)), task("3", "Final verification"), task("4")]
    result = resolve_dependencies(tasks)
    assert edges(result) == {"1": [], "2": [], "3": [("1", True), ("2", True)], "4": []}
    assert result[2].decision_log == [
        "depends on Task 1, Task 2 (inferred: verification task ('Final verification') runs after every earlier task)"
    ]


def test_declared_none_turns_inference_off_for_that_task_only() -> None:
    tasks = [
        task("1", modify=("app.py",)),
        task("2", modify=("app.py",)).model_copy(update={"declared_independent": True}),
        task("3", modify=("app.py",)),
    ]
    assert edges(resolve_dependencies(tasks)) == {"1": [], "2": [], "3": [("2", True)]}


def test_an_inferred_edge_that_would_close_a_cycle_is_skipped_and_recorded() -> None:
    plan = load_plan(BAD / "inferred_cycle.md")
    assert edges(plan.tasks) == {"1": [("2", False)], "2": []}
    message = (
        "Task 2 -> Task 1 not inferred (modifies src/app/settings.py created by Task 1): "
        "Task 1 already depends on Task 2, so the edge would close a cycle"
    )
    assert plan.warnings == [f"{BAD / 'inferred_cycle.md'}:10: {message}"]
    assert message in plan.task("2").decision_log
    assert plan.queue == ["2", "1"]


def test_skipping_looks_through_chains_of_explicit_and_inferred_edges() -> None:
    tasks = [
        task("1", deps=("3",), modify=("x.py",)),
        task("2", modify=("x.py",)),  # 2 -> 1 inferred
        task("3", modify=("x.py",)),  # 3 -> 2 would close 3 -> 2 -> 1 -> 3
    ]
    result, warnings = resolve(tasks, "p.md")
    assert edges(result) == {"1": [("3", False)], "2": [("1", True)], "3": []}
    assert warnings == [
        "p.md:3: Task 3 -> Task 2 not inferred (modifies x.py, which Task 2 modifies earlier in the plan): "
        "Task 2 already depends on Task 3, so the edge would close a cycle"
    ]


def test_cycles_of_explicit_edges_are_still_errors() -> None:
    with pytest.raises(PlanError, match=r"dependency cycle: Task 1 -> Task 2 -> Task 1"):
        resolve_dependencies([task("1", deps=("2",)), task("2", deps=("1",))])


def test_a_range_reference_names_every_task_in_it() -> None:
    tasks = [task("1"), task("2"), task("3"), task("4", deps=("1-3",))]
    assert edges(resolve_dependencies(tasks))["4"] == [("1", False), ("2", False), ("3", False)]
    with pytest.raises(PlanError, match=r"Task 4 depends on Task 1-7, which is not in the plan"):
        resolve_dependencies([*tasks[:3], task("4", deps=("1-7",))])
