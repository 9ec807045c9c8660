"""OpenSpec changes (`openspec/changes/<id>/`, Fission-AI/OpenSpec): tasks.md's groups are the tasks, in order.

The layout and forms are OpenSpec's (proposal.md with `## Why`, design.md, specs/<capability>/spec.md, tasks.md of
`## N. Group` headings over `- [ ] N.M` items, `.openspec.yaml`), met in its own repository's 107 changes: 84 in
exactly this form, the others with items that carry no number, headings without a number (`## Design Phase`) or
sub-items (`  - [ ] 1.1.1`). The texts here are our own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.errors import PlanError
from pm_agent.plan import Plan, load_plan
from pm_agent.plan.folder import plan_id_for_file

TASKS = """\
# Tasks: arithmetic

> Two small modules; nothing else changes.

## 1. Package layout

- [x] 1.1 Agree on the package layout

## 2. Addition

- [ ] 2.1 Create `src/calc/add.py` with `add(a, b)`
  - [ ] 2.1.1 Accept negative numbers
- [x] 2.2 Name the function add()
- [ ] 2.3 Add tests for add()

```markdown
## 9. Not a group: a heading in a code block
- [ ] 9.1 not an item
```

## 3. Subtraction

- [ ] 3.1 Create `src/calc/sub.py` with `sub(a, b)`

## Notes

Nothing here is a task.
"""
PROPOSAL = """\
# Change: Add arithmetic

## Why

The calculator cannot add or
subtract yet.

Nobody asked for division.

## What Changes

