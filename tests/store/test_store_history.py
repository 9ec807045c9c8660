"""A task's history in time order, and reading the event log incrementally."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pm_agent.plan.models import TaskStatus
from pm_agent.reports.status import render_task_log
from pm_agent.store import SessionStatus, SqliteStore


def test_task_history_is_chronological(store: SqliteStore, run_id: str) -> None:
    store.transition(
        run_id, "1", from_state="received", to_state="implementing", reason="dispatch", iteration=0,
        workflow_context={}, status=TaskStatus.IN_PROGRESS, attempt=1,
    )  # fmt: skip
    session = store.create_session(run_id, "1", "developer", 1, "tok", "claude", "/w")
    store.update_session(session.id, status=SessionStatus.RUNNING, pid=99)
    store.append_event(run_id, "dispatch.prompt", {"chars": 1200}, task_id="1")
    store.record_signal(
        run_id=run_id, task_id="1", session_id=session.id, attempt=1, seq=1, kind="complete",
        payload={"summary": "done"}, accepted=True,
    )  # fmt: skip
    store.record_gate_result(run_id, "1", attempt=1, gate="3-tests-run", passed=True, evidence="12 passed")
    store.transition(
        run_id, "1", from_state="implementing", to_state="running_tests", reason="complete", iteration=1,
        workflow_context={},
    )  # fmt: skip
    store.update_task(run_id, "2", event="task.ready", status=TaskStatus.READY)  # another task: not shown

    history = store.task_history(run_id, "1")
    assert [(h.source, h.kind) for h in history] == [
        ("transition", "transition"),
        ("session", "session.started"),
        ("event", "session.updated"),
        ("event", "dispatch.prompt"),
        ("signal", "signal.complete"),
        ("gate", "gate"),
        ("transition", "transition"),
    ]
    assert [h.at for h in history] == sorted(h.at for h in history)
    assert history[0].summary == "received -> implementing: dispatch"
    assert "token" not in history[1].data

    log = render_task_log(history)
    lines = log.splitlines()
    assert len(lines) == len(history)
    assert "received -> implementing: dispatch" in lines[0]
    assert "gate 3-tests-run PASS (attempt 1)" in lines[5]


def test_history_of_an_untouched_task(store: SqliteStore, run_id: str) -> None:
    assert store.task_history(run_id, "3") == []
    assert render_task_log([]) == "(no history)"


def test_events_after_id(store: SqliteStore, make_plan: Callable[..., Any]) -> None:
    store.create_run(
        make_plan(), baseline_sha="a", working_branch="b", shared_context={}, config={}, run_id="r"
    )
    ids = [store.append_event("r", "tick", {"i": i}) for i in range(5)]
    assert [e.payload for e in store.events("r", after_id=ids[2])] == [{"i": 3}, {"i": 4}]
    assert [e.id for e in store.events("r", after_id=0, limit=2)] == [ids[0] - 1, ids[0]]  # run.created first
