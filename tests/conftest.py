"""Fixtures every test package may use: git repositories, the scripted model server, Claude Code."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pm_agent import redaction
from pm_agent.agents.claude import bundled_claude
from pm_agent.testing.model_server import ModelServer
from pm_agent.testing.repo import init_repo
from pm_agent.vcs import Git

_IDENTITY_VARS = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL")

NewGit = Callable[..., Git]


@pytest.fixture(autouse=True)
def _forget_remembered_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with no secret remembered: which tests share an xdist worker must not change results."""
    monkeypatch.setattr(redaction, "_remembered", {})


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    """A fresh repository (branch main, fixed identity) with one commit holding README.md."""
    return init_repo(tmp_path / "repo")


@pytest.fixture
def isolated_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """git as on a clean machine: an empty global config, no system config, no identity from the environment."""
    config = tmp_path_factory.mktemp("gitconfig") / "config"
    config.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in _IDENTITY_VARS:
        monkeypatch.delenv(name, raising=False)


def _new_git(path: Path, branch: str = "main") -> Git:
    git = Git.init(path, initial_branch=branch)
    git.run("config", "user.name", "Test")
    git.run("config", "user.email", "test@example.com")
    return git


@pytest.fixture
def new_git() -> NewGit:
    """new_git(path, branch="main"): an empty repository (no commit yet) with a local test identity."""
    return _new_git


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    """The scripted Anthropic Messages API on 127.0.0.1; add scenarios with `model_server.add(...)`."""
    with ModelServer() as server:
        yield server


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    """The real Claude Code CLI bundled in claude-agent-sdk (tests skip when it is missing)."""
    path = bundled_claude()
    if path is None:
        pytest.fail("claude-agent-sdk's bundled Claude Code CLI is missing: run make test (it installs it)")
    return path


@pytest.fixture
def agent_home(tmp_path: Path) -> Path:
    """HOME for agent sessions: keeps Claude Code's settings, sessions and scratch out of the user's."""
    home = tmp_path / "agent-home"
    home.mkdir()
    return home
