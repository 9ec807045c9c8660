"""Files the environment commands leave in a clean checkout of the baseline, which every gate run would take for the
task's change: found by the preflight, which stops the run naming them (a Rust crate without its Cargo.lock
committed or ignored is the everyday case: `cargo test` writes it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.preflight.baseline import run_baseline
from pm_agent.testing.repo import commit_all, git
from pm_agent.vcs import Git

from .test_preflight_cli import assert_left_nothing, make_repo, pm


@pytest.fixture
def repo(git_repo: Path) -> Path:
    (git_repo / "notes.md").write_text("tracked\n", encoding="utf-8")
    (git_repo / ".gitignore").write_text("ignored.log\n", encoding="utf-8")
    commit_all(git_repo, "notes")
    return git_repo


@pytest.mark.parametrize(
    ("command", "leftovers"),
    [
        ("true", ()),
        ("echo x > report.txt", ("report.txt",)),
        ("mkdir -p out/deep && echo x > out/deep/a.txt && echo y > b.txt", ("b.txt", "out/deep/a.txt")),
        ("echo x > 'a b.txt' && echo y > é.txt", ("a b.txt", "é.txt")),  # names git would quote, as they are
        ("echo changed >> notes.md", ("notes.md",)),  # a tracked file the command rewrites
        ("rm notes.md", ("notes.md",)),
        ("echo x > ignored.log", ()),  # the project ignores it
        ("mkdir -p .pytest_cache pkg/__pycache__ && touch .pytest_cache/v pkg/__pycache__/m.pyc .coverage", ()),
    ],
)
def test_what_the_commands_leave_that_git_would_stage(repo: Path, command: str, leftovers: tuple[str, ...]) -> None:
    sha = git(repo, "rev-parse", "HEAD").strip()
    baseline = run_baseline(Git(repo), repo / ".pm-agent", sha, {"test_command": command}, timeout_s=30)
    assert baseline.leftovers == leftovers
    assert git(repo, "status", "--porcelain").strip() == "", "the user's checkout is untouched"


def test_a_run_whose_commands_leave_files_stops_before_any_session(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "environment:\n  test_command: sh -c 'echo 3 passed > report.txt'\n")
    result = pm("run", "docs/plan.md", cwd=repo)
    assert result.returncode == 2, result.stdout + result.stderr
    said = " ".join(result.stderr.split())
    assert "the environment commands leave files git does not ignore on the baseline commit" in said
    assert ": report.txt; each task's gates would find them in its change (checked-tree, scope)" in said
    assert "fix: add them to .gitignore (or commit them)" in said
    assert "session" not in result.stdout.lower()
    assert_left_nothing(repo)
