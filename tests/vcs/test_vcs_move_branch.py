"""`Git.move_branch`: a branch moved by compare-and-set, in process where git's `update-ref` would write the same
(the ref, the branch's reflog, HEAD's reflog in the worktree that has it checked out), by git everywhere else."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pm_agent.errors import VcsError
from pm_agent.vcs import Git

from .conftest import count_git_calls


def _commit_on(git: Git, message: str) -> str:
    return git.run("commit-tree", git.rev_parse_tree("HEAD"), "-p", git.head_sha(), "-m", message).strip()


def _undated(lines: list[str]) -> list[str]:
    return [re.sub(r"> \d+ [+-]\d{4}(\t|$)", r"> DATE\1", line) for line in lines]


def _logs(git: Git, worktree: Git, branch: str) -> tuple[list[str], list[str]]:
    branch_log = git.common_dir() / "logs" / "refs" / "heads" / branch
    head_log = worktree.git_path("logs/HEAD")
    read = lambda p: p.read_text().splitlines() if p.exists() else []  # noqa: E731
    return _undated(read(branch_log)), _undated(read(head_log))


def _pair(repo: Git, tmp_path: Path) -> tuple[Git, Git, str]:
    ours = repo.worktree_add(tmp_path / "ours", "feat/demo/ours", "main")
    theirs = repo.worktree_add(tmp_path / "theirs", "feat/demo/theirs", "main")
    return ours, theirs, _commit_on(repo, "next")


def test_in_process_it_writes_what_git_writes(repo: Git, tmp_path: Path) -> None:
    ours, theirs, new = _pair(repo, tmp_path)
    old = repo.head_sha()
    ours.writes_own_objects()  # the config read once (git processes), before counting
    calls = count_git_calls(ours)
    ours.move_branch("feat/demo/ours", new, old, "pm-agent: commit the checked tree")
    assert calls == [], "no git process"
    theirs.run("update-ref", "-m", "pm-agent: commit the checked tree", "refs/heads/feat/demo/theirs", new, old)
    assert repo.rev_parse("feat/demo/ours") == repo.rev_parse("feat/demo/theirs") == new
    assert _logs(repo, ours, "feat/demo/ours") == _logs(repo, theirs, "feat/demo/theirs")
    branch_log, head_log = _logs(repo, ours, "feat/demo/ours")
    assert branch_log[-1].startswith(f"{old} {new} ")
    assert branch_log[-1].endswith("\tpm-agent: commit the checked tree")
    assert head_log[-1] == branch_log[-1]
    assert not list(repo.common_dir().rglob("*.lock"))


def test_a_packed_branch_and_a_branch_no_worktree_has(repo: Git, tmp_path: Path) -> None:
    new = _commit_on(repo, "next")
    old = repo.head_sha()
    repo.run("branch", "other")
    repo.run("pack-refs", "--all")
    for name in ("pm/demo/work", "other"):  # made again, as git makes a branch's missing reflog
        (repo.common_dir() / "logs" / "refs" / "heads" / name).unlink()
    repo.writes_own_objects()
    calls = count_git_calls(repo)
    repo.move_branch("pm/demo/work", new, old, "pm-agent: land task-1", hooks=True)
    assert calls == []
    repo.run("update-ref", "-m", "pm-agent: land task-1", "refs/heads/other", new, old)
    assert repo.rev_parse("pm/demo/work") == repo.rev_parse("other") == new
    ours = _undated((repo.common_dir() / "logs/refs/heads/pm/demo/work").read_text().splitlines())
    theirs = _undated((repo.common_dir() / "logs/refs/heads/other").read_text().splitlines())
    assert ours == theirs
    assert len(ours) == 1
    assert repo.reflog_entries("HEAD")[-1].split(" ", 2)[1] == old, "main's HEAD did not move: no entry there"


def test_a_branch_that_moved_meanwhile_is_refused_by_git_and_stays(repo: Git, tmp_path: Path) -> None:
    ours, _, new = _pair(repo, tmp_path)
    elsewhere = _commit_on(repo, "someone else's")
    repo.run("update-ref", "refs/heads/feat/demo/ours", elsewhere)
    ours.writes_own_objects()
    calls = count_git_calls(ours)
    with pytest.raises(VcsError, match="expected"):
        ours.move_branch("feat/demo/ours", new, repo.head_sha(), "pm-agent: commit the checked tree")
    assert [c[c.index("update-ref") :][:2] for c in calls] == [("update-ref", "-m")]
    assert repo.rev_parse("feat/demo/ours") == elsewhere
    assert not list(repo.common_dir().rglob("*.lock"))


@pytest.mark.parametrize("oddity", ["lock", "hook", "hooks_path", "message", "no_logs", "reftable", "odd_logs"])
def test_what_git_must_do_it_does(repo: Git, tmp_path: Path, oddity: str) -> None:
    new = _commit_on(repo, "next")
    old = repo.head_sha()
    ref_file = repo.common_dir() / "refs" / "heads" / "pm" / "demo" / "work"
    hooks = repo.common_dir() / "hooks"
    ran = tmp_path / "hook-ran"
    reason = "pm-agent: land task-1"
    if oddity == "lock":
        ref_file.with_name("work.lock").write_text("")
    elif oddity in ("hook", "hooks_path"):
        folder = hooks if oddity == "hook" else tmp_path / "my-hooks"
        folder.mkdir(exist_ok=True)
        script = folder / "reference-transaction"
        script.write_text(f"#!/bin/sh\necho \"$1\" >> {ran}\n")
        script.chmod(0o755)
        if oddity == "hooks_path":
            repo.run("config", "core.hooksPath", str(folder))
    elif oddity == "reftable":
        (repo.common_dir() / "reftable").mkdir()
    elif oddity == "odd_logs":  # a value git reads as true, pm-agent does not try to
        repo.run("config", "core.logAllRefUpdates", "2")
    elif oddity == "message":
        reason = "pm-agent:  two spaces"
    else:
        repo.run("config", "core.logAllRefUpdates", "false")
        (repo.common_dir() / "logs" / "refs" / "heads" / "pm" / "demo" / "work").unlink()
    repo.writes_own_objects()
    calls = count_git_calls(repo)
    try:
        repo.move_branch("pm/demo/work", new, old, reason, hooks=True)
    except VcsError:
        assert oddity == "lock"
    if oddity == "no_logs":  # plain enough for pm-agent: it makes no reflog, as git would not
        assert calls == []
        assert not (repo.common_dir() / "logs" / "refs" / "heads" / "pm" / "demo" / "work").exists()
    else:
        assert [c[c.index("update-ref") :][:2] for c in calls] == [("update-ref", "-m")]
    assert repo.rev_parse("pm/demo/work") == (old if oddity == "lock" else new)
    if oddity in ("hook", "hooks_path"):
        assert ran.read_text().split() == ["prepared", "committed"]


def test_a_bare_repository_makes_reflogs_only_in_its_worktrees_as_git_does(tmp_path: Path) -> None:
    bare = Git(tmp_path / "shared.git")
    Git(tmp_path).run("init", "-q", "--bare", "-b", "main", str(bare.path))
    bare.run("config", "user.name", "Test")
    bare.run("config", "user.email", "test@example.com")
    tree = bare.run("mktree", stdin_text="").strip()
    first = bare.run("commit-tree", tree, "-m", "first").strip()
    new = bare.run("commit-tree", tree, "-p", first, "-m", "second").strip()
    for name in ("main", "a", "b", "c", "d"):
        bare.run("update-ref", f"refs/heads/{name}", first)
    worktree = bare.worktree_add(tmp_path / "wt", "feat/x", "main")
    for handle in (bare, worktree):
        handle.writes_own_objects()
    calls = (count_git_calls(bare), count_git_calls(worktree))
    bare.move_branch("a", new, first, "pm-agent: land")  # no work tree: no reflog made
    worktree.move_branch("b", new, first, "pm-agent: land")  # a work tree: made
    assert calls == ([], [])
    bare.run("update-ref", "-m", "pm-agent: land", "refs/heads/c", new, first)  # git's, beside them
    worktree.run("update-ref", "-m", "pm-agent: land", "refs/heads/d", new, first)
    logs = bare.path / "logs" / "refs" / "heads"
    assert [(logs / n).exists() for n in "abcd"] == [False, True, False, True]
    assert {bare.rev_parse(n) for n in "abcd"} == {new}


def _left(common: Path, top: str) -> list[str]:
    """What is left under refs/heads/<top> and logs/refs/heads/<top>."""
    return sorted(
        str(p.relative_to(common)).replace(top, "TOP")
        for root in (common / "refs" / "heads", common / "logs" / "refs" / "heads")
        for p in (root / top).rglob("*")
    ) + [str((root / top).exists()) for root in (common / "refs" / "heads", common / "logs" / "refs" / "heads")]


def test_a_loose_branch_is_deleted_in_process_as_git_deletes_it(repo: Git) -> None:
    common = repo.common_dir()
    for top in ("ours", "theirs"):  # the same branches, one side deleted by pm-agent, the other by git
        for name in ("a/one", "a/two", "b/three"):
            repo.run("branch", f"{top}/{name}")
    repo.writes_own_objects()
    calls = count_git_calls(repo)
    repo.delete_branch("ours/a/one")  # a sibling stays: its folder stays
    repo.delete_branch("ours/b/three")  # the last in its folder: the folder goes, its reflog's too
    assert calls == []
    repo.run("update-ref", "-d", "refs/heads/theirs/a/one")
    repo.run("update-ref", "-d", "refs/heads/theirs/b/three")
    assert _left(common, "ours") == _left(common, "theirs")
    assert not (common / "refs" / "heads" / "ours" / "b").exists()
    assert not (common / "logs" / "refs" / "heads" / "ours" / "b").exists()
    assert repo.branch_exists("ours/a/two")
    assert not repo.branch_exists("ours/a/one")
    assert not list(common.rglob("*.lock"))
    repo.delete_branch("ours/a/two")
    assert not (common / "refs" / "heads" / "ours").exists()
    repo.run("pack-refs", "--all")  # every branch packed: the one loose branch made next is refs/heads' only file
    repo.run("branch", "alone")
    calls.clear()
    repo.delete_branch("alone")
    assert calls == []
    assert (common / "refs" / "heads").is_dir(), "refs/heads stays, as git keeps it"


@pytest.mark.parametrize("oddity", ["packed", "packed_and_loose", "symbolic", "hook", "lock", "reftable"])
def test_a_branch_git_must_delete_is_deleted_by_git(repo: Git, tmp_path: Path, oddity: str) -> None:
    common = repo.common_dir()
    repo.run("branch", "gone/soon")
    ran = tmp_path / "hook-ran"
    if oddity == "packed":
        repo.run("pack-refs", "--all")
    elif oddity == "packed_and_loose":  # packed, then moved: loose over its packed line, which must go too
        repo.run("pack-refs", "--all")
        repo.run("update-ref", "refs/heads/gone/soon", _commit_on(repo, "moved"))
    elif oddity == "reftable":
        (common / "reftable").mkdir()
    elif oddity == "symbolic":
        repo.run("branch", "gone/target")
        repo.run("update-ref", "-d", "refs/heads/gone/soon")
        repo.run("symbolic-ref", "refs/heads/gone/soon", "refs/heads/gone/target")
    elif oddity == "hook":
        script = common / "hooks" / "reference-transaction"
        script.parent.mkdir(exist_ok=True)
        script.write_text(f"#!/bin/sh\necho \"$1\" >> {ran}\n")
        script.chmod(0o755)
    else:
        (common / "refs" / "heads" / "gone" / "soon.lock").write_text("")
    repo.writes_own_objects()
    calls = count_git_calls(repo)
    try:
        repo.delete_branch("gone/soon")
    except VcsError:
        assert oddity == "lock"
    assert [c[0] for c in calls][:1] == ["update-ref"]
    if oddity == "symbolic":
        return  # what deleting a symbolic ref does is git's to say
    assert repo.branch_exists("gone/soon") == (oddity == "lock")
    if oddity == "hook":
        assert ran.read_text().split()[-1] == "committed"
    if oddity == "packed":
        assert "gone/soon" not in (common / "packed-refs").read_text()
