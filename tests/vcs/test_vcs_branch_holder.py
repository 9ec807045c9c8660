"""`branch_holder`: the worktree that has a branch checked out, read from the HEAD files, as `worktree list` says."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from pm_agent.errors import VcsError
from pm_agent.vcs import Git, WorktreeInfo

WORK = "pm/demo/work"


def _listed(repo: Git, branch: str) -> WorktreeInfo | None:
    """What `worktree list` says (the answer `branch_holder` must give)."""
    return next((w for w in repo.worktree_list() if w.branch == branch and not w.bare), None)


def _same(repo: Git, branch: str) -> WorktreeInfo | None:
    found = repo.branch_holder(branch)
    assert found == _listed(repo, branch)
    return found


def test_no_holder_in_any_state_of_the_worktrees(repo: Git, tmp_path: Path) -> None:
    assert _same(repo, WORK) is None
    repo.worktree_add(tmp_path / "wt1", "feat/one", WORK)
    repo.worktree_add_detached(tmp_path / "wt2", WORK)
    gone = repo.worktree_add(tmp_path / "wt3", "feat/three", WORK)
    shutil.rmtree(gone.path)  # prunable: its metadata stays, still on its branch
    assert _same(repo, WORK) is None
    assert _same(repo, "feat/one") is not None
    assert _same(repo, "feat/three") is not None


def test_the_holder_is_found_in_the_main_checkout_and_in_a_linked_worktree(repo: Git, tmp_path: Path) -> None:
    linked = repo.worktree_add(tmp_path / "wt1", "feat/one", WORK)
    held = _same(repo, "feat/one")
    assert held is not None
    assert Path(held.path) == linked.path
    repo.run("checkout", "-q", WORK)
    main = _same(repo, WORK)
    assert main is not None
    assert Path(main.path) == repo.path


def test_a_head_file_it_cannot_read_leaves_the_answer_to_git(repo: Git, tmp_path: Path) -> None:
    wt = repo.worktree_add(tmp_path / "wt1", "feat/one", WORK)
    head = wt.git_path("HEAD")
    head.write_text("ref: refs/heads/" + WORK + "\n")  # a checkout of WORK behind pm-agent's back
    assert _same(repo, WORK) is not None
    head.write_text("not a ref\n")
    assert _same(repo, WORK) is None


def test_it_answers_while_another_thread_holds_the_metadata_lock(repo: Git, tmp_path: Path) -> None:
    """An integration asks whether the working branch is checked out; another slot's `worktree add` must not
    make it wait (the HEAD files are read without the lock; anything unreadable goes to `worktree list`)."""
    repo.worktree_add(tmp_path / "wt1", "feat/one", WORK)
    answers: list[WorktreeInfo | None] = []
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with repo.metadata_lock():
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(10)
        asker = threading.Thread(target=lambda: answers.append(Git(repo.path).branch_holder(WORK)))
        asker.start()
        asker.join(10)
        assert not asker.is_alive(), "branch_holder waited for the metadata lock"
    finally:
        release.set()
        holder.join(10)
    assert answers == [None]


def test_delete_branch_refuses_a_branch_checked_out_and_deletes_one_that_is_not(repo: Git, tmp_path: Path) -> None:
    repo.worktree_add(tmp_path / "wt1", "feat/one", WORK)
    repo.create_branch("feat/two", WORK)
    with pytest.raises(VcsError):
        repo.delete_branch("feat/one")
    assert repo.branch_exists("feat/one")
    repo.delete_branch("feat/two")
    assert not repo.branch_exists("feat/two")
