"""A dependency table outside the tasks (`| Task | ... | Depends On |`): its rows add to the tasks' dependencies."""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.errors import PlanError
from pm_agent.plan import fastpath, load_plan
from pm_agent.plan.models import Plan

TABLE = Path(__file__).parent / "fixtures" / "forms" / "dependency-table.md"


@pytest.fixture(params=["fast", "markdown-it"])
def table_plan(request: pytest.FixtureRequest) -> Plan:
    fastpath.ENABLED = request.param == "fast"
    try:
        return load_plan(TABLE)
    finally:
        fastpath.ENABLED = True


def _deps(plan: Plan) -> dict[str, list[str]]:
    return {task.id: [dep.task_id for dep in task.depends_on if not dep.inferred] for task in plan.tasks}


def test_rows_of_tables_before_and_after_the_tasks_are_dependencies(table_plan: Plan) -> None:
    # Task 2 names Task 1 itself and the table names it again: one dependency. `--` and `none` add nothing; the
    # `#` column is the task's (the `Task` column beside it holds titles), and `**Task 3**` is Task 3.
    assert _deps(table_plan) == {"1": [], "2": ["1"], "3": ["1", "2"], "4": ["3"]}
    assert table_plan.queue == ["1", "2", "3", "4"]


def test_a_table_dependency_says_where_it_comes_from(table_plan: Plan) -> None:
    third = next(task for task in table_plan.tasks if task.id == "3")
    assert [dep.note for dep in third.depends_on] == ["the dependency table, line 35"] * 2


def test_a_row_for_a_task_the_plan_lacks_is_warned_about_with_its_line(table_plan: Plan) -> None:
    assert any(
        w.endswith("dependency-table.md:36: the dependency table's row for '5' names no task of the plan: "
                   "its dependencies ('4') are not read")
        for w in table_plan.warnings
    )  # fmt: skip


def test_a_table_without_a_dependency_column_is_no_dependency_table(table_plan: Plan) -> None:
    """The `| Step | Owner |` table under Notes: nothing read, nothing warned."""
    assert not any("billing team" in w or ":44:" in w for w in table_plan.warnings)


def _plan(tmp_path: Path, table: str) -> Path:
    plan_file = tmp_path / "plan.md"
    plan_file.write_text(
        "# P\n\n## Task 1: Schema\nx\n\n## Task 2: API\nx\n\n## Task 3: UI\nx\n\n## Dependencies\n\n" + table,
        encoding="utf-8",
    )
    return plan_file


def test_an_unknown_task_in_a_dependency_cell_is_the_unknown_reference_error(tmp_path: Path) -> None:
    plan_file = _plan(tmp_path, "| ID | Dependencies |\n|----|----|\n| 3 | 1, 9 |\n")
    with pytest.raises(PlanError, match="Task 3 depends on Task 9, which is not in the plan"):
        load_plan(plan_file)


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ("| Task | Depends on |\n|---|---|\n| Task 3 | Task 1 and Task 2 |\n", ["1", "2"]),
        ("| Task | Prerequisites |\n|---|---|\n| UI | 1–2 |\n", ["1", "2"]),  # a title; an en-dash range
        ("| Task | Blocked by |\n|---|---|\n| 3 | - |\n", []),
        ("| Task | Description |\n|---|---|\n| 3 | needs 1 |\n", []),  # no dependency column
    ],
)
def test_table_spellings(tmp_path: Path, table: str, expected: list[str]) -> None:
    plan = load_plan(_plan(tmp_path, table))
    assert [dep.task_id for dep in plan.tasks[2].depends_on if not dep.inferred] == expected


def test_prose_in_a_dependency_cell_is_warned_about_and_the_references_kept(tmp_path: Path) -> None:
    plan = load_plan(_plan(tmp_path, "| Task | Depends On |\n|---|---|\n| 3 | after the review |\n| 2 | 1 |\n"))
    assert [dep.task_id for dep in plan.tasks[1].depends_on] == ["1"]
    assert any(":16: ignored in the dependency table: cannot read task reference" in w for w in plan.warnings)


def test_a_table_inside_a_task_stays_its_description(tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.md"
    plan_file.write_text(
        "# P\n\n## Task 1: A\nx\n\n## Task 2: B\n\n| Task | Depends on |\n|---|---|\n| 2 | 1 |\n", encoding="utf-8"
    )
    second = load_plan(plan_file).tasks[1]
    assert second.depends_on == []
    assert "| 2 | 1 |" in second.description


def test_an_en_dash_range_in_depends_on_is_a_range(tmp_path: Path) -> None:
    """`Tasks 1–2` (an en dash, as tables and prose write ranges) names Tasks 1 and 2, not Task 1 with a note."""
    plan_file = tmp_path / "plan.md"
    plan_file.write_text("# P\n\n## Task 1: A\nx\n\n## Task 2: B\nx\n\n## Task 3: C\n**Depends on:** Tasks 1–2\n")
    plan = load_plan(plan_file)
    assert [(dep.task_id, dep.note) for dep in plan.tasks[2].depends_on] == [("1", ""), ("2", "")]
    assert plan.warnings == []
