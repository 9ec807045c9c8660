"""The plain-sqlite3 statements (store/_fast*.py) and the SQLAlchemy ones read and write the same rows.

The store writes tasks, sessions, events and gate results through plain sqlite3 and runs, signals, escalations
through SQLAlchemy Core, on one file: whatever one side writes, the other must read back as equal records.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from pm_agent.errors import NotFoundError, StoreError
from pm_agent.lifecycle import IssueState
from pm_agent.plan.models import Plan, TaskStatus
from pm_agent.store import (
    EventRecord,
    GateResultRecord,
    SessionRecord,
    SessionStatus,
    SqliteStore,
    open_store,
    schema,
)
from pm_agent.store import runs as rn
from pm_agent.store import sessions as ss
from pm_agent.store._sql import fetch_all
from pm_agent.store.database import read_txn
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
        store.task_ids(run.id),
        store.list_sessions(run.id),
        store.list_sessions(run.id, "1"),
        store.get_session(session.id),
        store.signals_for_session(session.id),
        store.sessions_cost(run.id),
        store.gate_results(run.id, "1"),
        store.gate_results(run.id, "1", 1),
        store.events(run.id),
        store.events(run.id, "1", after_id=2, limit=3),
        store.events(run.id, "1", kind="fix.requested"),
        store.events(run.id, kind="cycle.diff"),
        store.events(run.id, "1", kind="no.such.kind"),
        store.transitions(run.id, "1"),
        store.session_events(session.id),
    ]
    failures: list[Callable[[], object]] = [
        lambda: store.get_task(run.id, "nope"),
        lambda: store.get_task("nope", "1"),
        lambda: store.task_ids("nope"),
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


def test_sqlite3_and_sqlalchemy_read_the_same_records(tmp_path: Path, make_plan: Callable[..., Plan]) -> None:
    with open_store(tmp_path / "state.db", clock=TickClock()) as store:
        seen = _script(store, make_plan())
        failures = [kind for kind, _ in seen[-9:]]
        assert failures == ["NotFoundError"] * 6 + ["StoreError"] * 3
        with read_txn(store.engine) as conn:
            assert rn.list_tasks(conn, "run1")[0] == store.get_task("run1", "1")
            assert fetch_all(conn, select(schema.events).order_by(schema.events.c.id), EventRecord) == store.events(
                "run1"
            )
            assert fetch_all(conn, select(schema.sessions), SessionRecord) == store.list_sessions("run1")
            [session] = store.list_sessions("run1")
            stored_signals = ss.signals_for_task(conn, "run1", "1")
            assert stored_signals
            assert stored_signals == store.signals_for_session(session.id)
            gates = fetch_all(conn, select(schema.gate_results).order_by(schema.gate_results.c.id), GateResultRecord)
            assert len(gates) == 2
            assert gates == store.gate_results("run1", "1")
            every = store.events("run1")
            for kind in {e.kind for e in every} | {"no.such.kind"}:
                assert store.events("run1", kind=kind) == [e for e in every if e.kind == kind]
                assert store.events("run1", "1", kind=kind) == [e for e in every if e.kind == kind and e.task_id == "1"]
            kinds = [entry.kind for entry in store.task_history("run1", "1")]
            assert {"gate", "session.started", "fix.requested"} <= set(kinds)


def test_fault_point_in_a_fast_transition_leaves_nothing(
    faulty_store: tuple[SqliteStore, Callable[[str | None], None]], run_id: str, dump: Callable[[], Dump]
) -> None:
    store, arm = faulty_store
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


def test_task_rows_and_ids_read_every_stored_value(store: SqliteStore, run_id: str, db_path: Path) -> None:
    """Each stored state and status comes back as its enum member; a value no enum has still raises."""
    assert store.task_ids(run_id) == ["1", "2", "3"]
    con = sqlite3.connect(db_path)
    try:
        for state, status in zip(list(IssueState), list(TaskStatus) * len(IssueState), strict=False):
            with con:
                con.execute("UPDATE tasks SET state = ?, status = ? WHERE task_id = '2'", (state.value, status.value))
            row = store.task_rows(run_id)[1]
            assert (row.task_id, row.state, row.status) == ("2", state, status)
            assert row.state is state
            assert row.status is status
        with con:
            con.execute("UPDATE tasks SET state = 'bogus' WHERE task_id = '3'")
        with pytest.raises(ValueError, match="bogus"):
            store.task_rows(run_id)
        with con:
            con.execute("UPDATE tasks SET state = 'received', status = 'nope' WHERE task_id = '3'")
        with pytest.raises(ValueError, match="nope"):
            store.task_rows(run_id)
    finally:
        con.close()
    with pytest.raises(NotFoundError):
        store.task_rows("nope")