- add, sub
"""


def _change(root: Path, tasks: str = TASKS, *, design: bool = True, name: str = "add-arithmetic") -> Path:
    folder = root / "openspec" / "changes" / name
    (folder / "specs" / "arithmetic").mkdir(parents=True)
    (folder / "tasks.md").write_text(tasks, encoding="utf-8")
    (folder / "proposal.md").write_text(PROPOSAL, encoding="utf-8")
    (folder / "specs" / "arithmetic" / "spec.md").write_text("## ADDED Requirements\n", encoding="utf-8")
    if design:
        (folder / "design.md").write_text("## Decisions\n\n- One module per operation.\n", encoding="utf-8")
    return folder


@pytest.fixture(params=["folder", "tasks.md"])
def plan(request: pytest.FixtureRequest, tmp_path: Path) -> Plan:
    folder = _change(tmp_path)
    return load_plan(folder if request.param == "folder" else folder / "tasks.md")


def test_each_group_left_to_do_is_a_task_in_order(plan: Plan) -> None:
    assert [(t.id, t.title) for t in plan.tasks] == [("2", "Addition"), ("3", "Subtraction")]
    assert plan.tasks[0].depends_on == []
    assert [d.task_id for d in plan.tasks[1].depends_on] == ["2"]
    assert "OpenSpec applies" in (plan.tasks[1].depends_on[0].note or "")
    assert plan.queue == ["2", "3"]


def test_the_unchecked_items_are_the_criteria_and_the_body_points_at_the_change(plan: Plan) -> None:
    add = plan.tasks[0]
    assert add.acceptance_criteria == ["2.1 Create `src/calc/add.py` with `add(a, b)`", "2.3 Add tests for add()"]
    assert "OpenSpec change in `openspec/changes/add-arithmetic/`: its proposal.md, design.md and specs/" in add.body
    assert "2.1.1 Accept negative numbers" in add.body
    assert "[x] 2.2 Name the function add()" in add.body
    assert "9.1 not an item" in add.body  # the fence is the group's text, not a group of its own
    assert any("2 unchecked item(s) are the task (1 checked off already)" in line for line in add.decision_log)
    assert "Nothing here is a task" not in plan.tasks[1].body  # `## Notes` ends the last group


def test_the_plan_is_named_and_described_by_the_change(plan: Plan) -> None:
    assert plan.plan_id == "add-arithmetic"
    assert plan.header.title == "Add arithmetic"
    assert plan.header.goal == "The calculator cannot add or subtract yet."
    assert plan.design_path is not None
    assert Path(plan.design_path).name == "design.md"
    assert any("each of its 2 group(s) is a task" in w for w in plan.warnings)
    assert any(":5: group 'Package layout' is done" in w for w in plan.warnings)


def test_the_design_doc_is_the_proposal_without_a_design_and_the_users_when_given(tmp_path: Path) -> None:
    folder = _change(tmp_path, design=False)
    assert Path(load_plan(folder).design_path or "").name == "proposal.md"
    assert "its proposal.md and specs/ say why" in load_plan(folder).tasks[0].body
    mine = tmp_path / "mine.md"
    mine.write_text("# Design\n", encoding="utf-8")
    assert load_plan(folder, mine).design_path == str(mine)


def test_a_change_without_a_proposal_title_is_named_by_its_folder(tmp_path: Path) -> None:
    folder = _change(tmp_path)
    (folder / "proposal.md").write_text("## Why\n\nBecause.\n", encoding="utf-8")
    plan = load_plan(folder)
    assert (plan.header.title, plan.header.goal) == ("add-arithmetic", "Because.")


def test_a_done_group_leaves_nothing_in_the_task_before_it(tmp_path: Path) -> None:
    tasks = "## 1. First\n\n- [ ] 1.1 Do it\n\n## 2. Done\n\n- [x] 2.1 Did it\n\nDone group's prose.\n"
    plan = load_plan(_change(tmp_path, tasks))
    assert [t.id for t in plan.tasks] == ["1"]
    assert "Did it" not in plan.tasks[0].body
    assert "prose" not in plan.tasks[0].body


def test_groups_without_distinct_numbers_are_numbered_by_position(tmp_path: Path) -> None:
    tasks = "## Design Phase\n- [ ] Research the layout\n\n## 2. Build\n- [ ] Build it\n\n## Phase 2: Ship\n- [ ] Go\n"
    plan = load_plan(_change(tmp_path, tasks))
    assert [(t.id, t.title) for t in plan.tasks] == [("1", "Design Phase"), ("2", "Build"), ("3", "Ship")]
    assert plan.tasks[0].acceptance_criteria == ["Research the layout"]


def test_phase_headings_give_their_number(tmp_path: Path) -> None:
    tasks = "## Phase 1: Validate names\n\n- [ ] 1.1 Write it\n\n## Phase 2: Create changes\n\n- [ ] 2.1 Write it\n"
    plan = load_plan(_change(tmp_path, tasks))
    assert [(t.id, t.title) for t in plan.tasks] == [("1", "Validate names"), ("2", "Create changes")]


def test_a_change_whose_items_are_all_checked_has_nothing_to_run(tmp_path: Path) -> None:
    tasks = "# Tasks\n\n## 1. First\n- [x] 1.1 Did it\n\n## 2. Second\n- [X] 2.1 Did that\n"
    with pytest.raises(PlanError) as caught:
        load_plan(_change(tmp_path, tasks))
    assert caught.value.line == 3
    assert "every item of its 2 OpenSpec task group(s) is checked off" in str(caught.value)


def test_the_folder_of_changes_asks_for_one_change(tmp_path: Path) -> None:
    _change(tmp_path, name="add-arithmetic")
    _change(tmp_path, name="fix-rounding")
    (tmp_path / "openspec" / "changes" / "archive").mkdir()
    with pytest.raises(PlanError) as caught:
        load_plan(tmp_path / "openspec" / "changes")
    said = str(caught.value)
    assert "a folder of 2 OpenSpec change(s) (add-arithmetic, fix-rounding)" in said
    assert "openspec/changes/add-arithmetic" in said


def test_a_change_without_tasks_is_refused_saying_so(tmp_path: Path) -> None:
    folder = _change(tmp_path)
    (folder / "tasks.md").unlink()
    with pytest.raises(PlanError, match=r"an OpenSpec change with no tasks.md yet: write its tasks first"):
        load_plan(folder)


def test_a_tasks_md_outside_an_openspec_change_reads_as_before(tmp_path: Path) -> None:
    """Without proposal.md or .openspec.yaml beside it, the same list is a Kiro list: each item a task."""
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "tasks.md").write_text("## 1. First\n\n- [ ] 1.1 Do it\n- [ ] 1.2 Do that\n", encoding="utf-8")
    plan = load_plan(tmp_path / "work" / "tasks.md")
    assert [t.id for t in plan.tasks] == ["1.1", "1.2"]
    assert plan.plan_id == "work"


def test_the_openspec_marker_file_makes_a_change_too(tmp_path: Path) -> None:
    folder = _change(tmp_path)
    (folder / "proposal.md").unlink()
    (folder / ".openspec.yaml").write_text("schema: spec-driven\n", encoding="utf-8")
    plan = load_plan(folder)
    assert [t.id for t in plan.tasks] == ["2", "3"]
    assert plan.header.title == "add-arithmetic"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("specs/001-photo-albums/tasks.md", "001-photo-albums"),  # Spec Kit
        (".kiro/specs/user-auth/tasks.md", "user-auth"),  # Kiro
        ("docs/plans/tasks/tasks.md", "tasks"),  # only generic folders above it: its own name
        ("docs/plans/2026-02-18-csv-export.md", "csv-export"),
    ],
)
def test_a_task_list_named_tasks_md_is_named_by_its_folder(tmp_path: Path, path: str, expected: str) -> None:
    assert plan_id_for_file(tmp_path / path) == expected


def test_group_numbers_are_the_ids_and_the_note_names_them(tmp_path: Path) -> None:
    tasks = "## 3. Parser\n\n- [ ] 3.1 Read it\n\n## 5. Printer\n\n- [ ] 5.1 Write it\n"
    plan = load_plan(_change(tmp_path, tasks))
    assert [t.id for t in plan.tasks] == ["3", "5"]
    assert plan.tasks[1].body.startswith("## Task 5: Printer\n\nThis task is a group of the OpenSpec change in")
    assert "OpenSpec group 5: its 1 unchecked item(s) are the task" in plan.tasks[1].decision_log


def test_a_done_group_inside_a_task_leaves_its_items_out_of_it(tmp_path: Path) -> None:
    tasks = "## 1. Build\n\n- [ ] 1.1 Build it\n\n### 9. Done part\n\n- [x] 9.1 Did it\n\n## 2. Ship\n- [ ] 2.1 Go\n"
    plan = load_plan(_change(tmp_path, tasks))
    assert [t.id for t in plan.tasks] == ["1", "2"]
    assert "Did it" not in plan.tasks[0].body


def test_the_proposal_title_and_why_outside_code_blocks(tmp_path: Path) -> None:
    folder = _change(tmp_path)
    (folder / "proposal.md").write_text(
        "```markdown\n# Change: Not this\n## Why\nNot this either.\n```\n\n# Change: This one\n\n## Why\n\nThis.\n",
        encoding="utf-8",
    )
    plan = load_plan(folder)
    assert (plan.header.title, plan.header.goal) == ("This one", "This.")


def test_a_long_folder_of_changes_is_named_in_part(tmp_path: Path) -> None:
    for n in range(10):
        _change(tmp_path, name=f"change-{n}")
    with pytest.raises(PlanError, match=r"\(change-0, .*, change-7 and 2 more\): run one change") as caught:
        load_plan(tmp_path / "openspec" / "changes")
    assert caught.value.path == tmp_path / "openspec" / "changes"


def test_items_outside_any_group_are_no_task(tmp_path: Path) -> None:
    tasks = "- [ ] a stray item\n\n# Tasks\n\n- [ ] one under the title\n\n## 1. Build\n- [ ] 1.1 Go\n"
    plan = load_plan(_change(tmp_path, tasks))
    assert [(t.id, t.acceptance_criteria) for t in plan.tasks] == [("1", ["1.1 Go"])]


def test_a_why_paragraph_that_runs_into_the_next_heading(tmp_path: Path) -> None:
    folder = _change(tmp_path)
    (folder / "proposal.md").write_text("# Change: Add it\n## Why\nBecause.\n## What Changes\n- it\n", encoding="utf-8")
    assert (load_plan(folder).header.title, load_plan(folder).header.goal) == ("Add it", "Because.")
