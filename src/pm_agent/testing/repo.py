"""Temporary git repositories for tests and the demo: init, a fixed identity, a first commit.

    repo = init_repo(tmp_path / "repo", files={"README.md": "# demo\\n"})
    git(repo, "log", "--oneline")
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

__all__ = ["GIT_ENV", "commit_all", "git", "init_repo"]

# A fixed identity and no user/system config, so commits are the same on every machine.
GIT_ENV: dict[str, str] = {
    "GIT_AUTHOR_NAME": "pm-agent test",
    "GIT_AUTHOR_EMAIL": "pm-agent-test@example.invalid",
    "GIT_COMMITTER_NAME": "pm-agent test",
    "GIT_COMMITTER_EMAIL": "pm-agent-test@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
}


def git(repo: Path, *args: str, check: bool = True) -> str:
    """Run git in `repo`; its stdout, stripped. Raises CalledProcessError (with output) on failure."""
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=False, timeout=60
    )
    if check and done.returncode != 0:
        raise subprocess.CalledProcessError(done.returncode, ["git", *args], done.stdout, done.stderr)
    return done.stdout.strip()


def commit_all(repo: Path, message: str) -> str:
    """Stage everything and commit; the new HEAD sha."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def init_repo(
    path: Path,
    *,
    branch: str = "main",
    files: Mapping[str, str] | None = None,
    message: str = "Initial commit",
) -> Path:
    """A new repository at `path` with a local identity and one commit holding `files`."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", branch)
    for key, value in {
        "user.name": GIT_ENV["GIT_AUTHOR_NAME"],
        "user.email": GIT_ENV["GIT_AUTHOR_EMAIL"],
        "commit.gpgsign": "false",
        "tag.gpgsign": "false",
        "core.autocrlf": "false",
    }.items():
        git(path, "config", key, value)
    for name, text in (files or {"README.md": "# test repository\n"}).items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    commit_all(path, message)
    return path
