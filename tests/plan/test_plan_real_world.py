"""Plans as agents write them: fixtures that keep the structures real plans broke the parser with."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pm_agent.plan import Plan, load_plan

FIXTURES = Path(__file__).parent / "fixtures"
RECIPES = FIXTURES / "2026-04-02-recipe-import.md"
PLAN_LINT = FIXTURES / "2026-05-11-plan-lint.md"
CSV_EXPORT = FIXTURES / "folders" / "csv-export"
CCPM = FIXTURES / "folders" / "ccpm-offline-mode"


def explicit(plan: Plan, task_id: str) -> list[tuple[str, str]]:
    return [(d.task_id, d.note) for d in plan.task(task_id).depends_on if not d.inferred]


def inferred(plan: Plan, task_id: str) -> list[tuple[str, str]]:
    return [(d.task_id, d.reason) for d in plan.task(task_id).depends_on if d.inferred]


@pytest.fixture(scope="module")
def recipes() -> Plan:
    return load_plan(RECIPES)


def test_prose_after_references_becomes_notes_with_warnings(recipes: Plan) -> None:
    assert explicit(recipes, "2") == [("1", "GREEN and committed")]
    assert explicit(recipes, "3") == [
        ("1", "RecipeRow, the servings field — must be merged first"),
        ("2", "for the shared open_export() helper"),
    ]
    assert recipes.warnings[:2] == [
        f"{RECIPES}:35: 'Depends on' read as Task 1; the prose is kept as notes (Task 1: GREEN and committed)",
        f"{RECIPES}:54: 'Depends on' read as Task 1, Task 2; the prose is kept as notes "
        "(Task 1: RecipeRow, the servings field — must be merged first; "
        "Task 2: for the shared open_export() helper)",
    ]


def test_a_later_task_changing_the_same_file_waits_for_the_last_writer(recipes: Plan) -> None:
    # Task 4 said `Depends on: none`: nothing is inferred for it although it edits cli.py after 1-3 ...
    assert recipes.task("4").declared_independent is True
    assert recipes.task("4").depends_on == []
    # ... but Task 5, editing cli.py after it, waits for Task 4, the last task to write cli.py.
    assert inferred(recipes, "5") == [("4", "modifies src/cookbook/cli.py, which Task 4 modifies earlier in the plan")]


def test_verification_tasks_run_after_every_earlier_task(recipes: Plan) -> None:
    assert inferred(recipes, "6") == [
        (t, "verification task ('Final verification') runs after every earlier task") for t in ("1", "2", "3", "4", "5")
    ]
    # `Wrap-up` says nothing in its title; its step re-runs the probes.
    reason = "verification step ('Re-run all the import probes against the staging copy') runs after every earlier task"
    assert inferred(recipes, "7") == [(t, reason) for t in ("1", "2", "3", "4", "5", "6")]
    assert recipes.queue[-2:] == ["6", "7"]


def test_file_entries_are_the_paths_they_start_with(recipes: Plan) -> None:
    three = recipes.task("3").expected_files
    assert three.modify == ["src/cookbook/cli.py", "tests/importers/test_cli.py"]
    assert three.modify_ranges == {"src/cookbook/cli.py": "61,75"}
    # `Update: PR description` and `Modify: any file the review turns up` name no file
    assert recipes.task("5").expected_files.all_paths() == ["CHANGELOG.md", "src/cookbook/cli.py"]


def test_a_checklist_under_acceptance_criteria_is_not_steps(recipes: Plan) -> None:
    two = recipes.task("2")
    assert two.acceptance_criteria == ["A header-only file gives no rows", "Quoted commas stay inside the title"]
    assert two.steps == ["Write the failing test", "Implement read_csv()", "Commit"]


def test_a_plan_quoted_in_a_task_is_that_tasks_content() -> None:
    plan = load_plan(PLAN_LINT)
    assert [t.id for t in plan.tasks] == ["1", "2", "3"]
    body = plan.task("2").body
    assert "# Sample Plan\n\n## Task 1: Parser" in body
    assert "## Task 2: Printer without tests" in body
    assert plan.task("2").expected_files.create == ["tests/samples/good.md", "tests/samples/bad.md"]
    assert plan.warnings == [
        f"{PLAN_LINT}:27: 'Sample Plan' and the 2 task heading(s) under it restart the task numbering inside "
        "Task 2: read as that task's content (a quoted plan), not as tasks",
        f"{PLAN_LINT}:45: 'Bad Sample Plan' and the 2 task heading(s) under it restart the task numbering inside "
        "Task 2: read as that task's content (a quoted plan), not as tasks",
    ]
    assert explicit(plan, "3") == [("1", ""), ("2", "")]


def test_one_task_per_file_folder_is_one_plan() -> None:
    plan = load_plan(CSV_EXPORT)
    assert plan.plan_id == "csv-export"
    assert plan.header.title == "CSV Export Implementation Plan"
    assert plan.header.tech_stack == "Python 3.12, click, pytest"
    # natural file order (10 after 3); the hidden .drafts folder and the task-less notes are no tasks
    assert [(t.id, Path(t.source).relative_to(CSV_EXPORT).as_posix(), t.line) for t in plan.tasks] == [
        ("1", "tasks/1-export-model.md", 1),
        ("2", "tasks/2-csv-writer.md", 1),
        ("3", "tasks/3-json-writer.md", 1),
        ("10", "tasks/10-final-check.md", 1),
    ]
    assert explicit(plan, "3") == [("1", "model"), ("2", "the export command it extends")]
    assert inferred(plan, "3") == []  # cli.py after Task 2: already an explicit edge
    assert [d for d, _ in inferred(plan, "10")] == ["1", "2", "3"]
    assert plan.queue == ["1", "2", "3", "10"]
    assert plan.warnings[0] == (
        f"{CSV_EXPORT / 'tasks' / '2-csv-writer.md'}:3: 'Depends on' read as Task 1; "
        "the prose is kept as notes (Task 1: the ExportRow model)"
    )


def test_the_tasks_folder_alone_is_named_after_its_feature() -> None:
    plan = load_plan(CSV_EXPORT / "tasks")
    assert plan.plan_id == "csv-export"
    assert [t.id for t in plan.tasks] == ["1", "2", "3", "10"]
    assert plan.header.title == ""


def test_ccpm_epic_folder_is_one_plan() -> None:
    plan = load_plan(CCPM)
    assert plan.plan_id == "ccpm-offline-mode"
    assert plan.header.title == "Epic: Offline mode"
    # epic.md, 42-analysis.md, github-mapping.md and updates/ hold no tasks
    assert [(t.id, t.title, Path(t.source).name) for t in plan.tasks] == [
        ("41", "Local cache store", "41.md"),
        ("42", "Request queue", "42.md"),
        ("43", "Replay on reconnect", "43.md"),
        ("004", "Sync status banner", "44.md"),
        ("45", "Offline mode validation", "45.md"),
    ]
    one = plan.task("41")
    assert one.declared_independent is True  # `depends_on: []` with `parallel: true`
    assert one.acceptance_criteria == [
        "Lists render from the cache when the network is down",
        "The cache is cleared on sign-out",
    ]
    assert explicit(plan, "42") == [("41", "")]
    # broken YAML read line by line; `depends_on: [1]` is the first task file (ids renamed by a sync)
    assert explicit(plan, "43") == [("41", "")]
    assert inferred(plan, "43") == [("42", "conflicts_with in front matter: Task 43 and Task 42 change the same files")]
    # its `## Dependencies` list (`- [002] Request queue (...)`) names the same tasks and explains them
    assert explicit(plan, "004") == [
        ("42", "Request queue (the count of pending writes)"),
        ("43", "Replay on reconnect (the syncing state)"),
    ]
    assert [d for d, _ in inferred(plan, "45")] == ["41", "42", "43", "004"]
    assert plan.queue == ["41", "42", "43", "004", "45"]
    assert plan.warnings == [
        f"{CCPM / '43.md'}:1: front matter is not valid YAML (line 5: mapping values are not allowed here); "
        "read line by line as `key: value`",
        f"{CCPM / '44.md'}:16: 'Dependencies' read as Task 002; the prose is kept as notes "
        "(Task 002: Request queue (the count of pending writes))",
        f"{CCPM / '44.md'}:17: 'Dependencies' read as Task 003; the prose is kept as notes "
        "(Task 003: Replay on reconnect (the syncing state))",
        f"{CCPM / '43.md'}:1: Task 43 depends on '1', which is no task id: read as task file number 1 in order, "
        "Task 41 (ids renumbered by a sync?)",
        f"{CCPM / '44.md'}:10: Task 004 depends on '002', which is no task id: read as task file number 2 in "
        "order, Task 42 (ids renumbered by a sync?)",
        f"{CCPM / '44.md'}:10: Task 004 depends on '003', which is no task id: read as task file number 3 in "
        "order, Task 43 (ids renumbered by a sync?)",
    ]


def test_a_task_file_referenced_by_its_file_number(tmp_path: Path) -> None:
    epic = tmp_path / "epic"
    shutil.copytree(CCPM, epic)
    text = (epic / "45.md").read_text(encoding="utf-8").replace("depends_on: []", "depends_on: [44]")
    (epic / "45.md").write_text(text, encoding="utf-8")
    plan = load_plan(epic)
    assert explicit(plan, "45") == [("004", "")]
    assert plan.warnings[-1] == (
        f"{epic / '45.md'}:1: Task 45 depends on '44', which is no task id: read as the task in file 44.md, "
        "Task 004 (ids renumbered by a sync?)"
    )


def test_a_single_ccpm_task_file_is_a_one_task_plan() -> None:
    plan = load_plan(CCPM / "41.md")
    assert [(t.id, t.title, t.line) for t in plan.tasks] == [("41", "Local cache store", 1)]
    assert plan.task("41").body.startswith("# Task: Local cache store")
