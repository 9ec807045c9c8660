"""Git through the CLI: baseline, diffs, worktrees, commits, tags, integration, tampering checks."""

from __future__ import annotations

from pm_agent.vcs.diff import DiffLines, parse_unified_diff, unquote_path
from pm_agent.vcs.git import (
    FALLBACK_EMAIL,
    FALLBACK_NAME,
    GENERATED_EXCLUDES,
    PROTECTED_BRANCHES,
    ChangeSet,
    FileChange,
    Git,
    GitCommandError,
    LogEntry,
    StatusEntry,
    WorktreeInfo,
)
from pm_agent.vcs.integrate import IntegrationResult, IntegrationStatus, integrate
from pm_agent.vcs.naming import checkpoint_tag, is_protected_branch, slugify, task_branch, working_branch
from pm_agent.vcs.snapshot import (
    CheckedTree,
    KeptSnapshot,
    commit_checked,
    drift,
    has_tree,
    kept_snapshot,
    snapshot,
    tree_with_files,
)
from pm_agent.vcs.tampering import (
    SessionBaseline,
    detect_agent_vcs_tampering,
    detect_tampering_since,
    record_session_baseline,
)

__all__ = [
    "FALLBACK_EMAIL",
    "FALLBACK_NAME",
    "GENERATED_EXCLUDES",
    "PROTECTED_BRANCHES",
    "ChangeSet",
    "CheckedTree",
    "DiffLines",
    "FileChange",
    "Git",
    "GitCommandError",
    "IntegrationResult",
    "IntegrationStatus",
    "KeptSnapshot",
    "LogEntry",
    "SessionBaseline",
    "StatusEntry",
    "WorktreeInfo",
    "checkpoint_tag",
    "commit_checked",
    "detect_agent_vcs_tampering",
    "detect_tampering_since",
    "drift",
    "has_tree",
    "integrate",
    "is_protected_branch",
    "kept_snapshot",
    "parse_unified_diff",
    "record_session_baseline",
    "slugify",
    "snapshot",
    "task_branch",
    "tree_with_files",
    "unquote_path",
    "working_branch",
]
