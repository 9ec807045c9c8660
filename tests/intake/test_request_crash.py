"""`kill -9` of `pm-agent new` while the planner works, then `pm-agent resume`: the intake continues with
the planner's same conversation (nothing redone before it), the approval is answered with `pm-agent
answer` from another shell, and the next `pm-agent resume` runs the plan to its release."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pm_agent.intake import IntakePaths
from pm_agent.store import EscalationStatus, SessionRecord, default_store_path, open_store
from pm_agent.testing.team import Step, bash, write

from .conftest import PLAN_GOOD, REQUEST, REQUIREMENTS, Target, delivery_scripts, done, paths_for_new

pytestmark = [pytest.mark.claude, pytest.mark.slow]


def scripts(paths: IntakePaths) -> dict[tuple[str, str], list[Step]]:
    return {
        ("task-requirements", "analyst"): [write(paths.design_rel, REQUIREMENTS), done("S1 written")],
        ("task-plan", "planner"): [
            bash("true"),
            bash("sleep 8"),
            write(paths.plan_rel, PLAN_GOOD),
            done("one task"),
        ],
        **delivery_scripts(),
    }


def exe() -> str:
    found = shutil.which("pm-agent", path=str(Path(sys.executable).parent))
    assert found is not None
    return found


def pm(repo: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """One pm-agent command to its end, never prompting."""
    return subprocess.run(
        [exe(), *args, "-C", str(repo)],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def planner_sessions(repo: Path) -> list[SessionRecord]:
    path = default_store_path(repo)
    if not path.exists():
        return []
    store = open_store(path)
    try:
        run = store.latest_run()
        return [] if run is None else list(store.list_sessions(run.id, "plan"))
    finally:
        store.close()


def waiting_on(repo: Path) -> str:
    """The open escalations' problems: why `pm-agent new` stopped to wait for the human."""
    store = open_store(default_store_path(repo))
    try:
        run = store.latest_run()
        escs = [] if run is None else store.list_escalations(run.id)
        return "; ".join(f"{e.source}: {e.problem}" for e in escs if e.status is EscalationStatus.OPEN)
    finally:
        store.close()


def test_kill_during_planning_then_resume(calc: Callable[[], Target]) -> None:
    t = calc()
    paths = paths_for_new("table")
    t.team.scripts.update(scripts(paths))
    proc = subprocess.Popen(
        [exe(), "new", REQUEST, "--slug", "table", "--no-input", "-C", str(t.repo)],
        cwd=t.repo,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 150
    # Wait until the planner is inside its second step: planning is under way, and its first exchange is in the
    # conversation Claude Code keeps on disk (it writes it asynchronously: a kill before the first write leaves no
    # conversation to resume, a case this test is not about).
    while ("task-plan", "planner", 1) not in t.team.log:
        assert proc.poll() is None, f"pm-agent new ended before the planner started: {waiting_on(t.repo)}"
        assert time.monotonic() < deadline, "the planner never started"
        time.sleep(0.2)
    first = planner_sessions(t.repo)
    assert [s.status.value for s in first] == ["running"]
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    if first[0].pid is not None:  # the agent process goes down with the machine, too
        with contextlib.suppress(ProcessLookupError):
            os.kill(first[0].pid, signal.SIGKILL)

    waiting = pm(t.repo, "resume")
    assert waiting.returncode == 3, waiting.stdout + waiting.stderr
    sessions = planner_sessions(t.repo)
    assert [s.status.value for s in sessions] == ["crashed", "signalled"]
    assert sessions[1].resumed_from == sessions[0].id  # the same conversation, continued
    analyst_steps = [step for task, role, step in t.team.log if role == "analyst"]
    assert analyst_steps == [0, 1]  # the requirements were not written twice
    assert "pm-agent answer" in waiting.stdout

    store = open_store(default_store_path(t.repo))
    try:
        intake = store.latest_run()
        assert intake is not None
        approval = [e for e in store.list_escalations(intake.id) if e.source == "intake-approval"]
        assert [e.status.value for e in approval] == ["open"]
        events = [e.kind for e in store.events(intake.id)]
        assert "intake.interrupted" in events
    finally:
        store.close()
    answered = pm(t.repo, "answer", str(approval[0].id), "approve", timeout=60)
    assert answered.returncode == 0, answered.stdout

    released = pm(t.repo, "resume")
    assert released.returncode == 0, released.stdout + released.stderr
    branch = f"pm/{paths.plan_id}/work"

    def log(fmt: str) -> str:
        return subprocess.run(
            ["git", "log", f"--format={fmt}", f"main..{branch}"], cwd=t.repo, capture_output=True, text=True, check=True
        ).stdout

    assert log("%s").splitlines()[-2:] == [f"Plan: {REQUEST}", f"Requirements: {REQUEST}"]
    assert "Refs: task-1" in log("%B").splitlines()  # the plan's task, delivered after the two documents
