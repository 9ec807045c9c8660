"""Real git repositories in tmp_path, isolated from the user's and the system's git config."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pm_agent.vcs import Git

_IDENTITY_VARS = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL")

WriteFn = Callable[[Path, str, str], Path]
CommitFn = Callable[[Git, str], str]


@pytest.fixture(autouse=True)
def isolated_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path_factory.mktemp("gitconfig") / "config"
    config.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in _IDENTITY_VARS:
        monkeypatch.delenv(name, raising=False)


def _write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _commit(git: Git, message: str) -> str:
    git.run("add", "-A")
    git.run("commit", "-q", "--no-verify", "-m", message)
    return git.head_sha()


@pytest.fixture
def write() -> WriteFn:
    """write(root, "rel/path", text): create parents and write a file."""
    return _write


@pytest.fixture
def commit() -> CommitFn:
    """commit(git, message): a plain test commit of everything (works on any branch)."""
    return _commit


@pytest.fixture
def repo(tmp_path: Path) -> Git:
    """A repository on `main` with one commit, and a working branch `pm/demo/work` at that commit."""
    git = Git.init(tmp_path / "repo")
    git.run("config", "user.name", "Test")
    git.run("config", "user.email", "test@example.com")
    _write(git.path, "app.py", "def greet(name):\n    return f'hi {name}'\n")
    _write(git.path, "README.md", "# demo\n")
    _commit(git, "initial")
    git.run("branch", "pm/demo/work")
    return git
