"""Revisions answered by one long-lived `git cat-file --batch-check` per worktree (vcs/_batch.py).

Its answers must be what `git rev-parse` says at that moment: after another process commits, moves or packs a
branch, and after a worktree is removed and added again at the same path.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pm_agent.errors import VcsError
from pm_agent.vcs import Git, _batch

from .conftest import CommitFn, WriteFn


def _rev_parse(path: Path, ref: str) -> str:
    """What a fresh `git rev-parse` process says."""
    done = subprocess.run(["git", "rev-parse", f"{ref}^{{commit}}"], cwd=path, capture_output=True, text=True)
    return done.stdout.strip()


def test_one_process_answers_every_question_of_a_worktree(repo: Git) -> None:
    first = repo.head_sha()
    batch = _batch._OPEN[repo.path]
    assert repo.rev_parse("pm/demo/work") == first
    assert repo.branch_exists("pm/demo/work")
    assert not repo.branch_exists("nope")
    assert _batch._OPEN[repo.path] is batch


def test_changes_by_other_processes_are_seen_at_the_next_question(
    repo: Git, write: WriteFn, commit: CommitFn
) -> None:
    before = repo.head_sha()
    write(repo.path, "more.py", "x = 1\n")
    after = commit(Git(repo.path), "more")  # another handle; git itself writes the commit
    assert after != before
    assert repo.head_sha() == after == _rev_parse(repo.path, "HEAD")
    subprocess.run(["git", "branch", "-f", "pm/demo/work", "HEAD"], cwd=repo.path, check=True)
    subprocess.run(["git", "pack-refs", "--all"], cwd=repo.path, check=True)
    assert repo.rev_parse("pm/demo/work") == after
    assert repo.rev_parse_tree("HEAD") != ""
    assert repo.rev_parse_tree("HEAD") == subprocess.run(
        ["git", "rev-parse", "HEAD^{tree}"], cwd=repo.path, capture_output=True, text=True
    ).stdout.strip()


def test_an_unknown_revision_is_a_vcs_error(repo: Git) -> None:
    with pytest.raises(VcsError, match="unknown revision"):
        repo.rev_parse("no-such-branch")
    with pytest.raises(VcsError, match="unknown revision"):
        repo.rev_parse_tree("no-such-branch")


def test_a_worktree_added_again_at_the_same_path_is_asked_afresh(
    repo: Git, tmp_path: Path, write: WriteFn, commit: CommitFn
) -> None:
    path = tmp_path / "x" / "wt"
    first = repo.worktree_add(path, "pm/demo/task-1")
    write(first.path, "one.py", "one = 1\n")
    one = commit(first, "one")
    assert first.head_sha() == one  # its batch process found git's files under .git/worktrees/wt
    # Removed behind pm-agent's back (no close_batch); another worktree named wt takes .git/worktrees/wt, on
    # task-1's commit, and the one added again at the same path becomes .git/worktrees/wt1, on main's.
    shutil.rmtree(path)
    repo.worktree_prune()
    repo.worktree_add(tmp_path / "y" / "wt", "pm/demo/task-1")
    second = repo.worktree_add(path, "pm/demo/task-2", start="main")
    assert second.head_sha() == repo.rev_parse("main") != one
    assert second.head_sha() == _rev_parse(path, "HEAD")


def test_a_removed_worktree_falls_back_to_git_and_says_so(repo: Git, tmp_path: Path) -> None:
    path = tmp_path / "wt"
    wt = repo.worktree_add(path, "pm/demo/task-1")
    assert wt.head_sha() == repo.head_sha()
    repo.worktree_remove(path)
    assert path.resolve() not in _batch._OPEN
    with pytest.raises(VcsError):
        wt.head_sha()


def test_at_most_max_open_processes_are_kept(repo: Git, tmp_path: Path) -> None:
    for n in range(_batch.MAX_OPEN + 3):
        wt = repo.worktree_add(tmp_path / f"wt{n}", f"pm/demo/task-{n}")
        assert wt.head_sha() == repo.head_sha()
    assert len(_batch._OPEN) <= _batch.MAX_OPEN


def test_the_branch_is_read_from_head_as_symbolic_ref_says(repo: Git, tmp_path: Path) -> None:
    wt = repo.worktree_add(tmp_path / "wt", "pm/demo/task-1")
    assert repo.current_branch() == "main"
    assert wt.current_branch() == "pm/demo/task-1"
    subprocess.run(["git", "checkout", "-q", "-b", "pm/demo/other"], cwd=wt.path, check=True)
    assert wt.current_branch() == "pm/demo/other"
    subprocess.run(["git", "checkout", "-q", "--detach"], cwd=wt.path, check=True)
    assert wt.current_branch() is None
    assert Git(wt.path).current_branch() is None  # a new handle on the same worktree: the same answer


def test_object_types_come_from_the_batch(repo: Git) -> None:
    tree = repo.rev_parse_tree("HEAD")
    assert repo.object_type(tree) == "tree"
    assert repo.object_type(repo.head_sha()) == "commit"
    assert repo.object_type("0" * 40) is None
