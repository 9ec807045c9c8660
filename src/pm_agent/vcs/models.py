"""Data returned by the git layer, and its error type."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from pm_agent.errors import VcsError


class GitCommandError(VcsError):
    """A git command that failed, timed out or could not start; carries the command, exit code and stderr.

    `returncode` is None when git did not exit by itself (timeout, not startable).
    """

    def __init__(
        self, args: Sequence[str], returncode: int | None, stderr: str, *, cwd: Path, timed_out: bool = False
    ) -> None:
        self.cmd = ["git", *args]
        self.returncode = returncode
        self.stderr = stderr.strip()
        self.cwd = cwd
        self.timed_out = timed_out
        how = "timed out" if timed_out else ("did not start" if returncode is None else f"exit {returncode}")
        detail = f": {self.stderr}" if self.stderr else ""
        super().__init__(f"`{' '.join(self.cmd)}` failed in {cwd} ({how}){detail}")


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StatusEntry(_Frozen):
    """One line of `git status --porcelain`: the two-letter code and the path."""

    code: str
    path: str


class LogEntry(_Frozen):
    """One commit of `git log`."""

    sha: str
    author: str
    date: str  # ISO 8601, author date
    subject: str


class WorktreeInfo(_Frozen):
    """One entry of `git worktree list --porcelain`."""

    path: str
    head: str | None = None
    branch: str | None = None  # short name, None when detached or bare
    detached: bool = False
    bare: bool = False
    locked: bool = False
    prunable: bool = False


class FileChange(_Frozen):
    """A changed path and its status letter: A added, M modified, D deleted, T type change."""

    path: str
    status: str


class ChangeSet(_Frozen):
    """Everything gates need to know about a change, computed from one snapshot."""

    base: str
    target: str  # the commit or tree compared with base
    files: list[FileChange] = Field(default_factory=list)
    added: dict[str, list[tuple[int, str]]] = Field(default_factory=dict)
    removed: dict[str, list[tuple[int, str]]] = Field(default_factory=dict)

    def names(self) -> list[str]:
        """Every changed path (added, modified and deleted)."""
        return [f.path for f in self.files]

    def present(self) -> list[str]:
        """Changed paths that still exist after the change (not deleted)."""
        return [f.path for f in self.files if f.status != "D"]

    def deleted(self) -> list[str]:
        """Paths the change deletes."""
        return [f.path for f in self.files if f.status == "D"]

    def status_of(self, path: str) -> str | None:
        """The status letter of `path`, None when unchanged."""
        for f in self.files:
            if f.path == path:
                return f.status
        return None


__all__ = ["ChangeSet", "FileChange", "GitCommandError", "LogEntry", "StatusEntry", "WorktreeInfo"]
