"""SIGTERM on `pm-agent run` while the real Claude Code CLI is mid-session, then `pm-agent resume`.

The stop ends the agent's process group and records the session as ended by pm-agent; the resume
continues that same Claude Code session (`--resume`) and finishes the plan with one commit per task.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable

import pytest

from pm_agent.store import default_store_path, open_store

from .conftest import Target
from .test_crash_resume import PLAN, assert_finished_once, pm, prepare, scripts

pytestmark = [pytest.mark.claude, pytest.mark.slow]


def _agent_running(t: Target) -> bool:
    store = open_store(default_store_path(t.repo))
    try:
        run = store.latest_run()
        return run is not None and any(
            s.status.value == "running" and s.agent_session_id for s in store.list_sessions(run.id)
        )
    finally:
        store.close()


def test_sigterm_mid_session_stops_cleanly_and_resume_continues_the_session(target: Callable[[str], Target]) -> None:
    t = target(PLAN)
    t.team.scripts = scripts(slow=20)
    prepare(t)
    first = pm(t.repo, "run", str(t.plan))
    deadline = time.monotonic() + 120
    while not (default_store_path(t.repo).exists() and _agent_running(t)):
        assert first.poll() is None, first.communicate()[0]
        assert time.monotonic() < deadline, "no agent session started"
        time.sleep(0.5)
    time.sleep(2)  # the agent is inside its 20 s Bash call
    started = time.monotonic()
    first.send_signal(signal.SIGTERM)
    out, _ = first.communicate(timeout=60)
    assert first.returncode == 143, out
    assert time.monotonic() - started < 30, "the stop did not wait for the agent's 20 s command"
    assert "SIGTERM: stopping the run" in out
    assert f"Continue with `pm-agent resume -C {t.repo}`." in out.strip().splitlines()[-1]
    store = open_store(default_store_path(t.repo))
    try:
        run = store.latest_run()
        assert run is not None
        assert run.status.value == "stopped"
        live = [s for s in store.list_sessions(run.id) if s.status.value in ("starting", "running")]
        assert live == [], "every session's end was recorded"
    finally:
        store.close()
    second = pm(t.repo, "resume")
    out2, _ = second.communicate(timeout=300)
    assert second.returncode == 0, out2
    assert_finished_once(t)
    store = open_store(default_store_path(t.repo))
    try:
        run = store.latest_run()
        assert run is not None
        sessions = [s for s in store.list_sessions(run.id) if s.task_id == "1" and s.role == "developer"]
        assert sessions[1].resumed_from == sessions[0].id, "the stopped session was not resumed"
        assert sessions[1].agent_session_id == sessions[0].agent_session_id
    finally:
        store.close()
