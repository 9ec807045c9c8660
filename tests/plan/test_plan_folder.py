"""A folder of markdown files is one plan: ids unique across files, references across files, errors naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.errors import PlanError
from pm_agent.plan import load_plan
from pm_agent.plan.folder import markdown_files, split_front_matter

from .conftest import Write


def _error(path: Path) -> PlanError:
    with pytest.raises(PlanError) as info:
        load_plan(path)
    return info.value


def test_a_reference_to_a_task_in_a_sibling_file_resolves(tmp_path: Path, write: Write) -> None:
    write(tmp_path, "tasks/01-model.md", "# Task 1: Model\n\n**Files:**\n- Create: `src/model.py`\n")
    write(tmp_path, "tasks/02-api.md", "# Task 2: API\n\n**Depends on:** Task 1\n")
    write(tmp_path, "tasks/03-cli.md", "# Task 3: CLI\n\n**Files:**\n- Modify: `src/model.py`\n")
    plan = load_plan(tmp_path)
    assert {t.id: [(d.task_id, d.inferred) for d in t.depends_on] for t in plan.tasks} == {
        "1": [],
        "2": [("1", False)],
        "3": [("1", True)],
    }
    assert plan.warnings == []


def test_duplicate_ids_across_files_name_both_files(tmp_path: Path, write: Write) -> None:
    write(tmp_path, "a.md", "# Plan\n\n## Task 1: A\n")
    write(tmp_path, "b.md", "intro\n\n## Task 01: B again\n")
    error = _error(tmp_path)
    assert (error.path, error.line) == (tmp_path / "b.md", 3)
    assert error.message == f"duplicate task id '01' (Task 1 is on {tmp_path / 'a.md'}:3)"


def test_unknown_reference_names_the_referring_file(tmp_path: Path, write: Write) -> None:
    write(tmp_path, "1.md", "# Task 1: A\n")
    write(tmp_path, "2.md", "\n# Task 2: B\n\n**Depends on:** Task 9\n")
    error = _error(tmp_path)
    assert (error.path, error.line, error.message) == (
        tmp_path / "2.md",
        2,
        "Task 2 depends on Task 9, which is not in the plan",
    )


def test_a_cycle_across_files_names_the_file_of_its_first_task(tmp_path: Path, write: Write) -> None:
    write(tmp_path, "1.md", "# Task 1: A\n\n**Depends on:** Task 2\n")
    write(tmp_path, "2.md", "# Task 2: B\n\n**Depends on:** Task 1\n")
    error = _error(tmp_path)
    assert (error.path, error.line, error.message) == (
        tmp_path / "1.md",
        1,
        "dependency cycle: Task 1 -> Task 2 -> Task 1",
    )


def test_a_bad_file_in_the_folder_is_named(tmp_path: Path, write: Write) -> None:
    write(tmp_path, "1.md", "# Task 1: A\n")
    (tmp_path / "2.md").write_bytes(b"# Task 2: caf\xe9\n")
    error = _error(tmp_path)
    assert (error.path, error.line) == (tmp_path / "2.md", 1)
    assert "not valid UTF-8" in error.message


def test_a_folder_without_tasks_is_refused(tmp_path: Path, write: Write) -> None:
    write(tmp_path, "README.md", "# Notes\n\nNothing to do yet.\n")
    error = _error(tmp_path)
    assert (error.path, error.message) == (
        tmp_path,
        "no tasks found (expected headings like '## Task 1: Title' or yaml blocks with task_id)",
    )


def test_reading_order_is_natural_and_skips_hidden_paths(tmp_path: Path, write: Write) -> None:
    for name in ("10.md", "2.md", "B.markdown", "a.md", "sub/1.md", ".hidden/1.md", "notes.txt", ".x.md"):
        write(tmp_path, name, "")
    assert [p.relative_to(tmp_path).as_posix() for p in markdown_files(tmp_path)] == [
        "2.md",
        "10.md",
        "a.md",
        "B.markdown",
        "sub/1.md",
    ]


def test_front_matter_values_stay_strings_and_line_numbers_are_kept() -> None:
    front = split_front_matter("---\nname: A\ndepends_on: [001, 010]\n---\n# Task: A\n")
    assert front.data == {"name": "A", "depends_on": ["001", "010"]}
    assert front.text.split("\n")[4] == "# Task: A"
    assert front.warning is None
    plain = split_front_matter("---\n\nJust a rule above.\n---\n")
    assert (plain.data, plain.text) == (None, "---\n\nJust a rule above.\n---\n")
