"""The git CLI (started by `_spawn`, posix_spawn), bound to one repository or worktree: `Git`.

Every call has a timeout; every failure raises `GitCommandError` (a `VcsError`) naming the command and
its stderr. pm-agent never force-pushes, never amends and never writes to a protected branch
(main/master by default): those are read only.

`Git` is put together from one module per job: `_core` (running git, reading), `_diffs` (diffs against
a commit or the working tree), `_worktrees` (branches, worktrees) and `_commits` (commits, trailers, tags,
reflog). Integrating a task branch is `pm_agent.vcs.integrate.integrate(git, ...)`.
"""

from __future__ import annotations

from pm_agent.vcs._commits import GitCommits
from pm_agent.vcs._core import (
    DEFAULT_TIMEOUT_S,
    FALLBACK_EMAIL,
    FALLBACK_NAME,
    GENERATED_EXCLUDES,
    NO_HOOKS_ARGS,
    PROTECTED_BRANCHES,
)
from pm_agent.vcs._diffs import GitDiffs
from pm_agent.vcs._worktrees import GitWorktrees
from pm_agent.vcs.models import (
    ChangeSet,
    FileChange,
    GitCommandError,
    LogEntry,
    StatusEntry,
    WorktreeInfo,
)


class Git(GitDiffs, GitWorktrees, GitCommits):
    """A git repository or worktree at `path`."""


__all__ = [
    "DEFAULT_TIMEOUT_S",
    "FALLBACK_EMAIL",
    "FALLBACK_NAME",
    "GENERATED_EXCLUDES",
    "NO_HOOKS_ARGS",
    "PROTECTED_BRANCHES",
    "ChangeSet",
    "FileChange",
    "Git",
    "GitCommandError",
    "LogEntry",
    "StatusEntry",
    "WorktreeInfo",
]
