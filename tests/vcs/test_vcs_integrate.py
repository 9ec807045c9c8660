"""Integrating task branches into the working branch: fast-forward, cherry-pick, conflicts, no force."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

import pytest

from pm_agent.errors import VcsError
from pm_agent.vcs import Git, integrate

# The package's `integrate` is the function; the module is the one its `_sides` lives in.
integrate_module = importlib.import_module("pm_agent.vcs.integrate")

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


def _header(git: Git, sha: str) -> tuple[dict[str, str], str]:
    header, _, message = git.run("cat-file", "commit", sha).partition("\n\n")
    fields = dict(line.split(" ", 1) for line in header.splitlines())
    return fields, message


def test_one_commit_lands_as_git_cherry_pick_would_make_it(repo: Git, tmp_path: Path, write: Write) -> None:
    """One commit is picked without a scratch worktree: same tree, author, date and message as `git cherry-pick`."""
    _, first = _task(repo, tmp_path, write, "task-1", {"a.py": "a = 1\n", "app.py": "x = 1\n"})
    wt = repo.worktree_add(tmp_path / "task-2", "feat/demo/task-2", WORK)
    write(wt.path, "b.py", "b = 1\n")
    write(wt.path, "README.md", "# demo\n\nmore\n")
    message = "feat: two  \n\n  indented body, trailing spaces  \n\nRefs: task-2\n\n"
    author = {
        "GIT_AUTHOR_NAME": "Ann Author",
        "GIT_AUTHOR_EMAIL": "ann@example.invalid",
        "GIT_AUTHOR_DATE": "981173106 +0700",
    }
    wt.run("add", "-A")
    wt.run("commit", "-q", "--no-verify", "--cleanup=verbatim", "-F", "-", stdin_text=message, env=author)
    original = wt.head_sha()
    assert integrate(repo, first, WORK).status == "fast-forward"
    before = repo.rev_parse(WORK)
    result = integrate(repo, "feat/demo/task-2", WORK)
    assert result.status == "cherry-picked"
    assert result.commits == [original]
    reference = repo.worktree_add_detached(tmp_path / "reference", before)
    reference.run("cherry-pick", "--allow-empty", original)
    picked, picked_message = _header(repo, result.after)
    expected, expected_message = _header(repo, reference.head_sha())
    assert picked["tree"] == expected["tree"]
    assert picked["parent"] == before
    assert picked["author"] == expected["author"] == "Ann Author <ann@example.invalid> 981173106 +0700"
    assert picked_message == expected_message == message
    assert repo.find_commit_by_trailer("task-2", WORK) == result.after


def test_a_branch_of_two_commits_lands_as_two_commits(repo: Git, tmp_path: Path, write: Write) -> None:
    _, first = _task(repo, tmp_path, write, "task-1", {"a.py": "a = 1\n"})
    wt = repo.worktree_add(tmp_path / "task-2", "feat/demo/task-2", WORK)
    write(wt.path, "b.py", "b = 1\n")
    wt.commit_all("feat: step one\n")
    write(wt.path, "c.py", "c = 1\n")
    wt.commit_all("feat: step two\n\nRefs: task-2\n")
    integrate(repo, first, WORK)
    result = integrate(repo, "feat/demo/task-2", WORK)
    assert result.status == "cherry-picked"
    landed = repo.commits_since(result.before, WORK)
    assert len(landed) == 2
    assert [repo.run("log", "-1", "--format=%s", sha).strip() for sha in landed] == ["feat: step one", "feat: step two"]


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


@pytest.mark.parametrize("moved", ["no", "forward", "elsewhere"])
@pytest.mark.parametrize("knows", [False, True])
def test_a_known_one_commit_branch_integrates_as_rev_list_would_tell(
    repo: Git, tmp_path: Path, write: Write, monkeypatch: pytest.MonkeyPatch, moved: str, knows: bool
) -> None:
    # The caller's word (the commit it made on its parent, and which commits it knows are ancestors of the working
    # branch) replaces `rev-list`, and must lead where `rev-list` leads: the same branch built twice, once each way.
    base = repo.rev_parse("main")
    results = []
    for hinted in (False, True):
        repo.run("branch", "-f", WORK, base)
        wt, branch = _task(repo, tmp_path, write, f"task-{hinted}", {"n.py": "n = 1\n"})
        if moved == "forward":
            _, other = _task(repo, tmp_path, write, f"other-{hinted}", {"o.py": "o = 1\n"})
            assert integrate(repo, other, WORK).status == "fast-forward"
        elif moved == "elsewhere":  # rewritten behind pm-agent's back: the parent is no ancestor of it now
            root = repo.run("commit-tree", f"{base}^{{tree}}", "-m", "unrelated")
            repo.run("branch", "-f", WORK, root.strip())
        tip = repo.rev_parse(WORK)
        told = knows and moved != "elsewhere"  # the caller knows of no rewrite: it never tells of one
        seen = {base, tip} if told else set()
        sides = integrate_module._sides
        if hinted and told:  # git is not asked
            monkeypatch.setattr(integrate_module, "_sides", lambda *a: pytest.fail("rev-list asked"))
        one = (wt.head_sha(), base) if hinted else None
        result = integrate(repo, branch, WORK, one_commit=one, ancestor=lambda c, t, s=seen, w=tip: c in s and t == w)
        monkeypatch.setattr(integrate_module, "_sides", sides)
        tree = repo.run("rev-parse", f"{result.after}^{{tree}}").strip()
        results.append((result.status, result.commits == [wt.head_sha()], result.before == tip, tree))
    assert results[0] == results[1]
    if moved != "elsewhere":
        assert results[0][:3] == ("cherry-picked" if moved == "forward" else "fast-forward", True, True)
