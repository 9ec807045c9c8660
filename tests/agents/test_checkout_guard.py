"""The checkout guard: the main checkout and pm-agent's refs before and after a session, restored where safe."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from pm_agent.testing.repo import commit_all, git
from pm_agent.vcs.checkout_guard import CheckoutGuard, CheckoutReport


@pytest.fixture
def repo(git_repo: Path) -> Path:
    (git_repo / "src").mkdir()
    (git_repo / "src" / "app.py").write_text("print('app')\n", encoding="utf-8")
    (git_repo / ".git" / "info" / "exclude").write_text(".pm-agent/\n", encoding="utf-8")
    commit_all(git_repo, "app")
    git(git_repo, "branch", "pm/p1/work")
    git(git_repo, "tag", "-a", "-m", "checkpoint", "pm/p1/checkpoint-task-1")
    return git_repo


@pytest.fixture
def guard(repo: Path) -> CheckoutGuard:
    return CheckoutGuard(repo, repo / ".pm-agent" / "quarantine")


def test_nothing_changed_reports_nothing(repo: Path, guard: CheckoutGuard) -> None:
    (repo / "notes.txt").write_text("the user's own untracked notes\n", encoding="utf-8")
    (repo / ".pm-agent" / "worktrees").mkdir(parents=True)
    ticket = guard.begin()
    (repo / ".pm-agent" / "worktrees" / "scratch").write_text("pm-agent's own folder is not watched\n")
    report = guard.check(ticket, "session-1")
    assert not report.escaped
    assert report.lines() == []
    assert (repo / "notes.txt").exists()


def test_a_modified_tracked_file_is_restored_and_the_agents_version_kept(repo: Path, guard: CheckoutGuard) -> None:
    ticket = guard.begin()
    (repo / "README.md").write_text("hacked by an agent\n", encoding="utf-8")
    (repo / "src" / "app.py").unlink()
    report = guard.check(ticket, "session-7")
    assert report.escaped
    assert sorted(report.changes) == [
        f"README.md changed in the main checkout {guard.checkout}",
        f"src/app.py changed in the main checkout {guard.checkout}",
    ]
    assert git(repo, "status", "--porcelain") == ""
    assert (repo / "src" / "app.py").read_text(encoding="utf-8") == "print('app')\n"
    kept = repo / ".pm-agent" / "quarantine" / "session-7" / "README.md"
    assert kept.read_text(encoding="utf-8") == "hacked by an agent\n"
    assert any(line.startswith("README.md restored from HEAD") and str(kept) in line for line in report.restored)
    assert report.unrestored == []


def test_new_and_staged_files_are_removed_into_quarantine(repo: Path, guard: CheckoutGuard) -> None:
    ticket = guard.begin()
    (repo / "new" / "deep").mkdir(parents=True)
    (repo / "new" / "deep" / "x.txt").write_text("x\n", encoding="utf-8")
    (repo / "staged.txt").write_text("s\n", encoding="utf-8")
    git(repo, "add", "staged.txt")
    git(repo, "mv", "src/app.py", "src/moved.py")
    report = guard.check(ticket, "session-2")
    assert len(report.changes) == 4  # both sides of the rename, the new file, the staged file
    assert git(repo, "status", "--porcelain") == ""
    assert (repo / "src" / "app.py").exists()
    assert not (repo / "staged.txt").exists()
    quarantine = repo / ".pm-agent" / "quarantine" / "session-2"
    assert (quarantine / "new" / "deep" / "x.txt").read_text(encoding="utf-8") == "x\n"
    assert (quarantine / "staged.txt").exists()
    assert (quarantine / "src" / "moved.py").exists()


def test_the_users_own_uncommitted_changes_are_never_touched(repo: Path, guard: CheckoutGuard) -> None:
    (repo / "README.md").write_text("the user's edit\n", encoding="utf-8")
    (repo / "todo.txt").write_text("user's file\n", encoding="utf-8")
    ticket = guard.begin()
    (repo / "README.md").write_text("the user's edit, then an agent's\n", encoding="utf-8")
    (repo / "todo.txt").unlink()
    report = guard.check(ticket, "session-3")
    assert report.escaped
    assert (repo / "README.md").read_text(encoding="utf-8") == "the user's edit, then an agent's\n"
    assert not (repo / "todo.txt").exists()
    assert sorted(report.unrestored) == [
        "README.md (it already had uncommitted changes: left as it is)",
        "todo.txt (it already had uncommitted changes: left as it is)",
    ]
    assert report.restored == []


def test_a_moved_head_of_the_main_checkout_is_reported_never_reset(repo: Path, guard: CheckoutGuard) -> None:
    ticket = guard.begin()
    before = git(repo, "rev-parse", "HEAD")
    (repo / "README.md").write_text("agent\n", encoding="utf-8")
    after = commit_all(repo, "an agent committed on the user's branch")
    report = guard.check(ticket, "session-4")
    assert report.escaped
    assert report.changes[0].startswith(f"the main checkout's HEAD moved from {before[:12]} (main) to {after[:12]}")
    assert git(repo, "rev-parse", "HEAD") == after
    assert report.unrestored == ["the main checkout's HEAD (left as it is: the branch is the user's)"]


def test_pm_agents_refs_are_reset_created_ones_deleted(repo: Path, guard: CheckoutGuard) -> None:
    work = git(repo, "rev-parse", "pm/p1/work")
    tag = git(repo, "rev-parse", "refs/tags/pm/p1/checkpoint-task-1")
    ticket = guard.begin()
    git(repo, "commit", "-q", "--allow-empty", "-m", "sneaky")
    sneaky = git(repo, "rev-parse", "HEAD")
    git(repo, "reset", "-q", "--hard", work)
    git(repo, "update-ref", "refs/heads/pm/p1/work", sneaky)
    git(repo, "tag", "-d", "pm/p1/checkpoint-task-1")
    git(repo, "branch", "pm/p1/extra")
    git(repo, "branch", "feature/not-ours")
    report = guard.check(ticket, "session-5")
    assert sorted(report.changes) == [
        "pm-agent's ref refs/heads/pm/p1/extra was created at " + work[:12],
        f"pm-agent's ref refs/heads/pm/p1/work was moved from {work[:12]} to {sneaky[:12]}",
        f"pm-agent's ref refs/tags/pm/p1/checkpoint-task-1 was deleted (it was at {tag[:12]})",
    ]
    assert git(repo, "rev-parse", "pm/p1/work") == work
    assert git(repo, "rev-parse", "refs/tags/pm/p1/checkpoint-task-1") == tag
    assert git(repo, "cat-file", "-t", "refs/tags/pm/p1/checkpoint-task-1") == "tag"  # the annotated tag itself
    assert git(repo, "branch", "--list", "pm/p1/extra") == ""
    assert git(repo, "branch", "--list", "feature/not-ours") != ""  # not pm-agent's: not watched
    assert len(report.restored) == 3


def test_refs_pm_agent_moved_itself_are_not_an_escape(repo: Path, guard: CheckoutGuard) -> None:
    ticket = guard.begin()
    delivered = git(repo, "commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "task-2 delivered")
    git(repo, "update-ref", "refs/heads/pm/p1/work", delivered)
    git(repo, "tag", "pm/p1/checkpoint-task-2", delivered)
    guard.accept_refs("pm/p1/work", "pm/p1/checkpoint-task-2", None)
    report = guard.check(ticket, "session-6")
    assert not report.escaped
    assert git(repo, "rev-parse", "pm/p1/work") == delivered


def test_an_escape_found_after_one_session_is_reported_for_every_overlapping_one(
    repo: Path, guard: CheckoutGuard
) -> None:
    culprit = guard.begin()
    bystander = guard.begin()
    (repo / "README.md").write_text("by whom?\n", encoding="utf-8")
    first = guard.check(bystander, "session-1")  # ends first: finds and restores it
    later = guard.begin()
    second = guard.check(culprit, "session-2")  # ran at the same time: reported too
    third = guard.check(later, "session-3")  # started after it was found: clean
    assert first.changes
    assert not second.changes
    assert second.escaped
    assert second.elsewhere == [f"session-1: README.md changed in the main checkout {guard.checkout}"]
    assert not third.escaped


def test_a_session_that_changed_nothing_is_not_held_up_by_a_delivery(repo: Path, guard: CheckoutGuard) -> None:
    """Deliveries hold the lock while they move pm-agent's refs; a check that finds nothing changed needs none."""
    culprit, ticket = guard.begin(), guard.begin()
    (repo / "README.md").write_text("by whom?\n", encoding="utf-8")
    guard.check(culprit, "session-1")  # finds and restores it: an incident the other session overlapped

    async def during_a_delivery() -> CheckoutReport:
        async with guard.lock:
            return await asyncio.wait_for(guard.check_after(ticket, "session-2"), 60)

    report = asyncio.run(during_a_delivery())
    assert not report.changes
    assert report.elsewhere == [f"session-1: README.md changed in the main checkout {guard.checkout}"]
    assert report.quarantine == repo / ".pm-agent" / "quarantine" / "session-2"


