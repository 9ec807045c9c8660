"""`Git.worktree_move`: a plain linked worktree is moved in process (a rename and git's own `gitdir` line), with
the same result as `git worktree move`; anything unusual is left to git."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pm_agent.errors import VcsError
from pm_agent.vcs import Git

from .conftest import count_git_calls

Write = Callable[[Path, str, str], Path]


def _admin(worktree: Path) -> Path:
    return Path((worktree / ".git").read_text(encoding="utf-8").removeprefix("gitdir: ").strip())


def test_a_plain_worktree_moves_without_git_and_ends_where_gits_move_puts_it(
    repo: Git, tmp_path: Path, write: Write
) -> None:
    ours = repo.worktree_add(tmp_path / "a", "feat/demo/a", "main")
    theirs = repo.worktree_add(tmp_path / "b", "feat/demo/b", "main")
    write(ours.path, "work.txt", "not committed\n")
    calls = count_git_calls(repo)
    repo.worktree_move(ours.path, tmp_path / "moved-a")
    assert calls == [], "no git process for a plain worktree"
    repo.run("worktree", "move", str(theirs.path), str(tmp_path / "moved-b"))  # git's own, to compare with
    for name in ("a", "b"):
        moved = tmp_path / f"moved-{name}"
        assert not (tmp_path / name).exists()
        assert (_admin(moved) / "gitdir").read_text(encoding="utf-8") == f"{moved / '.git'}\n"
    assert (tmp_path / "moved-a" / "work.txt").read_text() == "not committed\n"
    repo.worktree_prune()  # would forget a worktree whose `gitdir` names a missing folder
    listed = {Path(w.path).name: w.branch for w in repo.worktree_list()}
    assert listed == {"repo": "main", "moved-a": "feat/demo/a", "moved-b": "feat/demo/b"}
    moved = Git(tmp_path / "moved-a")
    assert moved.current_branch() == "feat/demo/a"
    assert moved.run("status", "--porcelain") == "?? work.txt\n"


@pytest.mark.parametrize("oddity", ["locked", "submodules", "gitmodules", "relative", "elsewhere", "target", "dotgit"])
def test_an_unusual_worktree_is_left_to_git(
    repo: Git, tmp_path: Path, oddity: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Git's own move, with git's answer: it refuses the locked, the submodules, the links it cannot follow."""
    wt = repo.worktree_add(tmp_path / "a", "feat/demo/a", "main")
    admin = _admin(wt.path)
    if oddity == "locked":
        repo.run("worktree", "lock", str(wt.path))
    elif oddity == "submodules":
        (admin / "modules").mkdir()
    elif oddity == "gitmodules":
        (wt.path / ".gitmodules").write_text("", encoding="utf-8")
    elif oddity == "relative":
        (admin / "gitdir").write_text("../../../a/.git\n", encoding="utf-8")
    elif oddity == "elsewhere":  # its git directory names another folder
        (admin / "gitdir").write_text(f"{tmp_path / 'other' / '.git'}\n", encoding="utf-8")
    elif oddity == "dotgit":  # the worktree's `.git` names its git directory by a relative path
        (wt.path / ".git").write_text(f"gitdir: ../repo/.git/worktrees/{admin.name}\n", encoding="utf-8")
        monkeypatch.chdir(wt.path)  # where that path would be read from if it were taken as it is
    else:  # an existing folder: git moves the worktree into it
        (tmp_path / "moved").mkdir()
    calls = count_git_calls(repo)
    refused = False
    try:
        repo.worktree_move(wt.path, tmp_path / "moved")
    except VcsError:
        refused = True
    assert [c[:2] for c in calls] == [("worktree", "move")]
    assert refused == (oddity in ("locked", "submodules", "relative", "elsewhere"))
    assert (tmp_path / "a").exists() == refused


def test_a_move_that_cannot_finish_puts_the_worktree_back(
    repo: Git, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wt = repo.worktree_add(tmp_path / "a", "feat/demo/a", "main")

    def full(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "replace", full)
    with pytest.raises(VcsError, match="No space left on device"):
        repo.worktree_move(wt.path, tmp_path / "moved")
    monkeypatch.undo()
    assert not (tmp_path / "moved").exists()
    assert Git(tmp_path / "a").current_branch() == "feat/demo/a"
    assert [Path(w.path).name for w in repo.worktree_list()] == ["repo", "a"]
