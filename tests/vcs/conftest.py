"""Real git repositories in tmp_path, isolated from the user's and the system's git config."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from pm_agent.vcs import Git

WriteFn = Callable[[Path, str, str], Path]
CommitFn = Callable[[Git, str], str]


def count_git_calls(git: Git) -> list[tuple[str, ...]]:
    """From now on, the arguments of every git process this handle starts (`try_run`, which `run` calls)."""
    calls: list[tuple[str, ...]] = []
    run = git.try_run

    def counted(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
        calls.append(args)
        return run(*args, **kwargs)  # type: ignore[arg-type]

    git.try_run = counted  # type: ignore[method-assign]
    return calls


@pytest.fixture(autouse=True)
def _clean_git(isolated_git: None) -> None:
    """Every vcs test runs git as on a clean machine (`isolated_git` in tests/conftest.py)."""


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
def repo(tmp_path: Path, new_git: Callable[..., Git]) -> Git:
    """A repository on `main` with one commit, and a working branch `pm/demo/work` at that commit."""
    git = new_git(tmp_path / "repo")
    _write(git.path, "app.py", "def greet(name):\n    return f'hi {name}'\n")
    _write(git.path, "README.md", "# demo\n")
    _commit(git, "initial")
    git.run("branch", "pm/demo/work")
    return git
