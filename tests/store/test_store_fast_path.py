"""The plain-sqlite3 fast path (store/_fast*.py) writes and reads exactly what the SQLAlchemy path does.

The same sequence of store calls runs twice, on two files with the same stepping clock: once as the store
runs (fast path on) and once with the fast path switched off (every statement through SQLAlchemy Core).
Both files must then hold the same rows, byte for byte, and every read must return equal records.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pm_agent.errors import NotFoundError, StoreError
from pm_agent.lifecycle import IssueState
from pm_agent.plan.models import Plan, TaskStatus
from pm_agent.store import SessionStatus, SqliteStore, open_store
from pm_agent.testing.clock import TickClock

Dump = dict[str, list[tuple[Any, ...]]]


def _script(store: SqliteStore, plan: Plan) -> list[Any]:
    """Every fast-path call once (and a failing one of each kind); what the reads returned."""
    run = store.create_run(
        plan, baseline_sha="a" * 40, working_branch="pm/demo", shared_context={}, config={}, run_id="run1"
    )
    seen: list[Any] = []
    rec = store.get_task(run.id, "1")
    moved = store.transition(
        run.id,
        "1",
        from_state=rec.state,
        to_state=IssueState.PLANNING_APPROACH.value,
        reason="triage",
        iteration=1,
        workflow_context={"current_state": "planning_approach"},
        status=TaskStatus.IN_PROGRESS,
        retry_count=1,
    )
    seen.append(moved)
    seen.append(
        store.update_task(
            run.id,
            "1",
            event="task.dispatched",
            attempt=1,
            started_at=datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC),
            review_notes={"summary": "ok"},
            decision_log=["a", "b"],
        )
    )
    session = store.create_session(run.id, "1", "developer", 1, "tok-1", "claude", "/tmp/wt")
    store.record_session_event(session.id, 1, "system/init", '{"type":"system","session_id":"s1"}')
    store.record_session_event(session.id, 2, "pm/note", {"what": "a dict payload", "n": 2})
    seen.append(store.record_session_event(session.id, 1, "system/init", "again"))  # already there: False
    store.touch_session(session.id, datetime(2026, 1, 2, 3, 4, 6, tzinfo=UTC))
    seen.append(
        store.update_session(
            session.id,
            status=SessionStatus.SIGNALLED,
            exit_code=0,
            cost_usd=0.25,
            ended_at=datetime(2026, 1, 2, 3, 4, 7, tzinfo=UTC),
            last_lines="done",
        )
    )
    signal = store.record_signal(
        run_id=run.id,
        task_id="1",
        session_id=session.id,
        attempt=1,
        seq=1,
        kind="complete",
        payload={"signal": "complete"},
        accepted=True,
    )
    seen.append(store.mark_signal_consumed(signal.id))
    seen.append(store.mark_signal_consumed(signal.id))  # a no-op the second time
    seen.append(
        store.record_gate_results(run.id, "1", attempt=1, results=[("lint", True, ""), ("tests", False, "1 failed")])
    )
    store.append_event(run.id, "cycle.diff", {"stat": "1 file"})
    store.append_event(run.id, "fix.requested", {"evidence": "x"}, task_id="1")
    seen += [
        store.get_task(run.id, "1"),
        store.task_rows(run.id),
        store.list_sessions(run.id),
        store.list_sessions(run.id, "1"),
        store.get_session(session.id),
        store.signals_for_session(session.id),
        store.sessions_cost(run.id),
        store.gate_results(run.id, "1"),
        store.gate_results(run.id, "1", 1),
        store.events(run.id),
        store.events(run.id, "1", after_id=2, limit=3),
        store.transitions(run.id, "1"),
        store.session_events(session.id),
    ]
    failures: list[Callable[[], object]] = [
        lambda: store.get_task(run.id, "nope"),
        lambda: store.get_task("nope", "1"),
        lambda: store.get_session(999),
        lambda: store.signals_for_session(999),
        lambda: store.append_event(run.id, "x", {}, task_id="nope"),
        lambda: store.touch_session(999),
        lambda: store.update_task(run.id, "1", event="x", title="t", state="completed"),
        lambda: store.transition(
            run.id, "1", from_state="received", to_state="completed", reason="stale", iteration=1, workflow_context={}
        ),
        lambda: store.update_session(session.id, role="tester"),
    ]
    for call in failures:
        with pytest.raises((NotFoundError, StoreError)) as caught:
            call()
        seen.append((type(caught.value).__name__, str(caught.value)))
    return seen


def _dump(path: Path) -> Dump:
    import sqlite3

    con = sqlite3.connect(path)
    try:
        names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {n: con.execute(f'SELECT * FROM "{n}" ORDER BY rowid').fetchall() for n in names if n != "migrations"}
    finally:
        con.close()


def test_fast_path_matches_sqlalchemy(tmp_path: Path, make_plan: Callable[..., Plan]) -> None:
    fast_db, slow_db = tmp_path / "fast" / "state.db", tmp_path / "slow" / "state.db"
    with open_store(fast_db, clock=TickClock()) as fast:
        assert fast._fast is not None
        fast_seen = _script(fast, make_plan())
    with open_store(slow_db, clock=TickClock()) as slow:
        slow._fast = None  # every statement through SQLAlchemy Core
        slow_seen = _script(slow, make_plan())
    assert fast_seen == slow_seen
    fast_rows, slow_rows = _dump(fast_db), _dump(slow_db)
    for table in ("events", "transitions", "gate_results", "sessions", "session_events", "signals"):
        assert fast_rows[table], table
    assert fast_rows == slow_rows


def test_fault_point_in_a_fast_transition_leaves_nothing(
    faulty_store: tuple[SqliteStore, Callable[[str | None], None]], run_id: str, dump: Callable[[], Dump]
) -> None:
    store, arm = faulty_store
    assert store._fast is not None
    before = dump()
    for point in ("transition.task_updated", "transition.recorded"):
        arm(point)
        with pytest.raises(RuntimeError, match=point):
            store.transition(
                run_id,
                "1",
                from_state="received",
                to_state="planning_approach",
                reason="r",
                iteration=0,
                workflow_context={},
            )
        assert dump() == before
    arm(None)
    moved = store.transition(
        run_id, "1", from_state="received", to_state="planning_approach", reason="r", iteration=0, workflow_context={}
    )
    assert moved.state is IssueState.PLANNING_APPROACH
