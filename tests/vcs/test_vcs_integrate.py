"""Integrating task branches into the working branch: fast-forward, cherry-pick, conflicts, no force."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pm_agent.errors import VcsError
from pm_agent.vcs import Git, integrate

Write = Callable[[Path, str, str], Path]
WORK = "pm/demo/work"


def _task(repo: Git, tmp_path: Path, write: Write, name: str, files: dict[str, str]) -> tuple[Git, str]:
    branch = f"feat/demo/{name}"
    wt = repo.worktree_add(tmp_path / name, branch, WORK)
    for rel, text in files.items():
        write(wt.path, rel, text)
    wt.commit_all(f"feat: {name}\n\nRefs: {name}\n")
    return wt, branch


def test_fast_forward_then_up_to_date(repo: Git, tmp_path: Path, write: Write) -> None:
    wt, branch = _task(repo, tmp_path, write, "task-1", {"a.py": "a = 1\n"})
    result = integrate(repo, branch, WORK)
    assert result.status == "fast-forward"
    assert result.ok
    assert repo.rev_parse(WORK) == wt.head_sha() == result.after
    assert integrate(repo, branch, WORK).status == "up-to-date"


def test_diverged_branch_is_cherry_picked_keeping_trailers(repo: Git, tmp_path: Path, write: Write) -> None:
    _, first = _task(repo, tmp_path, write, "task-1", {"a.py": "a = 1\n"})
    _, second = _task(repo, tmp_path, write, "task-2", {"b.py": "b = 1\n"})
    assert integrate(repo, first, WORK).status == "fast-forward"
    result = integrate(repo, second, WORK)
    assert result.status == "cherry-picked", result
    assert repo.commits_since(result.before, WORK) == [result.after]
    assert repo.find_commit_by_trailer("task-2", WORK) == result.after
    assert repo.find_commit_by_trailer("task-1", WORK) == result.before
    assert sorted(repo.run("ls-tree", "--name-only", WORK).split()) == ["README.md", "a.py", "app.py", "b.py"]
    assert [Path(w.path).name for w in repo.worktree_list()] == ["repo", "task-1", "task-2"]  # temp one gone
    again = integrate(repo, second, WORK)  # already cherry-picked: the redundant commit is skipped
    assert again.status == "up-to-date"
    assert repo.rev_parse(WORK) == result.after


def test_conflict_returns_paths_and_leaves_working_branch_untouched(repo: Git, tmp_path: Path, write: Write) -> None:
    _, first = _task(repo, tmp_path, write, "task-1", {"app.py": "one\n", "x.py": "x\n"})
    _, second = _task(repo, tmp_path, write, "task-2", {"app.py": "two\n", "y.py": "y\n"})
    integrate(repo, first, WORK)
    before = repo.rev_parse(WORK)
    result = integrate(repo, second, WORK)
    assert result.status == "conflict"
    assert not result.ok
    assert result.conflicts == ["app.py"]
    assert result.after == before == repo.rev_parse(WORK)
    assert repo.is_clean()
    assert [Path(w.path).name for w in repo.worktree_list()] == ["repo", "task-1", "task-2"]


def test_working_branch_checked_out_is_advanced_in_place(repo: Git, tmp_path: Path, write: Write) -> None:
    repo.run("checkout", "-q", WORK)
    _, first = _task(repo, tmp_path, write, "task-1", {"a.py": "a = 1\n"})
    _, second = _task(repo, tmp_path, write, "task-2", {"b.py": "b = 1\n"})
    integrate(repo, first, WORK)
    result = integrate(repo, second, WORK)
    assert result.status == "cherry-picked"
    assert repo.head_sha() == result.after
    assert repo.is_clean()
    assert (repo.path / "b.py").read_text() == "b = 1\n"

    _, third = _task(repo, tmp_path, write, "task-3", {"app.py": "three\n"})
    _, fourth = _task(repo, tmp_path, write, "task-4", {"app.py": "four\n"})
    integrate(repo, third, WORK)
    head = repo.head_sha()
    conflict = integrate(repo, fourth, WORK)
    assert conflict.conflicts == ["app.py"]
    assert repo.head_sha() == head
    assert repo.is_clean()
    assert (repo.path / "app.py").read_text() == "three\n"


def test_integrating_into_main_is_refused(repo: Git, tmp_path: Path, write: Write) -> None:
    _, branch = _task(repo, tmp_path, write, "task-1", {"a.py": "a\n"})
    main_before = repo.rev_parse("main")
    with pytest.raises(VcsError, match="protected"):
        integrate(repo, branch, "main")
    assert repo.rev_parse("main") == main_before


def test_task_branch_with_merges_is_merged_not_cherry_picked(repo: Git, tmp_path: Path, write: Write) -> None:
    _, first = _task(repo, tmp_path, write, "task-1", {"a.py": "a\n"})
    wt, second = _task(repo, tmp_path, write, "task-2", {"b.py": "b\n"})
    _task(repo, tmp_path, write, "side", {"c.py": "c\n"})
    wt.run("-c", "core.hooksPath=/dev/null", "merge", "--no-ff", "--no-edit", "-q", "feat/demo/side")
    integrate(repo, first, WORK)
    result = integrate(repo, second, WORK)
    assert result.status == "merged"
    assert repo.is_ancestor(repo.rev_parse(second), WORK)
    assert sorted(repo.run("ls-tree", "--name-only", WORK).split()) == [
        "README.md",
        "a.py",
        "app.py",
        "b.py",
        "c.py",
    ]


def test_staged_integration_records_a_merge_commit_even_when_fast_forward_is_possible(
    repo: Git, tmp_path: Path, write: Write
) -> None:
    wt, branch = _task(repo, tmp_path, write, "task-9", {"migrations/001.sql": "create table t (id int);\n"})
    before = repo.rev_parse(WORK)
    result = integrate(repo, branch, WORK, merge_commit=True)
    assert result.status == "merged"
    head = repo.rev_parse(WORK)
    parents = repo.run("rev-list", "--parents", "-n1", head).split()[1:]
    assert parents == [before, wt.head_sha()]
    assert repo.run("log", "-1", "--format=%s", head).strip() == f"Merge {branch} into {WORK}"
    assert integrate(repo, branch, WORK, merge_commit=True).status == "up-to-date"
