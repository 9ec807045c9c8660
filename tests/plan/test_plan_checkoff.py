"""Checking off a completed task's items in the plan's own text (plan/checkoff.py), for each form that has them:
the lines come from `load_plan`, as the release takes them from the run's tasks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pm_agent.plan import load_plan
from pm_agent.plan.checkoff import check_off, released_plan, task_files
from pm_agent.plan.models import Task

SUPERPOWERS = """\
# Plan

## Phase 1

### Task 1: Add

- [ ] **Step 1: Write the failing test**
- [ ] **Step 2: Make it pass**

```markdown
- [ ] a checklist the task writes into a README
```

### Task 2: Sub

- [ ] **Step 1: Write the failing test**

## Release checklist

- [ ] Tag the release
"""
KIRO = """\
# Implementation Plan

- [ ] 1. Arithmetic
  - [ ] 1.1 Implement add()
    - Return the sum
  - [ ] 1.2 Implement sub()
"""
SPECKIT = """\
# Tasks

## Phase 1: Setup

- [ ] T001 Create the package in src/calc/__init__.py
- [ ] T002 [P] Add src/calc/add.py
"""
TRAE = "# Plan\n\n### [ ] Task 1: Add\n\n- [ ] step one\n\n### [ ] Task 2: Sub\n"


def _ticked(tmp_path: Path, text: str, name: str, done: list[str]) -> str:
    plan_file = tmp_path / name
    plan_file.write_text(text, encoding="utf-8")
    plan = load_plan(plan_file)
    lines = [t.line for t in plan.tasks if t.id in done]
    assert len(lines) == len(done), [t.id for t in plan.tasks]
    return check_off(text, lines)[0]


def test_a_heading_task_ticks_its_section_only(tmp_path: Path) -> None:
    ticked = _ticked(tmp_path, SUPERPOWERS, "plan.md", ["1"])
    assert "- [x] **Step 1: Write the failing test**\n- [x] **Step 2: Make it pass**" in ticked
    assert "- [ ] a checklist the task writes into a README" in ticked  # fenced: the task's content, not a box
    assert ticked.count("[x]") == 2  # task 2's step and the release checklist stay
    last = _ticked(tmp_path, SUPERPOWERS, "plan.md", ["2"])
    assert last.count("[x]") == 1
    assert "- [ ] Tag the release" in last  # `## Release checklist` ends task 2's section


def test_a_kiro_item_is_ticked_alone(tmp_path: Path) -> None:
    ticked = _ticked(tmp_path, KIRO, "tasks.md", ["1.1"])
    assert "  - [x] 1.1 Implement add()" in ticked
    assert "  - [ ] 1.2 Implement sub()" in ticked
    assert "- [ ] 1. Arithmetic" in ticked  # a group: not a task of its own


def test_spec_kit_items(tmp_path: Path) -> None:
    ticked = _ticked(tmp_path, SPECKIT, "tasks.md", ["T002"])
    assert "- [ ] T001" in ticked
    assert "- [x] T002 [P] Add src/calc/add.py" in ticked


def test_a_checkbox_heading_is_ticked_with_its_items(tmp_path: Path) -> None:
    ticked = _ticked(tmp_path, TRAE, "plan.md", ["1"])
    assert ticked == TRAE.replace("### [ ] Task 1", "### [x] Task 1").replace("- [ ] step", "- [x] step")


def test_an_openspec_group_ticks_every_item_it_holds(tmp_path: Path) -> None:
    folder = tmp_path / "openspec" / "changes" / "add-calc"
    folder.mkdir(parents=True)
    (folder / "proposal.md").write_text("## Why\n\nBecause.\n", encoding="utf-8")
    text = "## 1. Add\n\n- [ ] 1.1 Write add()\n  - [ ] 1.1.1 Negatives\n- [x] 1.2 Name it\n\n## 2. Sub\n- [ ] 2.1 x\n"
    (folder / "tasks.md").write_text(text, encoding="utf-8")
    plan = load_plan(folder)
    assert task_files(folder, plan.tasks[:1]) == {folder / "tasks.md": plan.tasks[:1]}
    ticked, count = check_off(text, [plan.tasks[0].line])
    assert count == 2
    assert ticked == text.replace("[ ] 1.1", "[x] 1.1")


def test_line_endings_and_the_rest_of_the_text_are_kept() -> None:
    text = "### Task 1: A\r\n- [ ] step\r\n* [ ] other step\r\n1. [ ] numbered\r\n- [X] done\r\n"
    ticked, count = check_off(text, [1])
    assert count == 3
    assert ticked == "### Task 1: A\r\n- [x] step\r\n* [x] other step\r\n1. [x] numbered\r\n- [X] done\r\n"


@pytest.mark.parametrize("lines", [[], [0], [-1], [99]])
def test_nothing_to_tick(lines: list[int]) -> None:
    assert check_off("### Task 1: A\n- [ ] step", lines) == ("### Task 1: A\n- [ ] step", 0)


def test_task_files_of_a_file_a_folder_and_a_remediation(tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.md"
    plan_file.write_text("x", encoding="utf-8")
    tasks = [Task(id="1", title="a", line=3), Task(id="fix-1", title="b", line=0)]
    assert task_files(plan_file, tasks) == {plan_file: tasks[:1]}
    folder = tmp_path / "tasks"
    folder.mkdir()
    own = [Task(id="2", title="b", line=4, source="r"), Task(id="1", title="a", line=1, source=str(folder / "01.md"))]
    assert task_files(folder, own) == {folder / "01.md": own[1:]}  # a relative source cannot be placed: left alone


def test_an_item_ends_at_the_next_line_as_far_out_as_it() -> None:
    text = "- [ ] 1.1 Add\n  - [ ] 1.1.1 nested\n  ```\n  - [ ] code\n  ```\n- [ ] 1.2 Sub\n```\n- [ ] code\n```\n"
    assert check_off(text, [1]) == (text.replace("[ ] 1.1", "[x] 1.1"), 2)
    assert check_off(text, [8]) == (text, 0)  # a line in a fence is no item (a plan edited since it was read)


def test_the_release_checks_off_only_the_plan_the_branch_holds_as_run(tmp_path: Path) -> None:
    repo, release = tmp_path / "repo", tmp_path / "release"
    text = "### Task 1: A\n- [ ] step\n\n#### Task 2: B\n- [ ] step\n"  # task 2 in task 1's section
    for root in (repo, release):
        (root / "docs").mkdir(parents=True)
        (root / "docs" / "plan.md").write_text(text, encoding="utf-8")
    plan = repo / "docs" / "plan.md"
    done = ([Task(id="1", title="A", line=1), Task(id="2", title="B", line=4)], {"1"})  # task 2 not done
    ticked = "### Task 1: A\n- [x] step\n\n#### Task 2: B\n- [ ] step\n"
    said = ["docs/plan.md: 1 checklist item(s) of the completed tasks checked off"]
    assert released_plan(repo, plan, release, *done) == ({"docs/plan.md": ticked}, said)
    (release / "docs" / "plan.md").write_text(ticked, encoding="utf-8")
    assert released_plan(repo, plan, release, *done) == ({}, [])  # an earlier release checked it off
    (release / "docs" / "plan.md").write_text(text + "more\n", encoding="utf-8")
    assert released_plan(repo, plan, release, *done) == (
        {},
        ["docs/plan.md: the working branch's copy is not the plan as run: nothing checked off"],
    )
    (release / "docs" / "plan.md").unlink()
    assert released_plan(repo, plan, release, *done) == ({}, [])  # not committed: nothing to say of it
    outside = tmp_path / "plan.md"
    outside.write_text(text, encoding="utf-8")
    assert released_plan(repo, outside, release, *done) == ({}, [])


def test_items_an_agent_checked_off_on_the_branch_are_kept(tmp_path: Path) -> None:
    """OpenSpec asks the agent to check off its items: the branch's copy then differs from the plan by its boxes
    only, and the release checks off the rest on it."""
    repo, release = tmp_path / "repo", tmp_path / "release"
    text = "### Task 1: A\n- [ ] one\n- [ ] two\n\n### Task 2: B\n- [ ] three\n"
    for root, body in ((repo, text), (release, text.replace("[ ] one", "[x] one").replace("[ ] three", "[X] three"))):
        root.mkdir()
        (root / "plan.md").write_text(body, encoding="utf-8")
    files, said = released_plan(repo, repo / "plan.md", release, [Task(id="1", title="A", line=1)], {"1"})
    assert files == {"plan.md": "### Task 1: A\n- [x] one\n- [x] two\n\n### Task 2: B\n- [X] three\n"}
    assert said == ["plan.md: 1 checklist item(s) of the completed tasks checked off"]


def test_a_task_master_list_whose_statuses_moved_on_the_branch(tmp_path: Path) -> None:
    repo, release = tmp_path / "repo", tmp_path / "release"
    data = {"master": {"tasks": [{"id": 1, "title": "A", "status": "pending", "dependencies": []}]}}
    text = json.dumps(data, indent=2) + "\n"
    for root, body in ((repo, text), (release, text.replace('"pending"', '"in-progress"'))):
        (root / ".taskmaster" / "tasks").mkdir(parents=True)
        (root / ".taskmaster" / "tasks" / "tasks.json").write_text(body, encoding="utf-8")
    files, said = released_plan(repo, repo / ".taskmaster", release, [Task(id="1", title="A", line=4)], {"1"})
    assert files == {".taskmaster/tasks/tasks.json": text.replace('"pending"', '"done"')}
    assert said == [".taskmaster/tasks/tasks.json: 1 task status(es) set to done"]
    (release / ".taskmaster" / "tasks" / "tasks.json").write_text(text.replace('"A"', '"B"'), encoding="utf-8")
    assert released_plan(repo, repo / ".taskmaster", release, [Task(id="1", title="A", line=4)], {"1"})[0] == {}


def test_a_task_ends_where_the_next_task_starts_even_inside_its_section() -> None:
    text = "## Task 1: A\n- [ ] a\n### Task 2: B\n- [ ] b\n## Task 3: C\n- [ ] c"
    assert check_off(text, [1, 3]) == (text.replace("[ ]", "[x]", 2) + "", 2)  # a and b, not c
    assert check_off(text, [1, 3, 5])[0] == text.replace("[ ]", "[x]")
    assert check_off(text, [1])[0] == "## Task 1: A\n- [x] a\n### Task 2: B\n- [x] b\n## Task 3: C\n- [ ] c"
    # Task 2 not done: its items are its own, though they lie in task 1's section.
    assert check_off(text, [1], [1, 3, 5])[0] == "## Task 1: A\n- [x] a\n### Task 2: B\n- [ ] b\n## Task 3: C\n- [ ] c"
    assert check_off(text, [5])[0].endswith("- [x] c")  # a task on the last lines
    nested = "- [ ] Task 1: A\n  - [ ] Task 2: B\n    - [ ] step of B\n- [ ] Task 3: C"
    assert check_off(nested, [1, 2, 4])[0] == nested.replace("[ ]", "[x]")
    assert check_off(nested, [1, 2])[0].endswith("- [ ] Task 3: C")
    assert check_off(nested, [1], [1, 2, 4])[0] == nested.replace("[ ] Task 1", "[x] Task 1")


def test_items_after_a_fence_in_the_section_are_the_tasks_too() -> None:
    text = "### Task 1: A\n```\n- [ ] code\n```\n- [ ] after the fence\n- [ ] last"
    assert check_off(text, [1]) == ("### Task 1: A\n```\n- [ ] code\n```\n- [x] after the fence\n- [x] last", 2)


def test_each_file_of_a_folder_plan_on_its_own(tmp_path: Path) -> None:
    repo, release = tmp_path / "repo", tmp_path / "release"
    for root in (repo, release):
        (root / "plans").mkdir(parents=True)
        for name in ("00.md", "01.md", "02.md", "03.md"):
            (root / "plans" / name).write_text("# Task 1: A\n- [ ] step\n", encoding="utf-8")
    (release / "plans" / "01.md").unlink()  # not on the branch
    (release / "plans" / "02.md").write_text("# Task 1: A\n- [ ] step\nedited\n", encoding="utf-8")
    done = [Task(id="fix-1", title="remediation", line=0)]
    done += [Task(id=n, title="A", line=1, source=str(repo / "plans" / f"0{n}.md")) for n in ("0", "1", "2", "3")]
    files, said = released_plan(repo, repo / "plans", release, done, {"1", "2", "3"})  # 00.md: nothing done
    assert files == {"plans/03.md": "# Task 1: A\n- [x] step\n"}
    assert said == [
        "plans/02.md: the working branch's copy is not the plan as run: nothing checked off",
        "plans/03.md: 1 checklist item(s) of the completed tasks checked off",
    ]
