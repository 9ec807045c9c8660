"""Agent OS 1.x spec task lists (`.agent-os/specs/<date>-<name>/tasks.md`): each parent task with its sub-tasks
is one task, in order.

The layouts are Agent OS 1.x's as met in public repositories' specs: `# Spec Tasks`, the line naming the spec
(`@.agent-os/specs/.../spec.md`), `## Tasks`, then `- [ ] N. Parent` items with nested `- [ ] N.M` sub-tasks
(the first writing tests, the last checking they pass), or `### N. Title` headings over flat `- [ ] N.M` items;
spec.md (`> Spec: Name`), spec-lite.md and sub-specs/ beside it. The texts here are our own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.errors import PlanError
from pm_agent.plan import Plan, load_plan

SPEC_DIR = ".agent-os/specs/2026-03-02-unit-conversion"
TASKS = f"""\
# Spec Tasks

These are the tasks to be completed for the spec detailed in @{SPEC_DIR}/spec.md

> Created: 2026-03-02
> Status: Ready for Implementation

The form, shown (not a task):

```markdown
- [ ] 9. An example parent
```

## Tasks

- [ ] 1. Length conversions
  - [ ] 1.1 Write tests for metres to feet and back
  - [ ] 1.2 Create `src/units/length.py` with `to_feet()` and `to_metres()`

    ```python
    ### 8. not a heading: code in a sub-task's example
    - [ ] 9.1 not a sub-task either
    ```

  - [ ] 1.3 Verify all length tests pass
- [ ] Tidy the length docs (no number: not a sub-task of 1)

- [x] 2. Package layout
  - [ ] 2.1 Create the `units` package

- [ ] 3. Temperature conversions
  - [x] 3.1 Write tests for Celsius to Fahrenheit
  - [ ] 3.2 Create `src/units/temperature.py`

- [ ] 4. Document the conversions in README.md

- [ ] 5. Weight conversions
  - [x] 5.1 Write tests for kilograms to pounds
  - [x] 5.2 Create `src/units/weight.py`

- [ ] 6. Volume conversions (optional) - SKIPPED

  - [ ] 6.1 Create `src/units/volume.py`

- [ ] 7. Area conversions
  - [ ] 7.1 Update the **README**
  - [ ] 7.2 **Create `src/units/area.py`**

## Notes

Nothing here is a task.
"""
SPEC = "# Spec Requirements Document\n\n> Spec: Unit Conversion\n> Created: 2026-03-02\n\n## Overview\n\nConvert.\n"


def spec(tmp_path: Path, text: str = TASKS, folder: str = SPEC_DIR) -> Path:
    where = tmp_path / folder
    (where / "sub-specs").mkdir(parents=True)
    (where / "tasks.md").write_text(text, encoding="utf-8")
    (where / "spec.md").write_text(SPEC, encoding="utf-8")
    (where / "spec-lite.md").write_text("# Spec Summary (Lite)\n\nConvert units.\n", encoding="utf-8")
    (where / "sub-specs" / "technical-spec.md").write_text("# Technical Specification\n", encoding="utf-8")
    return where / "tasks.md"


def load(path: Path) -> Plan:
    return load_plan(path, repo=path.parents[3] if ".agent-os" in path.parts else path.parent)


def line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.split("\n"), start=1) if needle in line)


def test_each_parent_task_with_its_sub_tasks_is_one_task_in_order(tmp_path: Path) -> None:
    plan = load(spec(tmp_path))
    assert [(t.id, t.title) for t in plan.tasks] == [
        ("1", "Length conversions"),
        ("3", "Temperature conversions"),
        ("4", "Document the conversions in README.md"),
        ("7", "Area conversions"),
    ]
    one, three, four, seven = plan.tasks
    assert one.acceptance_criteria == [
        "Write tests for metres to feet and back",
        "Create `src/units/length.py` with `to_feet()` and `to_metres()`",
        "Verify all length tests pass",
    ]
    assert three.acceptance_criteria == ["Create `src/units/temperature.py`"]  # 3.1 is checked off
    assert "Agent OS task 3: its 1 unchecked sub-task(s) are the task (1 checked off already)" in three.decision_log
    assert four.acceptance_criteria == ["Document the conversions in README.md"]  # no sub-task: its title
    assert "Agent OS task 4 has no sub-task: its title is the task" in four.decision_log
    assert seven.acceptance_criteria == ["Update the **README**", "Create `src/units/area.py`"]
    assert three.dependency_ids() == ["1"]
    assert four.dependency_ids() == ["3"]
    assert seven.dependency_ids() == ["4"]
    assert "Agent OS runs a spec's tasks in order" in (four.depends_on[0].note, four.depends_on[0].reason)


def test_a_parents_lines_are_its_body_at_the_margin_and_done_parents_leave_none(tmp_path: Path) -> None:
    one, _, four, seven = load(spec(tmp_path)).tasks
    assert "\n- [ ] 1.1 Write tests for metres to feet and back\n" in one.body
    assert "\n- [ ] 1.3 Verify all length tests pass\n" in one.body
    assert one.body.rstrip().endswith("- [ ] Tidy the length docs (no number: not a sub-task of 1)")  # 2: blank
    assert "\n  ```python\n  ### 8. not a heading: code in a sub-task's example\n" in one.body  # kept, as code
    assert "Package layout" not in one.body  # task 2 is done: its lines are gone
    assert "2.1 Create the `units` package" not in one.body
    assert "Weight conversions" not in four.body
    assert "Volume" not in four.body
    assert "\n- [ ] 7.2 **Create `src/units/area.py`**" in seven.body
    assert "Nothing here is a task" not in seven.body


def test_done_parents_are_named_not_run(tmp_path: Path) -> None:
    plan = load(spec(tmp_path))
    warnings = "\n".join(plan.warnings)
    checked = line_of(TASKS, "2. Package layout")  # the parent is checked, one sub-task is not
    assert f"tasks.md:{checked}: task 2 'Package layout' is checked off: not run" in warnings
    weighed = line_of(TASKS, "5. Weight conversions")  # its sub-tasks all are
    assert f"tasks.md:{weighed}: task 5 'Weight conversions' is checked off: not run" in warnings
    skipped = line_of(TASKS, "6. Volume")
    volume = "task 6 'Volume conversions (optional) - SKIPPED' is marked skipped: not run"
    assert f"tasks.md:{skipped}: {volume}" in warnings
    assert "each of its 4 parent task(s) is a task with its sub-tasks" in warnings
    assert "Tidy the length docs" not in " ".join(c for t in plan.tasks for c in t.acceptance_criteria)
    assert "not a sub-task either" not in " ".join(c for t in plan.tasks for c in t.acceptance_criteria)
    assert [t.id for t in plan.tasks if t.id in ("8", "9")] == []


def test_the_specs_name_documents_and_design_doc(tmp_path: Path) -> None:
    plan = load(spec(tmp_path))
    assert plan.header.title == "Unit Conversion"
    assert plan.plan_id == "unit-conversion"
    assert plan.design_path is not None
    assert Path(plan.design_path).name == "spec.md"
    body = plan.tasks[0].body
    assert f"`{SPEC_DIR}/`, also holds spec.md, spec-lite.md and sub-specs/" in body


def test_headings_over_sub_tasks_are_the_parents(tmp_path: Path) -> None:
    text = f"""\