def test_a_change_is_checked_and_restored_under_the_lock(repo: Path, guard: CheckoutGuard) -> None:
    ticket = guard.begin()
    (repo / "src" / "app.py").write_text("print('agent')\n", encoding="utf-8")

    async def after_a_delivery() -> CheckoutReport:
        await guard.lock.acquire()
        job = asyncio.ensure_future(guard.check_after(ticket, "session-3"))
        done, _ = await asyncio.wait({job}, timeout=1.0)
        assert not done, "it restores nothing while a delivery holds the lock"
        assert (repo / "src" / "app.py").read_text(encoding="utf-8") == "print('agent')\n"
        guard.lock.release()
        return await asyncio.wait_for(job, 60)

    report = asyncio.run(after_a_delivery())
    assert report.changes == [f"src/app.py changed in the main checkout {guard.checkout}"]
    assert (repo / "src" / "app.py").read_text(encoding="utf-8") == "print('app')\n"


@pytest.mark.parametrize("change", ["head", "file", "untracked", "ref", "tag"])
def test_the_look_without_the_lock_leaves_every_change_to_check(repo: Path, guard: CheckoutGuard, change: str) -> None:
    ticket = guard.begin()
    assert guard.unchanged(ticket, "session-4") is not None
    moved = git(repo, "commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "moved")
    if change == "head":
        git(repo, "switch", "-q", "-c", "elsewhere")
    elif change == "file":
        (repo / "src" / "app.py").write_text("print('agent')\n", encoding="utf-8")
    elif change == "untracked":
        (repo / "src" / "new.py").write_text("x = 1\n", encoding="utf-8")
    elif change == "ref":  # pm-agent's own move not accepted yet (a delivery under way) reads as a change too
        git(repo, "update-ref", "refs/heads/pm/p1/work", moved)
    else:
        git(repo, "tag", "pm/p1/checkpoint-task-9", moved)
    assert guard.unchanged(ticket, "session-4") is None
    if change in ("ref", "tag"):
        guard.accept_refs("pm/p1/work", "pm/p1/checkpoint-task-9")  # the delivery done: its moves are pm-agent's
        assert guard.unchanged(ticket, "session-4") is not None


def test_of_worktree_finds_the_main_checkout_and_none_for_the_checkout_itself(repo: Path, tmp_path: Path) -> None:
    worktree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "feat/t1", str(worktree))
    guard = CheckoutGuard.of_worktree(worktree, tmp_path / "q")
    assert guard is not None
    assert guard.checkout == repo.resolve()
    assert CheckoutGuard.of_worktree(repo, tmp_path / "q") is None
    assert CheckoutGuard.of_worktree(tmp_path / "q-not-a-repo", tmp_path / "q") is None
