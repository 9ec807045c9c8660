"""Which headings start tasks: checkbox task headings (done ones skipped), ranges written with any dash, plans of
phases only, task words of other languages; and what the reader says about headings it does not read as tasks.

The fixtures in fixtures/forms/ and fixtures/bad/ are short plans of our own written in each form.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pm_agent.errors import PlanError
from pm_agent.plan import fastpath, fields, load_plan, parse_plan_text
from pm_agent.plan.fasttask import TaskOps
from pm_agent.plan.models import Plan
from pm_agent.plan.numbered import phase_heading
from pm_agent.plan.sections import read_blocks, split_points

FIXTURES = Path(__file__).parent / "fixtures"
FORMS = FIXTURES / "forms"


@pytest.fixture(params=[True, False], ids=["fast", "markdown-it"])
def fast(request: pytest.FixtureRequest) -> Iterator[bool]:
    """Each test runs with the reader's shortcuts on and off (`fastpath.ENABLED`)."""
    fastpath.ENABLED = request.param
    try:
        yield request.param
    finally:
        fastpath.ENABLED = True


def _deps(plan: Plan) -> dict[str, list[str]]:
    return {t.id: [d.task_id for d in t.depends_on if not d.inferred] for t in plan.tasks}


# -- checkbox task headings ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("heading", "parsed", "checked"),
    [
        ("[ ] Task 1: Make the job wait", ("1", "Make the job wait"), False),
        ("[x] Task 3: Drop the loop", ("3", "Drop the loop"), True),
        ("[X] Task 3 — Drop the loop", ("3", "Drop the loop"), True),
        ("- [ ] Task 4: Keep the state", ("4", "Keep the state"), False),
        ("* [x] Task 5: Keep the state", ("5", "Keep the state"), True),
        ("[~] Task 6: Under way", ("6", "Under way"), False),
        ("[x] 任务1：SSH 连接", ("1", "SSH 连接"), True),
    ],
)
def test_a_checkbox_before_a_task_heading(heading: str, parsed: tuple[str, str], checked: bool) -> None:
    assert fields.task_heading(heading) == parsed
    assert fields.heading_checked(heading) is checked


def test_checked_task_headings_are_done_and_dependencies_on_them_are_met(fast: bool) -> None:
    plan = load_plan(FORMS / "checkbox-headings.md")
    assert [(t.id, t.title) for t in plan.tasks] == [
        ("2", "Guard the refund handler against replays"),
        ("4", "Keep the detector's last run across restarts"),
    ]
    assert _deps(plan) == {"2": [], "4": ["2"]}
    second, fourth = plan.tasks
    assert "depends on task-1, checked off in the plan: done" in second.decision_log
    assert "depends on task-3, checked off in the plan: done" in fourth.decision_log
    # A done task's section is its own: not read into the task before it.
    assert "billing/retry.go" not in second.body
    assert second.expected_files.modify == ["billing/refund.go"]
    done = [w for w in plan.warnings if "checked off in the plan: done, not run" in w]
    assert [w.split(": '")[0].rsplit(":", 1)[1] for w in done] == ["7", "21"]
    assert "'Task 3: Drop the unused retry loop'" in done[1]


def test_a_plan_whose_task_headings_are_all_checked_says_they_are_done() -> None:
    with pytest.raises(PlanError, match=r"its 2 task heading\(s\) were found and are all checked off") as info:
        load_plan(FIXTURES / "bad" / "all-checked.md")
    assert info.value.line == 5
    assert "section heading" not in str(info.value)


def test_all_checked_chinese_headings_are_done_too() -> None:
    text = "# 计划\n\n## [x] 任务1：连接模块\n\n说明。\n\n## [x] 任务2：参数表单\n\n说明。\n"
    with pytest.raises(PlanError, match=r"its 2 task heading\(s\) were found and are all checked off") as info:
        parse_plan_text(text, "plan.md")
    assert info.value.line == 3


# -- ranges ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "heading",
    [
        "Task 3-6: Generate each asset",
        "Task 3–6: Generate each asset",
        "Task 3—6: Generate each asset",
        "Task 3〜6: Generate each asset",
        "Task 3 ～ 6: Generate each asset",
        "Task 3 to 6: Generate each asset",
        "タスク 3〜6：Generate each asset",
    ],
)
def test_a_range_heading_is_one_task_whatever_its_dash(heading: str) -> None:
    assert fields.task_heading(heading) == ("3-6", "Generate each asset")


def test_a_spaced_dash_after_the_number_is_still_the_title_separator() -> None:
    assert fields.task_heading("Task 3 – 6 files to move") == ("3", "6 files to move")
    assert fields.task_heading("Task 3 — Title") == ("3", "Title")


