"""`environment.setup_command`: what a fresh checkout needs that lives outside git (`yarn install --immutable` for
Yarn's Plug'n'Play, `bundle install`, `composer install`), run first in the preflight's clean checkout, before the
environment commands that need it; it must succeed there, and leave only files git ignores."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pm_agent.preflight.baseline import PreflightError, check_baseline, run_baseline
from pm_agent.testing.repo import commit_all, git
from pm_agent.vcs import Git

from .test_preflight_cli import LOGGED_IN, assert_left_nothing, make_repo, pm


@pytest.fixture
def repo(git_repo: Path) -> Path:
    (git_repo / "notes.md").write_text("tracked\n", encoding="utf-8")
    (git_repo / ".gitignore").write_text("deps/\n", encoding="utf-8")
    commit_all(git_repo, "notes")
    return git_repo


def _baseline(repo: Path, setup: str) -> list[tuple[str, int]]:
    sha = git(repo, "rev-parse", "HEAD").strip()
    commands = {"test_command": "test -f deps/installed", "setup_command": setup}  # setup runs first all the same
    baseline = run_baseline(Git(repo), repo / ".pm-agent", sha, commands, timeout_s=30)
    check_baseline(baseline, timeout_s=30)
    return [(entry.key, entry.exit_code) for entry in baseline.commands]


def test_setup_runs_first_and_the_commands_find_what_it_installed(repo: Path) -> None:
    ran = _baseline(repo, "mkdir -p deps && touch deps/installed")
    assert ran == [("setup_command", 0), ("test_command", 0)]
    assert not (repo / "deps").exists(), "it ran in the preflight's clean checkout, not the user's"


def test_a_setup_that_fails_stops_the_run_and_the_commands_are_not_run(repo: Path) -> None:
    with pytest.raises(PreflightError) as raised:
        _baseline(repo, "echo 'lockfile out of date: run yarn install' >&2; exit 1")
    said = str(raised.value)
    assert "environment.setup_command fails in a clean checkout of the baseline commit" in said
    assert "-> exit 1" in said
    assert "lockfile out of date: run yarn install" in said
    assert (
        "fix: make it succeed there (every task's worktree runs it first), or set environment.setup_command: null"
        in said
    )
    assert "test_command" not in said, "the commands that need it were not run"


def test_a_setup_that_leaves_files_git_does_not_ignore_is_refused(repo: Path) -> None:
    with pytest.raises(PreflightError) as raised:
        _baseline(repo, "mkdir -p deps vendor && touch deps/installed vendor/autoload.php")
    assert "leave files git does not ignore" in str(raised.value)
    assert "vendor/autoload.php" in str(raised.value)


def test_run_stops_with_exit_2_before_any_session(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "environment:\n  setup_command: exit 7\n  test_command: 'true'\n")
    result = pm("run", "docs/plan.md", cwd=repo)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "environment.setup_command fails in a clean checkout of the baseline commit" in result.stderr
    assert "session" not in result.stdout.lower()
    assert_left_nothing(repo)


def test_init_says_a_failing_setup_is_not_ready_not_a_baseline(tmp_path: Path) -> None:
    """A PHP project whose `composer install` fails (a stand-in composer on PATH): init proposes it as the setup
    step and says it must succeed, as the run would stop on it, instead of calling it a baseline to ratchet."""
    repo = make_repo(tmp_path, "")
    (repo / "composer.json").write_text('{"name": "shop/cart"}\n', encoding="utf-8")
    (repo / "phpunit.xml").write_text("<phpunit/>\n", encoding="utf-8")
    commit_all(repo, "php")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name, body in (("composer", "echo 'lock file is not up to date' >&2; exit 1"), ("phpunit", "exit 0")):
        (bindir / name).write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
        (bindir / name).chmod(0o755)
    exe = shutil.which("pm-agent", path=str(Path(sys.executable).parent))
    assert exe is not None
    env = {"PATH": f"{bindir}:{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(tmp_path)} | LOGGED_IN
    result = subprocess.run(
        [exe, "init", "--force"], cwd=repo, capture_output=True, text=True, timeout=120, check=False, env=env
    )
    assert result.returncode == 0, result.stderr
    assert "  setup_command: composer install --no-interaction --no-progress" in result.stdout
    assert "  setup: NOT READY: exit 1\n      fix: make it succeed there (every task's worktree runs it first)" in (
        result.stdout
    )
    assert "already failing" not in result.stdout
    assert "  tests:" not in result.stdout, "nothing else ran without what the setup installs"
