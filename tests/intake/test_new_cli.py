"""`pm-agent new` refuses bad input with exit 2 before it writes anything (no agent is started)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pm_agent.testing.repo import init_repo

from .conftest import REQUEST


def pm(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("pm-agent", path=str(Path(sys.executable).parent))
    assert exe is not None
    return subprocess.run(
        [exe, *args, "-C", str(repo)], cwd=repo, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return init_repo(tmp_path / "r", files={"README.md": "# r\n"})


def branches(repo: Path) -> list[str]:
    out = subprocess.run(["git", "branch", "--format=%(refname:short)"], cwd=repo, capture_output=True, text=True)
    return out.stdout.split()


def test_request_and_from_file_together_are_refused(repo: Path) -> None:
    (repo / "req.txt").write_text("x", encoding="utf-8")
    done = pm(repo, "new", REQUEST, "--from", str(repo / "req.txt"))
    assert done.returncode == 2
    assert "not both" in done.stdout + done.stderr


def test_an_empty_request_is_refused(repo: Path) -> None:
    done = pm(repo, "new", "   ")
    assert done.returncode == 2
    assert "the request is empty" in done.stdout + done.stderr
    assert not (repo / ".pm-agent").exists()


def test_an_existing_working_branch_is_refused(repo: Path) -> None:
    subprocess.run(["git", "branch", "pm/table/work"], cwd=repo, check=True)
    done = pm(repo, "new", REQUEST, "--slug", "table")
    assert done.returncode == 2
    assert "'pm/table/work' exists already" in done.stdout + done.stderr
    assert not (repo / ".pm-agent").exists()


def test_uncommitted_changes_are_refused(repo: Path) -> None:
    (repo / "notes.txt").write_text("draft", encoding="utf-8")
    done = pm(repo, "new", REQUEST)
    assert done.returncode == 2
    assert "uncommitted changes: notes.txt" in done.stdout + done.stderr
    assert branches(repo) == ["main"]
    assert not (repo / ".pm-agent").exists()
