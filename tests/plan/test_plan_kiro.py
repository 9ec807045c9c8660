"""Kiro task lists (a Kiro spec's tasks.md): numbered checklist items, sub-tasks nested or at the margin.

fixtures/forms/kiro-tasks.md is a short list of our own in that form: a done item, a group with nested sub-tasks
(one optional, one done), a checkpoint, a group whose sub-task sits at the margin, an item inside a fence.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.errors import PlanError
from pm_agent.plan import load_plan
from pm_agent.plan.markdown import fence_after, heading_line, heading_text, literal, parse_tree

FORM = Path(__file__).parent / "fixtures" / "forms" / "kiro-tasks.md"


def test_each_leaf_item_left_to_do_is_a_task_run_after_the_one_before() -> None:
    plan = load_plan(FORM)
    assert [(t.id, t.line, t.title) for t in plan.tasks] == [
        ("2.1", 8, "Write the note model in src/notes/model.py"),
        ("2.4", 20, "Add search by title to src/notes/__init__.py"),  # bare: no emphasis made of it
        ("4.1", 28, "Add the notes add command"),  # the sub-task at the margin after its group
    ]
    assert {t.id: [d.task_id for d in t.depends_on] for t in plan.tasks} == {"2.1": [], "2.4": ["2.1"], "4.1": ["2.4"]}


def test_an_items_details_are_its_steps_and_its_title_its_criterion() -> None:
    first, second, third = load_plan(FORM).tasks
    assert first.steps == ["Add a `Note` dataclass with a title and a body", "Reject an empty title"]
    assert first.acceptance_criteria == ["Write the note model in `src/notes/model.py`"]
    assert "_Requirements: 2.1, 2.2_" in first.description  # kept as prose, no step
    # A done or optional sub-task's details are no steps of the task above them.
    assert second.steps == ["Match case-insensitively"]
    assert third.steps == ["Read the title and the body from the arguments"]
    assert not any("Property 1" in t.body or "JSON" in t.body for t in (first, second))


def test_done_optional_and_checkpoint_items_are_named_and_not_run() -> None:
    plan = load_plan(FORM)
    where = str(FORM)
    assert plan.warnings[:5] == [
        f"{where}: a Kiro task list: its 3 unchecked numbered items without sub-tasks are read as the tasks, each"
        " after the one before",
        f"{where}:3: 1 'Set up the notes package' is done (checked off in the plan): not run",
        f"{where}:13: 2.2 'Write property tests for the note model' is optional in the plan (`*`): not run",
        f"{where}:16: 2.3 'Add the JSON store' is done (checked off in the plan): not run",
        f"{where}:24: 3 'Checkpoint - Make sure all tests pass' is a checkpoint (pm-agent's gates run the tests after"
        " every task): not run",
    ]


def test_a_list_with_nothing_left_to_run_says_so(tmp_path: Path) -> None:
    done = tmp_path / "tasks.md"
    done.write_text("# Implementation Plan\n\n- [x] 1. Set up\n- [ ]* 2. Optional extras\n")
    with pytest.raises(PlanError, match=r"none of its 2 Kiro items is left to run") as info:
        load_plan(done)
    assert info.value.line == 3


def test_task_headings_win_over_numbered_items(tmp_path: Path) -> None:
    plan_path = tmp_path / "plan.md"
    plan_path.write_text("# Plan\n\n## Task 1: Models\n\n- [ ] 1. Write the model\n- [ ] 2. Wire it\n")
    assert [t.id for t in load_plan(plan_path).tasks] == ["1"]


def test_an_item_is_a_group_only_of_the_items_numbered_under_it(tmp_path: Path) -> None:
    plan_path = tmp_path / "tasks.md"
    plan_path.write_text("# Implementation Plan\n\n- [ ] 1. Write the reader\n- [ ] 12. Write the writer\n")
    assert [t.id for t in load_plan(plan_path).tasks] == ["1", "12"]  # 12 is not one of 1's sub-tasks


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("Wire src/notes/__init__.py", "Wire src/notes/__init__.py"),
        ("Wire the `__init__.py` exports", "Wire the __init__.py exports"),  # a code span reads as its code
        ("a [P] *b* <c> `x_y` and __d__", "a [P] *b* <c> x_y and __d__"),
        ("two ``a`b`` spans and `c_d`", "two a`b spans and c_d"),
        (r"a back\slash", r"a back\slash"),
    ],
)
def test_a_title_made_a_heading_reads_back_as_written(text: str, read: str) -> None:
    """Items name paths bare; made into a heading, their words must not turn into emphasis, links or tags."""
    tree = parse_tree(f"## {literal(text)}")
    assert heading_text(tree.children[0]) == read


def test_an_item_under_way_is_still_to_do_and_a_done_list_says_so(tmp_path: Path) -> None:
    plan_path = tmp_path / "tasks.md"
    plan_path.write_text("# Implementation Plan\n\n- [x] 1. Set up\n- [-] 2. Write the reader\n- [x] 3. Ship\n")
    assert [t.id for t in load_plan(plan_path).tasks] == ["2"]  # `[-]`: Kiro's mark of a task under way
    plan_path.write_text("# Implementation Plan\n\n- [x] 1. Set up\n- [x] 2. Write the reader\n")
    with pytest.raises(PlanError, match=r"none of its 2 Kiro items is left to run") as info:
        load_plan(plan_path)
    assert info.value.line == 3


def test_a_done_list_does_not_hide_a_plan_read_by_its_numbered_headings(tmp_path: Path) -> None:
    """A list form's "nothing left to run" stands only when no other reading finds tasks."""
    plan_path = tmp_path / "plan.md"
    plan_path.write_text(
        "# Plan\n\n## 1. Reader\n\n**Files:**\n- Create: `src/reader.py`\n\nDone so far:\n\n- [x] 1. Sketch the API\n\n"
        "## 2. Writer\n\n**Files:**\n- Create: `src/writer.py`\n"
    )
    assert [(t.id, t.title) for t in load_plan(plan_path).tasks] == [("1", "Reader"), ("2", "Writer")]


@pytest.mark.parametrize(
    ("before", "line", "after"),
    [
        (None, "```python", "```"),
        (None, "    ```", None),  # indented four: code, not a fence
        ("```", "text", "```"),
        ("```", "```", None),
        ("````", "```", "````"),  # a shorter run does not close it
        ("```", "~~~", "```"),  # nor the other mark
        ("~~~", "~~~~", None),
    ],
)
def test_the_list_forms_fence_tracking(before: str | None, line: str, after: str | None) -> None:
    assert fence_after(before, line) == after


def test_a_fenced_example_holding_another_mark_is_no_task(tmp_path: Path) -> None:
    plan_path = tmp_path / "tasks.md"
    plan_path.write_text(
        "# Implementation Plan\n\n- [ ] 1. Write the reader\n\n~~~~markdown\n```\n- [ ] 2. An example item\n~~~\n"
        "- [ ] 3. Still the example\n~~~~\n\n- [ ] 4. Write the writer\n"
    )
    assert [t.id for t in load_plan(plan_path).tasks] == ["1", "4"]


def test_heading_line() -> None:
    assert heading_line("## Phase 2: Export ##") == (2, "Phase 2: Export")
    assert heading_line("   # Title") == (1, "Title")
    assert heading_line("####### seven") is None
    assert heading_line("#hashtag") is None
