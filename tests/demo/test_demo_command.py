"""`pm-agent demo`, the README's main command, end to end as a user runs it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pm_agent.reports.manifest import parse_manifest

pytestmark = [pytest.mark.claude, pytest.mark.slow]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def test_demo_runs_the_whole_loop(tmp_path: Path) -> None:
    exe = shutil.which("pm-agent", path=str(Path(sys.executable).parent))
    assert exe is not None
    dest = tmp_path / "demo"
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("ANTHROPIC_")}
    proc = subprocess.run(
        [exe, "demo", "--dest", str(dest)], capture_output=True, text=True, timeout=600, env=env, check=False
    )
    out = proc.stdout
    assert proc.returncode == 0, out[-4000:] + proc.stderr[-2000:]
    # What the run shows, live.
    assert "dispatch task-9 (low); slots: task-7, task-8, task-9" in out  # parallel LOW tasks
    assert "3-tests-run=FAIL" in out  # a gate failure ...
    assert "fixing_issues" in out  # ... sent to the fixer
    assert "ESCALATION #1" in out
    assert "[scripted user] answers escalation #1" in out
    assert "PROGRESS — textstats" in out
    assert "final.check" in out
    assert "RELEASE SUMMARY — textstats" in out
    assert f"The demo repository is at {dest}" in out
    # What it leaves behind.
    branch = "pm/textstats/work"
    subjects = git(dest, "log", "--format=%s", branch).splitlines()
    assert len(subjects) == 11  # skeleton + 9 tasks + the release manifest
    assert subjects[0] == "chore(release): release manifest for textstats"
    assert git(dest, "tag", "--list", "pm/*").split() == [
        "pm/textstats/checkpoint-task-1",
        "pm/textstats/checkpoint-task-5",
    ]
    manifest = parse_manifest(git(dest, "show", f"{branch}:docs/releases/textstats-release.yaml"))
    assert [t.task_id for t in manifest.tasks] == [f"task-{i}" for i in range(1, 10)]
    for task in manifest.tasks:
        assert git(dest, "cat-file", "-t", task.commit_sha).strip() == "commit"
    assert git(dest, "rev-parse", "main") == git(dest, "rev-list", "--max-parents=0", "main")
