"""Worktrees: one per task, isolated from each other, idempotent to create, removable."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from pm_agent.errors import VcsError
from pm_agent.vcs import Git, task_branch

Write = Callable[[Path, str, str], Path]


def test_two_worktrees_on_two_branches_are_isolated(repo: Git, tmp_path: Path, write: Write) -> None:
    base = repo.rev_parse("pm/demo/work")
    one = repo.worktree_add(tmp_path / "wt1", task_branch("demo", "1", "First thing"), base)
    two = repo.worktree_add(tmp_path / "wt2", task_branch("demo", "2", "Second thing"), base)
    assert one.current_branch() == "feat/demo/task-1-first-thing"
    assert two.current_branch() == "feat/demo/task-2-second-thing"

    write(one.path, "one.py", "ONE = 1\n")
    write(two.path, "app.py", "changed in two\n")
    assert one.diff_names(base) == ["one.py"]
    assert two.diff_names(base) == ["app.py"]
    assert not (two.path / "one.py").exists()
    assert (one.path / "app.py").read_text().startswith("def greet")

    sha_one = one.commit_all("feat: one\n\nRefs: task-1\n")
    assert two.head_sha() == base
    assert repo.rev_parse("pm/demo/work") == base
    assert repo.rev_parse("feat/demo/task-1-first-thing") == sha_one
    assert repo.is_clean()

    listed = {Path(w.path).name: w.branch for w in repo.worktree_list()}
    assert listed == {
        "repo": "main",
        "wt1": "feat/demo/task-1-first-thing",
        "wt2": "feat/demo/task-2-second-thing",
    }


def test_worktree_add_is_idempotent_and_reuses_existing_branch(repo: Git, tmp_path: Path, write: Write) -> None:
    branch = "feat/demo/task-3-x"
    wt = repo.worktree_add(tmp_path / "wt", branch, "main")
    write(wt.path, "x.py", "x\n")
    again = repo.worktree_add(tmp_path / "wt", branch)  # resume: same path, same branch
    assert again.path == wt.path
    assert (again.path / "x.py").exists()
    with pytest.raises(VcsError, match="already a worktree"):
        repo.worktree_add(tmp_path / "wt", "feat/demo/other")

    committed = wt.commit_all("feat: x")
    repo.worktree_remove(wt.path)
    assert not wt.path.exists()
    back = repo.worktree_add(tmp_path / "wt-again", branch)  # branch kept: checked out again
    assert back.head_sha() == committed


def test_worktree_remove_refuses_dirty_unless_forced(repo: Git, tmp_path: Path, write: Write) -> None:
    wt = repo.worktree_add(tmp_path / "wt", "feat/demo/task-4-y", "main")
    write(wt.path, "dirty.py", "x\n")
    with pytest.raises(VcsError):
        repo.worktree_remove(wt.path)
    repo.worktree_remove(wt.path, force=True)
    assert [Path(w.path).name for w in repo.worktree_list()] == ["repo"]


def test_worktree_on_protected_branch_is_refused(repo: Git, tmp_path: Path) -> None:
    with pytest.raises(VcsError, match="protected"):
        repo.worktree_add(tmp_path / "wt", "master", "main")


def test_ensure_worktree_says_whether_the_branch_was_made_just_now(repo: Git, tmp_path: Path) -> None:
    base = repo.rev_parse("pm/demo/work")
    branch = task_branch("demo", "9", "Fresh one")
    made, fresh = repo.ensure_worktree(tmp_path / "wt9", branch, base)
    assert fresh
    assert made.head_sha() == base
    again, fresh_again = repo.ensure_worktree(tmp_path / "wt9", branch, base)  # the same worktree: kept
    assert (again.path, fresh_again) == (made.path, False)
    repo.worktree_remove(tmp_path / "wt9", force=True)
    back, fresh_back = repo.ensure_worktree(tmp_path / "wt9b", branch, base)  # the branch existed already
    assert not fresh_back
    assert back.current_branch() == branch


def test_git_paths_answer_each_name_in_the_order_asked(repo: Git, tmp_path: Path) -> None:
    wt = repo.worktree_add(tmp_path / "wtp", task_branch("demo", "8", "Paths"), repo.rev_parse("pm/demo/work"))
    first = wt.git_paths("index", "logs/HEAD")
    assert first[0].name == "index"
    assert first[0].parent.name == "wtp"  # the linked worktree's own admin folder, not the main one
    assert wt.git_paths("logs/HEAD", "index") == [first[1], first[0]]
    assert wt.git_path("MERGE_HEAD").name == "MERGE_HEAD"


def test_a_worktree_whose_folder_was_deleted_is_answered_as_before(repo: Git, tmp_path: Path) -> None:
    # `ensure_worktree` adds without listing when the folder is missing; git's refusal (still registered)
    # falls back to the listing: the same branch gives the worktree back, another branch is an error.
    branch = task_branch("demo", "3", "Third")
    first, fresh = repo.ensure_worktree(tmp_path / "wt3", branch, "pm/demo/work")
    assert fresh
    shutil.rmtree(first.path)
    again, fresh = repo.ensure_worktree(tmp_path / "wt3", branch, "pm/demo/work")
    assert (again.path, fresh) == (first.path, False)
    with pytest.raises(VcsError, match="already a worktree on"):
        repo.ensure_worktree(tmp_path / "wt3", task_branch("demo", "4", "Fourth"), "pm/demo/work")


def test_removing_a_worktree_leaves_no_metadata_behind(repo: Git, tmp_path: Path) -> None:
    wt = repo.worktree_add(tmp_path / "wt5", task_branch("demo", "5", "Fifth"), "pm/demo/work")
    repo.worktree_remove(wt.path, force=True)
    assert [Path(w.path).name for w in repo.worktree_list()] == ["repo"]
    assert not any((repo.path / ".git" / "worktrees").glob("*"))
    again = repo.worktree_add(tmp_path / "wt5", task_branch("demo", "5", "Fifth"))
    assert again.current_branch() == "feat/demo/task-5-fifth"
