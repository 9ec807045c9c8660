"""Every bad input raises PlanError naming the file and the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.errors import InputError, PlanError
from pm_agent.plan import load_plan, parse_plan_text

FIXTURES = Path(__file__).parent / "fixtures"
BAD = FIXTURES / "bad"
GOOD = FIXTURES / "2026-02-18-link-shortener.md"


def _error(path: Path, **kwargs: Path) -> PlanError:
    with pytest.raises(PlanError) as info:
        load_plan(path, **kwargs)
    return info.value


@pytest.mark.parametrize(
    ("name", "line", "message"),
    [
        ("cycle.md", 8, "dependency cycle: Task 2 -> Task 4 -> Task 2"),
        ("unknown_ref.md", 9, "Task 3 depends on Task 9, which is not in the plan"),
        ("duplicate.md", 9, "duplicate task id '2' (Task 2 is on line 5)"),
        ("self_dep.md", 5, "Task 2 depends on itself"),
        ("bad_tier.md", 5, "unknown tier 'urgent' (expected critical, normal or low)"),
        # Latin-1 bytes; not a .md file so markdown tools in the tree leave it alone
        ("latin1-plan.txt", 3, "plan file is not valid UTF-8 (byte 0xe9 at offset 33)"),
        (
            "no_tasks.md",
            5,
            "no tasks found (expected headings like '## Task 1: Title' or yaml blocks with task_id); "
            "none of its 1 section heading(s) is a task heading (the first, line 5: 'Ideas')",
        ),
    ],
)
def test_bad_plans(name: str, line: int | None, message: str) -> None:
    error = _error(BAD / name)
    assert error.path == BAD / name
    assert error.line == line
    assert error.message == message
    assert str(error) == (f"{BAD / name}:{line}: {message}" if line else f"{BAD / name}: {message}")
    assert isinstance(error, InputError)
    assert error.exit_code == 2


def test_missing_plan_file(tmp_path: Path) -> None:
    error = _error(tmp_path / "nope.md")
    assert (error.path, error.line, error.message) == (tmp_path / "nope.md", None, "plan file not found")


def test_plan_folder_without_markdown(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("## Task 1: A\n", encoding="utf-8")
    error = _error(tmp_path)
    assert (error.path, error.message) == (tmp_path, "plan folder holds no markdown files (*.md)")


def test_unreadable_plan_path(tmp_path: Path) -> None:
    blocker = tmp_path / "file.txt"
    blocker.write_text("x", encoding="utf-8")
    error = _error(blocker / "plan.md")
    assert error.path == blocker / "plan.md"
    assert error.message == "cannot read plan file: Not a directory"


def test_missing_and_non_utf8_design_doc(tmp_path: Path) -> None:
    error = _error(GOOD, design_path=tmp_path / "design.md")
    assert (error.path, error.message) == (tmp_path / "design.md", "design file not found")
    bad = tmp_path / "design.md"
    bad.write_bytes(b"# Design\n\n## Principles\n\n- na\xefve\n")
    error = _error(GOOD, design_path=bad)
    assert (error.path, error.line) == (bad, 5)
    assert error.message == "design file is not valid UTF-8 (byte 0xef at offset 29)"


def test_missing_repository_folder(tmp_path: Path) -> None:
    error = _error(GOOD, repo=tmp_path / "absent")
    assert (error.path, error.message) == (tmp_path / "absent", "repository folder not found")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            "the parser task",
            "cannot read task reference 'the parser task' (write e.g. 'Task 2, Task 3' or 'none')",
        ),
        ("???; !!!", "cannot read task reference '???' (write e.g. 'Task 2, Task 3' or 'none')"),
    ],
)
def test_unreadable_dependency_text(value: str, message: str) -> None:
    text = f"# P\n\n## Task 1: A\n\n## Task 2: B\n\nSome prose.\n\n**Depends on:** {value}\n"
    with pytest.raises(PlanError) as info:
        parse_plan_text(text, "p.md")
    assert (info.value.message, info.value.line, info.value.path) == (message, 9, Path("p.md"))


def test_depends_on_as_a_list_without_any_reference_reports_the_item_line() -> None:
    text = "# P\n\n## Task 1: A\n\n## Task 2: B\n\n**Depends on:**\n- whatever this is\n- and that\n"
    with pytest.raises(PlanError) as info:
        parse_plan_text(text, "p.md")
    assert (info.value.line, info.value.message) == (
        8,
        "cannot read task reference 'whatever this is' (write e.g. 'Task 2, Task 3' or 'none')",
    )


def test_contract_outside_a_task_needs_task_id() -> None:
    text = "# P\n\n## Notes\n\n```yaml\nacceptance_criteria: [a]\n```\n"
    with pytest.raises(PlanError) as info:
        parse_plan_text(text, "p.md")
    assert (info.value.message, info.value.line) == (
        "a task contract outside a task section needs a task_id",
        5,
    )


def test_duplicate_ids_match_leading_zeros() -> None:
    text = "# P\n\n## Task 7: A\n\n## Task 8: B\n\n```yaml\ntask_id: task-07\n```\n"
    with pytest.raises(PlanError) as info:
        parse_plan_text(text, "p.md")
    assert (info.value.message, info.value.line) == ("duplicate task id '07' (Task 7 is on line 3)", 5)


def test_a_task_file_naming_one_beside_it_is_told_to_give_the_folder(tmp_path: Path) -> None:
    """One file of a folder of task files, run alone: the task it names is in a file beside it."""
    (tmp_path / "task-06-weekly-action.md").write_text("# Task 06: Weekly action\n\nAccept the post length.\n")
    eight = tmp_path / "task-08-length-picker.md"
    eight.write_text("# Task 08: Length picker\n\n**Depends on:** task-06\n\nAdd the picker.\n")
    with pytest.raises(PlanError) as info:
        load_plan(eight)
    assert str(info.value) == (
        f"{eight}:1: Task 08 depends on Task 06, which is not in the plan (task-06-weekly-action.md is beside it: to"
        " read the folder's files as one plan, give pm-agent the folder)"
    )
    assert [t.id for t in load_plan(tmp_path).tasks] == ["06", "08"]  # as the hint says
    (tmp_path / "task-06-weekly-action.md").rename(tmp_path / "notes-06.md")  # no task file of that id: no hint
    with pytest.raises(PlanError, match=r"which is not in the plan$"):
        load_plan(eight)
