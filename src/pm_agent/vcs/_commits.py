"""Commits, the trailer lookup that keys idempotent commits, tags and the reflog.

Hooks and signing are off for every commit and tag pm-agent makes; it never amends.
"""

from __future__ import annotations

import os
from pathlib import Path

from pm_agent.errors import VcsError
from pm_agent.vcs._core import FALLBACK_EMAIL, FALLBACK_NAME, GENERATED_EXCLUDES, NO_HOOKS_ARGS, GitCore
from pm_agent.vcs.models import GitCommandError


def read_reflog(log_path: Path) -> list[str]:
    """A reflog file's entries, oldest first, as "<old> <new> <message>" lines (none when it is missing)."""
    if not log_path.exists():
        return []
    entries = []
    for line in log_path.read_text(encoding="utf-8", errors="replace").splitlines():
        head, _, msg = line.partition("\t")
        parts = head.split(" ")
        if len(parts) >= 2:
            entries.append(f"{parts[0]} {parts[1]} {msg}")
    return entries


class GitCommits(GitCore):
    """Committing the worktree, finding a commit by trailer, tagging, reading the reflog."""

    def identity_args(self) -> list[str]:
        """`-c user.name/-c user.email` for pm-agent's fallback identity when none is configured."""
        out = self.try_run("config", "--get-regexp", r"^user\.(name|email)$").stdout
        keys = {line.split(" ", 1)[0].lower() for line in out.splitlines() if " " in line}
        configured = all(
            key in keys or os.environ.get(env_key)
            for key, env_key in (("user.name", "GIT_COMMITTER_NAME"), ("user.email", "GIT_COMMITTER_EMAIL"))
        )
        if configured:
            return []
        return ["-c", f"user.name={FALLBACK_NAME}", "-c", f"user.email={FALLBACK_EMAIL}"]

    def commit_all(self, message: str, *, author: str | None = None, allow_empty: bool = False) -> str:
        """Stage everything (generated files excluded) and commit it; return the new sha.

        Hooks and signing are off; `author` is "Name <email>". Never amends.
        """
        branch = self.current_branch()
        if branch is None:
            raise VcsError(f"refusing to commit on a detached HEAD in {self.path}")
        self.check_writable(branch, "commit to")
        self.run("add", "-A", "--", ".", *GENERATED_EXCLUDES)
        args = [*NO_HOOKS_ARGS, *self.identity_args(), "commit", "--quiet", "--cleanup=whitespace", "-F", "-"]
        if author:
            args.append(f"--author={author}")
        if allow_empty:
            args.append("--allow-empty")
        elif self.try_run("diff", "--cached", "--quiet").returncode == 0:
            raise VcsError(f"nothing to commit in {self.path}")
        self.run(*args, stdin_text=message)
        return self.head_sha()

    def find_commit_by_trailer(self, ref: str, branch: str = "HEAD", *, key: str = "Refs") -> str | None:
        """The newest commit on `branch` whose message has the line `<key>: <ref>` exactly, or None.

        The commit-idempotency key: look before committing a task (`ref` like "task-7").
        """
        wanted = f"{key}: {ref}"
        proc = self.try_run(
            "log", "--fixed-strings", f"--grep={wanted}", "--format=%H%x1f%B%x1e", "--end-of-options", branch, "--"
        )
        if proc.returncode != 0:
            raise GitCommandError(["log", branch], proc.returncode, f"unknown revision {branch!r}", cwd=self.path)
        out = proc.stdout
        for record in out.split("\x1e"):
            sha, _, body = record.strip("\n").partition("\x1f")
            if sha and any(line.strip() == wanted for line in body.splitlines()):
                return sha
        return None

    def tag(self, name: str, sha: str, message: str | None = None) -> str:
        """Create tag `name` at `sha` (annotated if `message`); idempotent when it already points there."""
        target = self.rev_parse(sha)
        proc = self.try_run("rev-parse", "--verify", "--quiet", f"refs/tags/{name}^{{commit}}")
        if proc.returncode == 0:
            existing = proc.stdout.strip()
            if existing != target:
                raise VcsError(f"tag {name!r} already exists at {existing[:12]}, not at {target[:12]}")
            return target
        if message is None:
            self.run("tag", name, target)
        else:
            self.run(*NO_HOOKS_ARGS, *self.identity_args(), "tag", "-a", "-m", message, name, target)
        return target

    def tags(self, pattern: str = "*") -> list[str]:
        """Tag names matching the glob `pattern`, sorted."""
        return sorted(self.run("tag", "--list", pattern).split())

    def reflog_entries(self, ref: str = "HEAD") -> list[str]:
        """The reflog of `ref` in this worktree, oldest first, as "<old> <new> <message>" lines."""
        return read_reflog(self.git_path(f"logs/{ref}"))

    def reflog_moved(self, ref: str, since_entries: int) -> list[str]:
        """Reflog messages of `ref` recorded after the first `since_entries` entries (empty: not moved)."""
        return [entry.split(" ", 2)[2] for entry in self.reflog_entries(ref)[since_entries:]]
