"""An agent must not commit, move HEAD, switch branch or rewrite history in its worktree."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pm_agent.vcs import (
    Git,
    SessionBaseline,
    detect_agent_vcs_tampering,
    detect_tampering_since,
    record_session_baseline,
)

Write = Callable[[Path, str, str], Path]
Commit = Callable[[Git, str], str]


@pytest.fixture
def session(repo: Git, tmp_path: Path) -> tuple[Git, SessionBaseline]:
    wt = repo.worktree_add(tmp_path / "wt", "feat/demo/task-1-x", "pm/demo/work")
    return wt, record_session_baseline(wt.path)


def test_editing_and_staging_files_is_fine(session: tuple[Git, SessionBaseline], write: Write) -> None:
    wt, baseline = session
    write(wt.path, "new.py", "x = 1\n")
    wt.run("add", "new.py")
    assert detect_tampering_since(wt.path, baseline) is None
    assert detect_agent_vcs_tampering(wt.path, baseline.head) is None


def test_agent_commit_is_caught(session: tuple[Git, SessionBaseline], write: Write, commit: Commit) -> None:
    wt, baseline = session
    write(wt.path, "new.py", "x = 1\n")
    commit(wt, "agent commit")
    reason = detect_tampering_since(wt.path, baseline)
    assert reason is not None
    assert "committed" in reason
    assert "1 commit" in reason
    assert "committed" in (detect_agent_vcs_tampering(wt.path, baseline.head) or "")


def test_branch_switch_is_caught(session: tuple[Git, SessionBaseline]) -> None:
    wt, baseline = session
    wt.run("checkout", "-q", "-b", "agent-branch")
    reason = detect_tampering_since(wt.path, baseline)
    assert reason is not None
    assert "switched from branch 'feat/demo/task-1-x' to branch 'agent-branch'" in reason


def test_detached_head_is_caught(session: tuple[Git, SessionBaseline]) -> None:
    wt, baseline = session
    wt.run("checkout", "-q", "--detach")
    assert "detached" in (detect_tampering_since(wt.path, baseline) or "")


def test_reset_to_older_commit_is_caught(repo: Git, tmp_path: Path, write: Write, commit: Commit) -> None:
    wt = repo.worktree_add(tmp_path / "wt", "feat/demo/task-2-y", "pm/demo/work")
    write(wt.path, "a.py", "a\n")
    commit(wt, "earlier accepted work")
    baseline = record_session_baseline(wt.path)
    wt.run("reset", "-q", "--hard", "HEAD~1")
    reason = detect_tampering_since(wt.path, baseline)
    assert reason is not None
    assert "rewrote history" in reason


def test_commit_then_reset_back_is_caught_by_the_reflog(
    session: tuple[Git, SessionBaseline], write: Write, commit: Commit
) -> None:
    wt, baseline = session
    write(wt.path, "a.py", "a\n")
    commit(wt, "sneaky")
    wt.run("reset", "-q", "--soft", baseline.head)
    assert wt.head_sha() == baseline.head
    reason = detect_tampering_since(wt.path, baseline)
    assert reason is not None
    assert "moved and came back" in reason
    assert "commit: sneaky" in reason


def test_merge_in_progress_is_caught(repo: Git, tmp_path: Path, write: Write, commit: Commit) -> None:
    other = repo.worktree_add(tmp_path / "other", "feat/demo/other", "pm/demo/work")
    write(other.path, "app.py", "other\n")
    commit(other, "other change")
    wt = repo.worktree_add(tmp_path / "wt", "feat/demo/task-5-z", "pm/demo/work")
    write(wt.path, "app.py", "mine\n")
    commit(wt, "mine")
    baseline = record_session_baseline(wt.path)
    proc = wt.try_run("merge", "--no-ff", "--no-edit", "feat/demo/other")
    assert proc.returncode != 0
    reason = detect_tampering_since(wt.path, baseline)
    assert reason is not None
    assert "a merge is in progress" in reason