def test_range_headings_read_as_tasks_and_near_misses_are_named(fast: bool) -> None:
    plan = load_plan(FORMS / "task-ranges.md")
    assert [t.id for t in plan.tasks] == ["1", "2-4", "5-6", "7"]
    ranged = plan.tasks[1]
    assert ranged.title == "Draw one variant per task (after Task 1)"
    assert "red, green, blue" in ranged.description  # the section is the task's, not lost
    assert ranged.expected_files.create == ["art/variants/*.png"]
    assert _deps(plan)["7"] == ["2-4", "5-6"]
    missed = [w for w in plan.warnings if "is not read as a task heading" in w]
    assert len(missed) == 1
    assert missed[0].startswith(f"{FORMS / 'task-ranges.md'}:27: 'Task 8 fallback when the packer fails'")
    assert "write '### Task 8: Title'" in missed[0]
    assert missed[0].endswith("its section is part of no task")


def test_a_near_miss_under_a_task_says_which_task_it_is_read_into(fast: bool) -> None:
    text = "# P\n\n### Task 1: Parser\n\n**Files:**\n- Create: `a.py`\n\n#### Task 1 notes\n\nKeep it small.\n"
    _, tasks = parse_plan_text(text, "plan.md")
    assert [t.id for t in tasks] == ["1"]
    assert "Keep it small." in tasks[0].body


@pytest.mark.parametrize(
    ("heading", "why"),
    [
        ("Task 104 global settlement loop", "no separator (such as ':') after the number"),
        ("Task 5", "no title after the number"),
        ("Task 5:", "no title after the number"),
        ("Task5: Title", "no space between 'Task' and the number"),
        ("Úkol 2 bez dvojtečky", "no separator (such as ':') after the number"),
    ],
)
def test_why_a_heading_that_starts_like_a_task_heading_is_none(heading: str, why: str) -> None:
    missed = fields.task_heading_miss(heading)
    assert missed is not None
    assert missed[2] == why


@pytest.mark.parametrize("heading", ["Task 3: Title", "Task ownership: who does what", "Tasks 1-3 overview", "Notes"])
def test_task_headings_and_other_headings_are_no_near_miss(heading: str) -> None:
    assert fields.task_heading_miss(heading) is None


def test_headings_without_a_separator_are_named_in_the_error_not_a_nested_checkbox() -> None:
    with pytest.raises(PlanError) as info:
        load_plan(FIXTURES / "bad" / "no-separator-headings.md")
    message = str(info.value)
    assert info.value.line == 3
    assert "Kiro" not in message
    assert "'Task 31 settlement loop scaffold (in progress)' and 1 more like it have no separator" in message
    assert "write '## Task 31: Title'" in message


# -- plans of phases -------------------------------------------------------------------------------------------


def test_a_plan_of_phases_only_reads_one_task_per_phase(fast: bool) -> None:
    plan = load_plan(FORMS / "phase-plan.md")
    assert [(t.id, t.title) for t in plan.tasks] == [
        ("1", "Align the solver"),
        ("2", "Switch the builder"),
        ("3", "Sync the docs"),
    ]
    assert _deps(plan) == {"1": [], "2": [], "3": ["1"]}  # `Depends on: Phase 1` names phase 1's task
    assert plan.tasks[1].expected_files.modify == ["src/pipeline.py"]
    assert "Nothing else changes." not in plan.tasks[2].body  # `## Notes` ends the last phase
    assert any(w.endswith("the 3 'Phase N' headings at level 2 are read as the tasks") for w in plan.warnings)


def test_lettered_phases_and_gates_are_tasks_as_written(fast: bool) -> None:
    text = (
        "# Plan\n\n## Phase A - Align\n\n**Files:**\n- Modify: `a.py`\n\n"
        "## Phase B: Switch\n\n**Files:**\n- Modify: `b.py`\n"
    )
    assert [(t.id, t.title) for t in parse_plan_text(text, "plan.md")[1]] == [("A", "Align"), ("B", "Switch")]
    gates = "# Plan\n\n### Gate 1: Build\n\n**Files:**\n- Modify: `a.py`\n\n### Gate 2: Ship\n\n- [ ] Tag it\n"
    assert [t.id for t in parse_plan_text(gates, "plan.md")[1]] == ["1", "2"]


def test_phases_stay_groups_in_a_plan_with_task_headings(fast: bool) -> None:
    text = (
        "# Plan\n\n## Phase 1: Core\n\n### Task 1: Model\n\n**Files:**\n- Create: `m.py`\n\n"
        "## Phase 2: Api\n\n### Task 2: Routes\n\n**Depends on:** Phase 1 complete\n\n**Files:**\n- Create: `r.py`\n"
    )
    _, tasks = parse_plan_text(text, "plan.md")
    assert [(t.id, [d.task_id for d in t.depends_on]) for t in tasks] == [("1", []), ("2", ["1"])]


