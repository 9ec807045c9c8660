"""Detect an agent touching version control in its worktree.

Agents must not commit, move HEAD, switch branch or rewrite history: commits are pm-agent's. When a
session starts, pm-agent records a `SessionBaseline` (HEAD, branch, length of the worktree's HEAD
reflog); afterwards `detect_agent_vcs_tampering` compares. The reflog catches a commit followed by a
reset back to the recorded sha, which a HEAD comparison alone would miss.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from pm_agent.errors import VcsError
from pm_agent.vcs._commits import read_reflog
from pm_agent.vcs.git import Git

_IN_PROGRESS = {
    "MERGE_HEAD": "a merge",
    "CHERRY_PICK_HEAD": "a cherry-pick",
    "REVERT_HEAD": "a revert",
    "rebase-merge": "a rebase",
    "rebase-apply": "a rebase or am",
}


class SessionBaseline(BaseModel):
    """What the worktree's version control looked like when the agent session started."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    head: str
    branch: str | None
    head_reflog_entries: int = 0


def record_session_baseline(worktree: Path | str) -> SessionBaseline:
    """Snapshot HEAD, branch and HEAD reflog length before an agent session starts."""
    git = Git(worktree)
    return SessionBaseline(
        head=git.head_sha(),
        branch=git.current_branch(),
        head_reflog_entries=len(git.reflog_entries("HEAD")),
    )


def detect_agent_vcs_tampering(
    worktree: Path | str,
    expected_head: str,
    expected_branch: str | None = None,
    *,
    head_reflog_entries: int | None = None,
) -> str | None:
    """A reason string when the agent committed, moved HEAD, switched branch or rewrote history; else None.

    `expected_branch` None skips the branch check; `head_reflog_entries` None skips the reflog check.
    """
    git = Git(worktree)
    try:
        head = git.head_sha()
    except VcsError as exc:
        return f"HEAD cannot be read: {exc}"
    reasons: list[str] = []
    branch = git.current_branch()
    if expected_branch is not None and branch != expected_branch:
        now = f"branch {branch!r}" if branch else "a detached HEAD"
        reasons.append(f"switched from branch {expected_branch!r} to {now}")
    if head != expected_head:
        if git.is_ancestor(expected_head, head):
            count = len(git.commits_since(expected_head, head))
            reasons.append(f"committed: HEAD is {count} commit(s) ahead of {expected_head[:12]} (now {head[:12]})")
        else:
            reasons.append(f"moved HEAD / rewrote history: HEAD is {head[:12]}, expected {expected_head[:12]}")
    if expected_branch is not None and branch != expected_branch:
        # Only a worktree that left the branch can have moved it unseen (HEAD moving it is caught above): the
        # usual session, still on its branch, costs no git process here.
        found = git.try_run("rev-parse", "--verify", "--quiet", f"refs/heads/{expected_branch}^{{commit}}")
        tip = found.stdout.strip() if found.returncode == 0 else None  # None: the branch is gone
        if tip is not None and tip != expected_head:
            reasons.append(f"branch {expected_branch!r} moved to {tip[:12]}")
    reflog, *in_progress = git.git_paths("logs/HEAD", *_IN_PROGRESS)  # one git call for every path
    if head_reflog_entries is not None:
        moves = [entry.split(" ", 2)[2] for entry in read_reflog(reflog)[head_reflog_entries:]]
        if moves and head == expected_head and not reasons:
            reasons.append(f"HEAD moved and came back ({'; '.join(moves[:5])})")
        elif moves:
            reasons.append(f"HEAD reflog: {'; '.join(moves[:5])}")
    for path, what in zip(in_progress, _IN_PROGRESS.values(), strict=True):
        if path.exists():
            reasons.append(f"{what} is in progress")
    return "; ".join(reasons) or None


def detect_tampering_since(worktree: Path | str, baseline: SessionBaseline) -> str | None:
    """`detect_agent_vcs_tampering` against a recorded `SessionBaseline`."""
    return detect_agent_vcs_tampering(
        worktree, baseline.head, baseline.branch, head_reflog_entries=baseline.head_reflog_entries
    )


__all__ = [
    "SessionBaseline",
    "detect_agent_vcs_tampering",
    "detect_tampering_since",
    "record_session_baseline",
]
