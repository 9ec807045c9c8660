"""Format details: heading levels, full-width colons, ids, references, labels, plan ids."""

from __future__ import annotations

import pytest

from pm_agent.plan import Tier, parse_plan_text, parse_refs, plan_id_from_path
from pm_agent.plan.fields import canonical_id, normalize_task_id, parse_tier, task_heading


@pytest.mark.parametrize("level", [1, 2, 3, 4, 5, 6])
def test_task_headings_at_any_level(level: int) -> None:
    hashes = "#" * level
    text = f"{hashes} Task 1: First\n\nBody one.\n\n{hashes} Task 2: Second\n\nBody two.\n"
    _, tasks = parse_plan_text(text, "p.md")
    assert [(t.id, t.title, t.line, t.description) for t in tasks] == [
        ("1", "First", 1, "Body one."),
        ("2", "Second", 5, "Body two."),
    ]


def test_full_width_colon_and_odd_ids() -> None:
    text = (
        "# Plan\n\n## Task 3：Full width\n\n## Task 3a: Split off\n\n"
        "## Task 12 ： Spaced full width\n\n## task 13: lower case\n"
    )
    _, tasks = parse_plan_text(text, "p.md")
    assert [(t.id, t.title) for t in tasks] == [
        ("3", "Full width"),
        ("3a", "Split off"),
        ("12", "Spaced full width"),
        ("13", "lower case"),
    ]


def test_full_width_colon_in_labels_and_file_entries() -> None:
    text = (
        "## Task 1：A\n\n**Files：**\n- Create：`src/a.py`\n\n## Task 2：B\n\n"
        "**Depends on：** Task 1\n**Tier：** low\n"
    )
    _, tasks = parse_plan_text(text, "p.md")
    assert tasks[0].expected_files.create == ["src/a.py"]
    assert [d.task_id for d in tasks[1].depends_on] == ["1"]
    assert tasks[1].explicit_tier is Tier.LOW


def test_a_higher_heading_ends_a_task_and_sub_headings_stay_inside() -> None:
    text = (
        "# Plan\n\n## Phase 1\n\n### Task 1: A\n\nAbout A.\n\n#### Notes\n\nStill A.\n\n"
        "## Phase 2\n\nNot part of A.\n\n### Task 2: B\n"
    )
    _, tasks = parse_plan_text(text, "p.md")
    assert tasks[0].description == "About A.\n\n#### Notes\n\nStill A."
    assert tasks[0].body == "### Task 1: A\n\nAbout A.\n\n#### Notes\n\nStill A."


def test_headings_that_are_not_tasks() -> None:
    text = (
        "# Plan\n\n## Tasks: overview\n\n## Task list\n\n## Task ownership: who does what\n\n"
        "## Task 1: Real\n"
    )
    _, tasks = parse_plan_text(text, "p.md")
    assert [t.id for t in tasks] == ["1"]


@pytest.mark.parametrize(
    ("heading", "parsed"),
    [
        ("Task 3: Title", ("3", "Title")),
        ("Task 3：Title", ("3", "Title")),
        ("Task 12 ： Spaced", ("12", "Spaced")),
        ("Task 3a: Split off", ("3a", "Split off")),
        ("Task 3.1: Sub-step", ("3.1", "Sub-step")),
        ("Task 3 — Em dash", ("3", "Em dash")),
        ("Task 3 - Hyphen", ("3", "Hyphen")),
        ("Task 4. Period", ("4", "Period")),
        ("Task ownership: who does what", None),
        ("Task A: Lettered", ("A", "Lettered")),
        ("Task B. Lettered", ("B", "Lettered")),
        ("Task a: lowercase", None),
        ("Task AB: two letters", None),
        ("Task I think", None),
        ("Task list", None),
        ("Task 3:", None),
        ("Task 1-Setup", None),
    ],
)
def test_task_heading_forms(heading: str, parsed: tuple[str, str] | None) -> None:
    assert task_heading(heading) == parsed


