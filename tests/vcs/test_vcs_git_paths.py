"""`Git.git_paths` and `common_dir` read the usual names from the checkout's `.git` without a git process, and
say exactly what `git rev-parse --git-path` / `--git-common-dir` say, wherever the git directory is."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pm_agent.vcs import Git
from pm_agent.vcs._core import _COMMON_GIT_PATHS, _OWN_GIT_PATHS, _USUAL_GIT_PATHS

NAMES = sorted(_OWN_GIT_PATHS | _COMMON_GIT_PATHS)


def _git_says(where: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=where, check=True, capture_output=True, text=True).stdout.strip()


def _git_path(where: Path, name: str) -> Path:
    return Path(_git_says(where, "rev-parse", "--path-format=absolute", "--git-path", name)).resolve()


def _checkouts(repo: Git, tmp_path: Path) -> dict[str, Path]:
    linked = repo.worktree_add(tmp_path / "linked", "feat/linked", "pm/demo/work").path
    moved = repo.worktree_add(tmp_path / "before", "feat/moved", "pm/demo/work").path
    repo.run("worktree", "move", str(moved), str(tmp_path / "after"))
    separate = tmp_path / "separate"
    subprocess.run(
        ["git", "init", "-q", f"--separate-git-dir={tmp_path / 'elsewhere.git'}", str(separate)], check=True
    )
    return {"main": repo.path, "linked": linked, "moved": tmp_path / "after", "separate": separate}


@pytest.mark.parametrize("kind", ["main", "linked", "moved", "separate"])
def test_the_usual_git_paths_are_what_git_says_and_need_no_git_process(
    repo: Git, tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    where = _checkouts(repo, tmp_path)[kind]
    expected = {name: _git_path(where, name) for name in NAMES}
    common = Path(_git_says(where, "rev-parse", "--path-format=absolute", "--git-common-dir")).resolve()

    def no_git(self: Git, *args: str, **kwargs: object) -> None:
        raise AssertionError(f"git started: {args}")

    git = Git(where)
    monkeypatch.setattr(Git, "try_run", no_git)
    assert {name: path.resolve() for name, path in zip(NAMES, git.git_paths(*NAMES), strict=True)} == expected
    assert git.common_dir() == common


def test_every_usual_name_is_one_whose_place_is_known() -> None:
    assert set(_USUAL_GIT_PATHS) <= _OWN_GIT_PATHS | _COMMON_GIT_PATHS


def test_below_the_top_of_a_checkout_or_for_another_name_git_is_asked(repo: Git, tmp_path: Path) -> None:
    sub = repo.path / "pkg"
    sub.mkdir()
    assert Git(sub).git_path("HEAD").resolve() == _git_path(sub, "HEAD")
    assert Git(sub).common_dir() == (repo.path / ".git").resolve()
    linked = repo.worktree_add(tmp_path / "linked", "feat/linked", "pm/demo/work").path
    assert Git(linked).git_path("refs/heads/x").resolve() == _git_path(linked, "refs/heads/x")


def test_a_git_file_git_would_refuse_falls_back_to_git(tmp_path: Path, repo: Git) -> None:
    linked = repo.worktree_add(tmp_path / "linked", "feat/linked", "pm/demo/work").path
    admin = (linked / ".git").read_text().removeprefix("gitdir: ").strip()
    (linked / ".git").write_text(f"gitdir: {admin}/missing\n")  # points nowhere: git fails, and so must we
    with pytest.raises(Exception, match="not a git repository"):
        Git(linked).git_path("HEAD")
