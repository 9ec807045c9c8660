"""Fixtures for the plan tests: an empty git work tree and a file writer."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

Git = Callable[..., str]
Write = Callable[..., Path]


@pytest.fixture
def git() -> Git:
    """git(repo, *args) -> stdout; fixed identity, fails the test on error."""

    def _git(repo: Path, *args: str) -> str:
        done = subprocess.run(
            ["git", "-c", "user.name=Test", "-c", "user.email=test@example.org", *args],
            cwd=repo,
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        )
        return done.stdout

    return _git


@pytest.fixture
def empty_repo(tmp_path: Path, git: Git) -> Path:
    """A git work tree made with `git init`, no commits yet."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    return repo


@pytest.fixture
def write() -> Write:
    """write(root, relative_path, text="") -> the file, parent folders created."""

    def _write(root: Path, relative: str, text: str = "") -> Path:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    return _write
