"""kill -9 of pm-agent at each durable boundary, then `pm-agent resume`: nothing twice, nothing lost.

DESIGN.md: random kills miss the millisecond window between `git commit` and the store update, so
each boundary is a named fault point hit deterministically (PM_AGENT_FAULT makes pm-agent SIGKILL
itself there), plus one kill while an agent is mid-session, plus a test proving that the
commit-idempotency check is what prevents the duplicate commit.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pm_agent.config import render_config
from pm_agent.engine.final_review import CONTAINER as FINAL_REVIEW
from pm_agent.engine.launch import resume_run
from pm_agent.engine.loop import PmLoop
from pm_agent.human.channels import PrintOnlyChannel
from pm_agent.store import default_store_path, open_store
from pm_agent.testing.team import Step, bash, write
from pm_agent.vcs import Git

from .calc_plan import ADD, ADDITION, REVIEW, TEST_ADD, complete, plan
from .conftest import Target, git

pytestmark = [pytest.mark.claude, pytest.mark.slow]

PLAN = plan(
    ADDITION,
    """\
### Task 2: Negation

**Depends on:** Task 1

**Files:**
- Create: `src/calc/neg.py`
- Test: `tests/test_neg.py`

**Acceptance criteria:**
- neg(a) returns minus a
""",
)

NEG = '"""neg."""\n\n\ndef neg(a: int) -> int:\n    return -a\n'


def dev(path: str, text: str, test_path: str, test_text: str, criterion: str, slow: float = 0.0) -> list[Step]:
    steps: list[Step] = [write(path, text), write(test_path, test_text), bash("python -m pytest -q")]
    if slow:
        steps.insert(0, bash(f"sleep {slow}"))
    done = complete({path: text}, [(criterion, path, "return")], summary="ok", filesCreated=[path, test_path])
    return [*steps, done]


def scripts(slow: float = 0.0) -> dict[tuple[str, str], list[Step]]:
    return {
        ("task-1", "developer"): dev(
            "src/calc/add.py", ADD, "tests/test_add.py", TEST_ADD, "add(a, b) returns the sum", slow
        ),
        ("task-2", "developer"): dev(
            "src/calc/neg.py",
            NEG,
            "tests/test_neg.py",
            "from calc.neg import neg\n\n\ndef test_neg() -> None:\n    assert neg(2) == -2\n",
            "neg(a) returns minus a",
        ),
        ("*", "reviewer"): REVIEW,
    }


def pm(repo: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    exe = shutil.which("pm-agent", path=str(Path(sys.executable).parent))
    assert exe is not None
    return subprocess.Popen(
        [exe, *args, "--no-input", "-C", str(repo)],
        cwd=repo,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def prepare(t: Target) -> None:
    (t.repo / "pm-agent.yaml").write_text(render_config(t.config()), encoding="utf-8")
    git(t.repo, "add", "pm-agent.yaml")
    git(t.repo, "commit", "-q", "-m", "pm-agent config")


def refs(t: Target, branch: str) -> list[str]:
    bodies = git(t.repo, "log", "--format=%B%x00", branch).split("\0")
    return [line for body in bodies for line in body.splitlines() if line.startswith("Refs: ")]


def assert_finished_once(t: Target) -> None:
    store = open_store(default_store_path(t.repo))
    try:
        run = store.latest_run()
        assert run is not None
        tasks = [x for x in store.list_tasks(run.id) if x.task_id != FINAL_REVIEW]  # its sessions' record
        assert [(x.task_id, x.state) for x in tasks] == [("1", "completed"), ("2", "completed")]
        assert sorted(refs(t, run.working_branch)) == ["Refs: release-calc", "Refs: task-1", "Refs: task-2"]
        assert [c.task_id for c in store.commits(run.id)] == ["1", "2"]
        live = [s for s in store.list_sessions(run.id) if s.status.value in ("starting", "running")]
        assert live == [], "a session is left in a working state with no process"
        signals = store.unconsumed_signals(run.id)
        assert signals == [], "a stored signal was never acted on"
        for task in tasks:
            assert task.commit_sha is not None
            assert Git(t.repo).is_ancestor(task.commit_sha, run.working_branch)
    finally:
        store.close()


@pytest.mark.parametrize(
    "fault", ["after-signal", "after-gates", "after-task-commit", "after-integrate", "after-commit-recorded"]
)
def test_kill_at_each_boundary_then_resume(target: Callable[[str], Target], fault: str) -> None:
    t = target(PLAN)
    t.team.scripts = scripts()
    prepare(t)
    first = pm(t.repo, "run", str(t.plan), env={"PM_AGENT_FAULT": fault})
    out, _ = first.communicate(timeout=300)
    assert first.returncode == -signal.SIGKILL, out
    second = pm(t.repo, "resume")
    out2, _ = second.communicate(timeout=300)
    assert second.returncode == 0, out2
    assert "RELEASE SUMMARY" in out2
    assert_finished_once(t)


def test_kill_while_an_agent_works_resumes_its_session(target: Callable[[str], Target]) -> None:
    t = target(PLAN)
    t.team.scripts = scripts(slow=20)
    prepare(t)
    first = pm(t.repo, "run", str(t.plan))
    db = default_store_path(t.repo)
    deadline = time.monotonic() + 120
    running = False
    while time.monotonic() < deadline and not running:
        time.sleep(0.5)
        if any(r.path.endswith("/messages") or "messages" in r.path for r in t.server.requests):
            store = open_store(db)
            try:
                run = store.latest_run()
                running = run is not None and any(
                    s.status.value == "running" and s.agent_session_id for s in store.list_sessions(run.id)
                )
            finally:
                store.close()
    assert running, "no agent session started"
    time.sleep(2)  # the agent is inside its 20 s Bash call
    first.send_signal(signal.SIGKILL)
    first.communicate(timeout=30)
    second = pm(t.repo, "resume")
    out2, _ = second.communicate(timeout=300)
    assert second.returncode == 0, out2
    assert_finished_once(t)
    store = open_store(db)
    try:
        run = store.latest_run()
        assert run is not None
        sessions = [s for s in store.list_sessions(run.id) if s.task_id == "1" and s.role == "developer"]
        assert sessions[0].status.value == "killed"
        assert sessions[1].resumed_from == sessions[0].id, "the interrupted session was not resumed"
        assert sessions[1].agent_session_id == sessions[0].agent_session_id
    finally:
        store.close()


def test_the_trailer_check_is_what_makes_resume_safe(
    target: Callable[[str], Target], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Crash right after integrating task 1. Resuming without the trailer lookup fails on task 1
    (pm-agent does not see its own commit and refuses to commit on top of a commit the gates did not
    check); with the lookup the same resume finishes with one commit."""
    t = target(PLAN)
    t.team.scripts = scripts()
    rc = t.start()

    class Crash(RuntimeError):
        pass

    def crash(name: str) -> None:
        if name == "after-integrate":
            raise Crash(name)

    with monkeypatch.context() as patch:
        patch.setattr("pm_agent.engine.delivery.fault_point", crash)
        with pytest.raises(Crash):
            t.drive(rc)
    rc.store.close()
    branch = rc.run.working_branch
    assert refs(t, branch) == ["Refs: task-1"]
    store = open_store(default_store_path(t.repo))
    assert store.get_task(rc.run_id, "1").state == "creating_pr"
    store.close()

    with monkeypatch.context() as patch:
        patch.setattr(Git, "find_commit_by_trailer", lambda self, ref, branch="HEAD", key="Refs", since=None: None)
        blind = resume_run(t.repo, rc.run_id, listener=t.listener, channel=PrintOnlyChannel())
        outcome = asyncio.run(PmLoop(blind).drive(poll_s=0.2))
        blind.store.close()
    assert "1" in outcome.errors, outcome
    assert "checked-tree: HEAD of" in outcome.errors["1"]

    again = resume_run(t.repo, rc.run_id, listener=t.listener, channel=PrintOnlyChannel())
    outcome = asyncio.run(PmLoop(again).drive(poll_s=0.2))
    again.store.close()
    assert outcome.completed == ["1", "2"], outcome
    assert sorted(refs(t, branch)) == ["Refs: task-1", "Refs: task-2"]
