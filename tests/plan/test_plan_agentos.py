"""Agent OS task breakdowns (plan/agentos.py): each `#### Task Group N:` is a task, with its `**Dependencies:**`,
its items and its `**Acceptance Criteria:**`; a group whose items are all checked is done.

The form is Agent OS's own template (agent-os/specs/<date>-<name>/tasks.md, `N.0 Complete ...` items with the
group's steps nested under them), met in public repositories' breakdowns; the text is ours. Before, each item was
a task of its own (`1.0 Complete database layer`, `1.3 Ensure database layer tests pass`), read as a Kiro list.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.plan import Plan, fastpath, load_plan
from pm_agent.plan.agentos import as_tasks, has_groups
from pm_agent.plan.checkoff import check_off

BREAKDOWN = """\
# Task Breakdown: Photo albums

## Overview
Total Tasks: 9

## Task List

### Database Layer

#### Task Group 1: Album model
**Dependencies:** None

- [ ] 1.0 Complete database layer
  - [ ] 1.1 Write 2-8 focused tests for the Album model
  - [ ] 1.2 Create Album model with title and owner
    - Reuse pattern from: app/models/photo.rb
  - [ ] 1.3 Ensure database layer tests pass

**Acceptance Criteria:**
- The tests written in 1.1 pass
- Albums belong to a user

### Frontend

#### Task Group 2: Date picker
**Dependencies:** None

- [x] 2.0 Complete the date picker
  - [x] 2.1 Write tests for it

#### Task Group 3: Album pages
**Dependencies:** Task Group 1, Task Group 2

- [ ] 3.0 Complete album pages
  - [ ] 3.1 Write 2-8 focused tests for the pages

```markdown
#### Task Group 9: a heading in a code block
```

**Acceptance Criteria:**
- Albums are listed

### Testing

#### Task Group 4: Test review
**Dependencies:** Task Groups 1-3

- [ ] 4.0 Review the tests and fill critical gaps

## Execution Order
1. Task Group 1
"""


@pytest.fixture(params=[True, False], ids=["fast", "markdown-it"])
def plan(request: pytest.FixtureRequest, tmp_path: Path) -> Plan:
    folder = tmp_path / "agent-os" / "specs" / "2026-01-05-photo-albums"
    folder.mkdir(parents=True)
    (folder / "tasks.md").write_text(BREAKDOWN, encoding="utf-8")
    fastpath.ENABLED = request.param
    try:
        return load_plan(folder / "tasks.md")
    finally:
        fastpath.ENABLED = True


def test_each_group_left_to_do_is_a_task(plan: Plan) -> None:
    assert [(t.id, t.title) for t in plan.tasks] == [("1", "Album model"), ("3", "Album pages"), ("4", "Test review")]
    deps = {t.id: [d.task_id for d in t.depends_on] for t in plan.tasks}
    assert deps == {"1": [], "3": ["1"], "4": ["1", "3"]}  # group 2 is done: met, in the range too
    assert plan.queue == ["1", "3", "4"]
    assert plan.plan_id == "photo-albums"
    assert any("'Task 2: Date picker' is checked off in the plan: done, not run" in w for w in plan.warnings)


def test_a_group_carries_its_criteria_and_items(plan: Plan) -> None:
    album = plan.tasks[0]
    assert album.acceptance_criteria == ["The tests written in 1.1 pass", "Albums belong to a user"]
    assert "- [ ] 1.2 Create Album model with title and owner" in album.body
    assert "1.3 Ensure database layer tests pass" in album.body
    assert "#### Task Group 9: a heading in a code block" in plan.tasks[1].body  # code is left as written


def test_the_release_checks_a_groups_items_off() -> None:
    text = as_tasks(BREAKDOWN)
    assert text.count("\n") == BREAKDOWN.count("\n")
    assert "#### [x] Task 2: Date picker" in text
    ticked, count = check_off(BREAKDOWN, [10], [10, 24, 30, 47])
    assert count == 4  # 1.0 and its three steps; group 3's items are its own
    assert "- [x] 1.0 Complete database layer\n  - [x] 1.1" in ticked
    assert "- [ ] 3.0 Complete album pages" in ticked


def test_a_plan_without_group_headings_is_not_converted(tmp_path: Path) -> None:
    text = "# Plan\n\nWe will do Task Group 1 later.\n\n### Task 1: A\n"
    assert not has_groups(text)
    plan_file = tmp_path / "plan.md"
    plan_file.write_text(text, encoding="utf-8")
    assert [t.id for t in load_plan(plan_file).tasks] == ["1"]