def test_file_entries_without_backticks_and_with_synonyms() -> None:
    text = (
        "## Task 1: A\n\n**Files:**\n"
        "- Create: src/a.py (the new module)\n"
        "- New: `src/b.py`, `src/c.py`\n"
        "- Update: ./src/d.py:5\n"
        "- Remove: `src/e.py`\n"
        "- Tests: `tests/test_a.py`\n"
        "- Read: `docs/design.md`\n"
    )
    _, [task] = parse_plan_text(text, "p.md")
    files = task.expected_files
    assert files.create == ["src/a.py", "src/b.py", "src/c.py"]
    assert files.modify == ["src/d.py"]
    assert files.modify_ranges == {"src/d.py": "5"}
    assert files.delete == ["src/e.py"]
    assert files.test == ["tests/test_a.py"]


def test_plain_labels_and_heading_labels() -> None:
    text = (
        "## Task 1: A\n\nDepends on: none\nOwnership: core\n\n"
        "### Acceptance Criteria\n\n- works\n\n### Out of scope\n\n- speed\n\n"
        "Tests to run:\n\n- tests/test_a.py\n"
    )
    _, [task] = parse_plan_text(text, "p.md")
    assert task.ownership == "core"
    assert task.acceptance_criteria == ["works"]
    assert task.non_goals == ["speed"]
    assert task.tests_to_run == ["tests/test_a.py"]
    assert task.depends_on == []


def test_steps_from_sub_headings_and_a_steps_list() -> None:
    text = (
        "## Task 1: A\n\n### Step 1: Write the test\n\n```python\nx = 1\n```\n\n### Step 2 - Make it pass\n\n"
        "## Task 2: B\n\n**Steps:**\n1. Read the code\n2. Change it\n"
    )
    _, tasks = parse_plan_text(text, "p.md")
    assert tasks[0].steps == ["Write the test", "Make it pass"]
    assert tasks[1].steps == ["Read the code", "Change it"]


def test_windows_line_endings_and_bom() -> None:
    text = "\ufeff# Plan\r\n\r\n**Goal:** G\r\n\r\n## Task 1: A\r\n\r\n**Tier:** critical\r\n"
    header, [task] = parse_plan_text(text, "p.md")
    assert (header.title, header.goal) == ("Plan", "G")
    assert (task.line, task.explicit_tier, task.tier) == (5, Tier.CRITICAL, Tier.CRITICAL)


@pytest.mark.parametrize(
    ("value", "refs"),
    [
        ("Task 2, Task 3", ["2", "3"]),
        ("task-2", ["2"]),
        ("2", ["2"]),
        ("Tasks 2 and 3", ["2", "3"]),
        ("Task 2 (tokenizer); Task 4: parser", ["2", "4"]),
        ("#5 & #6", ["5", "6"]),
        ("none", []),
        ("None.", []),
        ("n/a", []),
        ("", []),
        ("task-07, Task 3a", ["07", "3a"]),
    ],
)
def test_parse_refs(value: str, refs: list[str]) -> None:
    assert parse_refs(value) == refs


def test_ids_and_canonical_keys() -> None:
    assert normalize_task_id("task-07") == "07"
    assert normalize_task_id("Task 3") == "3"
    assert normalize_task_id(12) == "12"
    assert canonical_id("07") == canonical_id("7") == canonical_id("task-7") == "7"
    assert canonical_id("3A") == "3a"
    assert canonical_id("auth-1") == "auth-1"


@pytest.mark.parametrize(
    ("value", "tier"),
    [("critical", "critical"), ("CRITICAL", "critical"), ("Low - docs only", "low"), ("`normal`", "normal")],
)
def test_parse_tier(value: str, tier: str) -> None:
    assert parse_tier(value).value == tier


@pytest.mark.parametrize(
    ("stem", "plan_id"),
    [
        ("2026-02-18-wellness-cbt", "wellness-cbt"),
        ("2026-02-18_Wellness CBT", "wellness-cbt"),
        ("plan", "plan"),
        ("Textstats Plan v2", "textstats-plan-v2"),
        ("2026-02-18", "plan"),
    ],
)
def test_plan_id(stem: str, plan_id: str) -> None:
    assert plan_id_from_path(stem) == plan_id