def test_phases_of_design_docs_without_task_fields_are_refused() -> None:
    text = "# Design\n\n## Phase 1: Background\n\nWhy.\n\n## Phase 2: Options\n\nWhich.\n"
    with pytest.raises(PlanError, match=r"its 2 'Phase N' heading\(s\) at level 2 .* design doc"):
        parse_plan_text(text, "plan.md")


@pytest.mark.parametrize(
    ("heading", "parsed"),
    [
        ("Phase 1: Align the solver", ("1", "Align the solver")),
        ("Phase A - Title", ("A", "Title")),
        ("Gate 2: Title", ("2", "Title")),
        ("Phase 7 (Follow-up cleanup)", ("7", "(Follow-up cleanup)")),
        ("phase 1.5: Patch", ("1.5", "Patch")),
        ("Phase A new approach", None),
        ("Phases of the work", None),
    ],
)
def test_phase_headings(heading: str, parsed: tuple[str, str] | None) -> None:
    assert phase_heading(heading) == parsed


# -- task words of other languages -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("heading", "task_id"),
    [
        ("タスク 1: 前腕", "1"),
        ("タスク2：一覧", "2"),
        ("작업 3: 정리", "3"),
        ("Úkol 1: Migrace", "1"),
        ("ÚKOL 2: Čtení", "2"),
        ("Aufgabe 4: Prüfen", "4"),
        ("Tarea 5: Revisar", "5"),
        ("Tâche 6 : Vérifier", "6"),
        ("Tarefa 7: Rever", "7"),
        ("Compito 8: Rivedere", "8"),
        ("Zadanie 9: Sprawdzić", "9"),
        ("Задача 10: Проверить", "10"),
        ("задача 11: Проверить", "11"),
        ("Taak 12: Nakijken", "12"),
        ("Aufgabe A: Prüfen", "A"),
    ],
)
def test_task_words_of_other_languages(heading: str, task_id: str) -> None:
    parsed = fields.task_heading(heading)
    assert parsed is not None
    assert parsed[0] == task_id


@pytest.mark.parametrize(
    "heading", ["Aufgabenstellung", "Tarea pendiente de revisión", "Aufgabe: Überblick", "Úkoly týmu: kdo co dělá"]
)
def test_a_task_word_without_a_number_is_no_task(heading: str) -> None:
    assert fields.task_heading(heading) is None


def test_a_czech_plan_reads_its_tasks_files_and_steps(fast: bool) -> None:
    plan = load_plan(FORMS / "czech-tasks.md")
    assert [(t.id, t.title) for t in plan.tasks] == [
        ("1", "Tabulka parametrů"),
        ("2", "Čtení parametrů"),
        ("3", "Uložení hodnoty"),
    ]
    first, _, third = plan.tasks
    assert first.expected_files.create == ["db/migrations/0007_parametry.sql"]  # `Soubory:` / `Vytvořit:`
    assert first.expected_files.test == ["tests/test_parametry.py"]
    assert first.steps == ["Napiš padající test", "Napiš migraci"]  # `Krok 1:` is a step
    assert third.expected_files.modify == ["src/parametry.py"]  # `Upravit:`


def test_a_japanese_plan_reads_its_tasks_and_files(fast: bool) -> None:
    plan = load_plan(FORMS / "japanese-tasks.md")
    assert [t.id for t in plan.tasks] == ["1", "2", "3-4"]
    first = plan.tasks[0]
    assert first.expected_files.create == ["src/room/props.py"]  # `ファイル:` / `作成:`
    assert first.expected_files.modify == ["src/room/__init__.py"]  # `変更:`
    assert "ファイル構成" not in first.body  # the section before the first task is no task's


@pytest.mark.parametrize("name", ["czech-tasks.md", "japanese-tasks.md"])
def test_the_section_split_and_the_fast_reader_see_the_new_task_words(name: str) -> None:
    text = (FORMS / name).read_text()
    lines = text.split("\n")
    heads = [i for i, line in enumerate(lines) if line.startswith("### ")]
    assert split_points(lines) == heads  # the scanner splits the plan at every task heading
    # The fast task reader (fasttask.py) takes each task heading: its blocks follow as one TaskOps node.
    ops = [node.map for node in read_blocks(text, lines, tasks=True).nodes if isinstance(node, TaskOps)]
    assert [span[0] - 1 for span in ops if span is not None] == heads