# Spec Tasks

These are the tasks to be completed for the spec detailed in @{SPEC_DIR}/spec.md

## Tasks

### 1. Overview

Nothing to do here: a numbered heading without sub-tasks is a section.

## 2. Length conversions

- [ ] 2.1 Write tests for metres to feet
- [x] 2.2 Agree on the rounding
- [ ] 2.3 Create `src/units/length.py`

### 3. Rounding

- [x] 3.1 Agree on two decimals

### Phase 4: Temperature conversions

- [ ] **Create `src/units/temperature.py`**
  - Celsius and Fahrenheit
"""
    plan = load(spec(tmp_path, text))
    assert [(t.id, t.title) for t in plan.tasks] == [("2", "Length conversions"), ("4", "Temperature conversions")]
    assert "task 3 'Rounding' is checked off: not run" in "\n".join(plan.warnings)
    assert "Agree on two decimals" not in plan.tasks[0].body
    assert plan.tasks[0].acceptance_criteria == ["Write tests for metres to feet", "Create `src/units/length.py`"]
    assert plan.tasks[1].acceptance_criteria == ["Create `src/units/temperature.py`"]  # bold dropped
    assert plan.tasks[1].dependency_ids() == ["2"]
    assert "- Celsius and Fahrenheit" in plan.tasks[1].body


def test_a_spec_without_its_name_keeps_the_lists_title(tmp_path: Path) -> None:
    path = spec(tmp_path)
    (path.parent / "spec.md").write_text("# Spec Requirements Document\n\n## Overview\n\nConvert.\n", encoding="utf-8")
    assert load(path).header.title == "Spec Tasks"


def test_parents_numbered_twice_are_numbered_by_position(tmp_path: Path) -> None:
    text = f"@{SPEC_DIR}/spec.md\n\n- [ ] 1. First\n  - [ ] 1.1 One\n one more line\n- [ ] 1. Second\n  - [ ] 1.1 Two\n"
    plan = load(spec(tmp_path, text))
    assert [(t.id, t.title) for t in plan.tasks] == [("1", "First"), ("2", "Second")]
    assert "\none more line" in plan.tasks[0].body  # a line indented less than its parent's text: at the margin
    assert "\n- [ ] 1.1 Two" in plan.tasks[1].body  # the last parent's lines run to the end of the file


def test_the_folder_alone_or_the_line_alone_says_agent_os(tmp_path: Path) -> None:
    bare = "# Spec Tasks\n\n- [ ] 1. Length\n  - [ ] 1.1 Write tests\n  - [ ] 1.2 Write length.py\n"
    in_folder = load(spec(tmp_path / "a", bare))  # no line naming the spec: its folder says it
    assert [t.id for t in in_folder.tasks] == ["1"]
    elsewhere = tmp_path / "b" / "docs" / "todo.md"
    elsewhere.parent.mkdir(parents=True)
    elsewhere.write_text(f"# Spec Tasks\n\nThe spec: @{SPEC_DIR}/spec.md\n\n" + bare[14:], encoding="utf-8")
    assert [t.id for t in load(elsewhere).tasks] == ["1"]


def test_a_kiro_list_is_still_read_item_by_item(tmp_path: Path) -> None:
    kiro = tmp_path / ".kiro" / "specs" / "units" / "tasks.md"
    kiro.parent.mkdir(parents=True)
    kiro.write_text("# Tasks\n\n- [ ] 1. Length\n  - [ ] 1.1 Write tests\n  - [ ] 1.2 Write length.py\n")
    assert [t.id for t in load_plan(kiro, repo=tmp_path).tasks] == ["1.1", "1.2"]


def test_a_spec_with_every_task_checked_off_is_refused_at_its_first(tmp_path: Path) -> None:
    text = f"@{SPEC_DIR}/spec.md\n\n- [x] 1. Length\n  - [x] 1.1 Write tests\n- [ ] 2. Weight\n  - [x] 2.1 Done\n"
    with pytest.raises(PlanError, match=r"every one of its 2 Agent OS task.* checked off or skipped") as caught:
        load(spec(tmp_path, text))
    assert ":3" in str(caught.value)
