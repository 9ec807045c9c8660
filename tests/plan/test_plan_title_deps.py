"""A bracket at the end of a task's title (or before it: `Task 7 (depends on 1, 2): Title`) that names tasks the task
waits for is a dependency noted as from the title; one that makes the task conditional is a warning."""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.plan import Plan, fastpath, fields, load_plan
from pm_agent.plan.refs import Ref, title_deps

PLAN = Path(__file__).parent / "fixtures" / "forms" / "title-dependencies.md"


@pytest.fixture(params=[True, False], ids=["fast", "markdown-it"])
def plan(request: pytest.FixtureRequest) -> Plan:
    fastpath.ENABLED = request.param
    try:
        return load_plan(PLAN)
    finally:
        fastpath.ENABLED = True


def explicit(plan: Plan, task_id: str) -> list[tuple[str, str]]:
    return [(d.task_id, d.note) for d in plan.task(task_id).depends_on if not d.inferred]


@pytest.mark.parametrize(
    ("task_id", "expected"),
    [
        ("3-4", [("1", "from the title")]),
        ("5", [("2", "from the title")]),
        ("6", [("3-4", "from the title"), ("5", "from the title")]),
        ("7", [("1", "from the title"), ("2", "from the title")]),
        ("8", [("6", "from the title: is announced")]),
    ],
)
def test_a_bracket_naming_tasks_is_a_dependency(plan: Plan, task_id: str, expected: list[tuple[str, str]]) -> None:
    assert explicit(plan, task_id) == expected


def test_the_title_keeps_its_text(plan: Plan) -> None:
    assert plan.task("3-4").title == "Tile the two quays (after Task 1)"
    assert plan.task("7").title == "Night mode (depends on 1, 2)"
    assert plan.task("8").title == "Press kit (after Task 6 is announced)"


@pytest.mark.parametrize("task_id", ["9", "10", "11", "12"])
def test_conditions_and_brackets_naming_no_task_add_no_dependency(plan: Plan, task_id: str) -> None:
    assert explicit(plan, task_id) == []


def test_the_queue_follows_the_titles(plan: Plan) -> None:
    queue = plan.queue
    assert queue.index("3-4") > queue.index("1")
    assert queue.index("6") > max(queue.index("3-4"), queue.index("5"))
    assert queue.index("8") > queue.index("6")


def test_a_conditional_title_is_a_warning_and_nothing_else_is(plan: Plan) -> None:
    tail = "pm-agent runs every task, this one too; no dependency is read from it"
    assert plan.warnings == [
        f"{PLAN}:30: Task 9's title makes it conditional ('only if Task 2 is not approved'): {tail}",
        f"{PLAN}:32: Task 10's title makes it conditional ('optional'): {tail}",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Task 4 (depends on 1, 2): Title", ("4", "Title (depends on 1, 2)")),
        ("Task 3 (After Tasks 1–2): Title", ("3", "Title (After Tasks 1–2)")),
        ("Task 2 (after Task 1) — Title", ("2", "Title (after Task 1)")),
        ("Task 7 (only if Task 2 fails): Title", ("7", "Title (only if Task 2 fails)")),
    ],
)
def test_a_bracket_before_the_title_goes_after_it(text: str, expected: tuple[str, str]) -> None:
    assert fields.task_heading(text) == expected


@pytest.mark.parametrize("text", ["Task 3 (P1): Title", "Task 2 (After Fix)", "Task 2 (after the cleanup)"])
def test_other_brackets_before_a_title_make_no_task_heading(text: str) -> None:
    assert fields.task_heading(text) is None


@pytest.mark.parametrize(
    ("title", "bare", "expected"),
    [
        ("Deploy (after Task 2)", False, ([Ref("2", "from the title")], None)),
        ("Deploy (blocked by #4)", False, ([Ref("4", "from the title")], None)),
        ("Deploy (needs Tasks 1 and 3)", False, ([Ref("1", "from the title"), Ref("3", "from the title")], None)),
        ("Deploy (waits for Task 2)", False, ([Ref("2", "from the title")], None)),
        ("Deploy （after Task 2）", False, ([Ref("2", "from the title")], None)),
        ("Deploy (after 2)", False, ([], None)),  # no word Task at a title's end: `(needs 2 GPUs)` is none
        ("Deploy (depends on 1, 2)", True, ([Ref("1", "from the title"), Ref("2", "from the title")], None)),
        ("Deploy (needs 2 GPUs)", True, ([], None)),
        ("Deploy (after the freeze)", False, ([], None)),
        ("Deploy (after Task 2) now", False, ([], None)),  # not at the end
        ("Deploy (unless the freeze holds)", False, ([], "unless the freeze holds")),
        ("Deploy (if needed)", False, ([], "if needed")),
        ("Deploy (Optional, high risk)", False, ([], "Optional, high risk")),
        ("Deploy (afterwards)", False, ([], None)),
        ("Deploy (iframe)", False, ([], None)),
    ],
)
def test_title_deps(title: str, bare: bool, expected: tuple[list[Ref], str | None]) -> None:
    assert title_deps(title, bare=bare) == expected
