"""Runs and tasks: atomic creation, updates with events, compare-and-set transitions, failure atomicity."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pm_agent.errors import NotFoundError, StoreError
from pm_agent.plan.models import Task, TaskStatus, Tier
from pm_agent.store import INITIAL_STATE, RunStatus, SqliteStore

Arm = Callable[[str | None], None]


def _create(
    store: SqliteStore,
    make_plan: Callable[..., Any],
    plan_ids: tuple[str, ...] = ("1", "2", "3"),
    run_id: str = "run1",
) -> str:
    plan = make_plan(*plan_ids)
    return store.create_run(
        plan,
        baseline_sha="a" * 40,
        working_branch="pm/demo",
        shared_context={"k": "v"},
        config={},
        run_id=run_id,
    ).id


def test_create_run_writes_run_tasks_and_event(store: SqliteStore, make_plan: Callable[..., Any]) -> None:
    plan = make_plan("7", "3", "5")
    run = store.create_run(
        plan,
        baseline_sha="a" * 40,
        working_branch="pm/demo",
        shared_context={"project_name": "demo"},
        config={"x": 1},
    )
    assert len(run.id) == 12
    assert run.status is RunStatus.RUNNING
    assert (run.plan_id, run.plan_doc, run.design_doc) == (
        "demo",
        "docs/plans/plan.md",
        "docs/plans/design.md",
    )
    assert run.current_sha == run.baseline_sha == "a" * 40
    assert (run.shared_context, run.config, run.checkpoint_tags) == ({"project_name": "demo"}, {"x": 1}, [])
    assert run.created_at.tzinfo is not None

    tasks = store.list_tasks(run.id)
    assert [(t.task_id, t.plan_order) for t in tasks] == [("7", 0), ("3", 1), ("5", 2)]
    for task, source in zip(tasks, plan.tasks, strict=True):
        assert task.status is TaskStatus.PENDING
        assert task.state == INITIAL_STATE
        assert (task.attempt, task.retry_count, task.iteration_count) == (0, 0, 0)
        assert task.tier == source.tier
        assert task.decision_log == source.decision_log
        assert task.task() == source
        assert isinstance(task.task(), Task)

    events = store.events(run.id)
    assert [(e.kind, e.task_id) for e in events] == [("run.created", None)]
    assert events[0].payload["tasks"] == ["7", "3", "5"]


def test_create_run_is_atomic_when_a_constraint_breaks_half_way(
    store: SqliteStore, db_path: Path, dump: Callable[[], Any], make_plan: Callable[..., Any]
) -> None:
    before = dump()
    with pytest.raises(StoreError, match="UNIQUE"):
        _create(store, make_plan, ("1", "2", "1"))  # the third task row collides with the first
    assert dump() == before
    assert store.list_runs() == []


@pytest.mark.parametrize("point", ["create_run.run_inserted", "create_run.tasks_inserted"])
def test_create_run_interrupted_leaves_nothing(
    faulty_store: tuple[SqliteStore, Arm],
    db_path: Path,
    point: str,
    dump: Callable[[], Any],
    make_plan: Callable[..., Any],
) -> None:
    store, arm = faulty_store
    _create(store, make_plan, run_id="earlier")
    before = dump()
    arm(point)
    with pytest.raises(RuntimeError, match="fault at"):
        _create(store, make_plan, run_id="run2")
    assert dump() == before
    arm(None)
    assert _create(store, make_plan, run_id="run2") == "run2"


def test_list_and_latest_runs(store: SqliteStore, make_plan: Callable[..., Any]) -> None:
    assert store.latest_run() is None
    _create(store, make_plan, run_id="a")
    _create(store, make_plan, run_id="b")
    assert [r.id for r in store.list_runs()] == ["b", "a"]
    latest = store.latest_run()
    assert latest is not None
    assert latest.id == "b"


def test_set_run_status_and_update_run_write_events(store: SqliteStore, run_id: str) -> None:
    run = store.set_run_status(run_id, RunStatus.STOPPED)
    assert run.status is RunStatus.STOPPED
    run = store.update_run(run_id, current_sha="c" * 40, checkpoint_tags=["pm/demo/checkpoint-1"])
    assert (run.current_sha, run.checkpoint_tags) == ("c" * 40, ["pm/demo/checkpoint-1"])
    assert run.updated_at > run.created_at
    events = store.events(run_id)
    assert [e.kind for e in events] == ["run.created", "run.status", "run.updated"]
    assert events[1].payload == {"status": "stopped", "from_status": "running"}
    assert events[2].payload == {"current_sha": "c" * 40, "checkpoint_tags": ["pm/demo/checkpoint-1"]}


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"baseline_sha": "x"}, "cannot update run field"),
        ({"nonsense": 1}, "cannot update run field"),
        ({"status": "exploded"}, "invalid run update"),
        ({"checkpoint_tags": "not a list"}, "invalid run update"),
    ],
)
def test_update_run_refuses_bad_fields(
    store: SqliteStore,
    run_id: str,
    db_path: Path,
    fields: dict[str, Any],
    message: str,
    dump: Callable[[], Any],
) -> None:
    before = dump()
    with pytest.raises(StoreError, match=message):
        store.update_run(run_id, **fields)
    assert dump() == before


def test_update_task_writes_fields_and_event(store: SqliteStore, run_id: str) -> None:
    task = store.update_task(
        run_id,
        "2",
        event="task.dispatched",
        status=TaskStatus.IN_PROGRESS,
        attempt=1,
        artifacts=["src/a.py"],
        review_notes={"summary": "s", "risks": [], "rollback": "revert"},
        started_at=store.now(),
    )
    assert (task.status, task.attempt, task.artifacts) == (TaskStatus.IN_PROGRESS, 1, ["src/a.py"])
    assert task.review_notes == {"summary": "s", "risks": [], "rollback": "revert"}
    assert store.get_task(run_id, "2") == task
    event = store.events(run_id, task_id="2")[-1]
    assert event.kind == "task.dispatched"
    assert event.payload["status"] == "in_progress"
    assert event.payload["attempt"] == 1


def test_update_task_tier_is_validated(store: SqliteStore, run_id: str) -> None:
    assert store.update_task(run_id, "3", event="task.retiered", tier="critical").tier is Tier.CRITICAL
    with pytest.raises(StoreError, match="invalid task update"):
        store.update_task(run_id, "3", event="task.retiered", tier="urgent")
    with pytest.raises(StoreError, match="invalid task update"):
        store.update_task(run_id, "3", event="task.retry", retry_count=-1)


def test_update_task_refuses_state(
    store: SqliteStore, run_id: str, db_path: Path, dump: Callable[[], Any]
) -> None:
    before = dump()
    with pytest.raises(StoreError, match="transition"):
        store.update_task(run_id, "1", event="x", state="implementing")
    assert dump() == before


def _go(store: SqliteStore, run_id: str, frm: str, to: str, **kw: Any) -> Any:
    return store.transition(
        run_id, "1", from_state=frm, to_state=to, reason=f"{frm}->{to}", iteration=1,
        workflow_context={"history": [to]}, **kw,
    )  # fmt: skip


def test_transition_compare_and_set(store: SqliteStore, run_id: str) -> None:
    task = _go(store, run_id, "received", "analyzing_requirements", status=TaskStatus.IN_PROGRESS, attempt=1)
    assert (task.state, task.status, task.attempt) == ("analyzing_requirements", TaskStatus.IN_PROGRESS, 1)
    assert task.workflow_context == {"history": ["analyzing_requirements"]}
    task = _go(store, run_id, "analyzing_requirements", "implementing")
    assert task.status is TaskStatus.IN_PROGRESS  # unchanged when not given
    rows = store.transitions(run_id, "1")
    assert [(t.seq, t.from_state, t.to_state) for t in rows] == [
        (1, "received", "analyzing_requirements"),
        (2, "analyzing_requirements", "implementing"),
    ]
    events = [e for e in store.events(run_id, task_id="1") if e.kind == "task.transition"]
    assert [e.payload["seq"] for e in events] == [1, 2]
    assert events[0].payload["status"] == "in_progress"
    assert store.transitions(run_id, "2") == []
    assert [(t.reason, t.iteration, t.created_at.tzinfo is not None) for t in rows] == [
        ("received->analyzing_requirements", 1, True),
        ("analyzing_requirements->implementing", 1, True),
    ]
    with pytest.raises(NotFoundError, match="unknown task '9'"):
        store.transitions(run_id, "9")
    with pytest.raises(NotFoundError, match="nope"):
        store.transitions("nope", "1")


def test_transition_from_the_wrong_state_writes_nothing(
    store: SqliteStore, run_id: str, db_path: Path, dump: Callable[[], Any]
) -> None:
    _go(store, run_id, "received", "analyzing_requirements")
    before = dump()
    with pytest.raises(StoreError, match="is in state 'analyzing_requirements', not 'received'"):
        _go(store, run_id, "received", "implementing", status=TaskStatus.FAILED)
    assert dump() == before


def test_transition_refuses_bad_fields(
    store: SqliteStore, run_id: str, db_path: Path, dump: Callable[[], Any]
) -> None:
    before = dump()
    with pytest.raises(StoreError):
        _go(store, run_id, "received", "implementing", state="completed")
    with pytest.raises(StoreError):
        _go(store, run_id, "received", "implementing", plan_order=4)
    assert dump() == before


def test_a_transition_writes_its_decisions_events_and_consumed_signal_first_or_nothing(
    store: SqliteStore, run_id: str, dump: Callable[[], Any]
) -> None:
    session = store.create_session(run_id, "1", "developer", 1, "tok", "claude", "/w")
    signal = store.record_signal(run_id=run_id, task_id="1", session_id=session.id, attempt=1, seq=1,
                                 kind="complete", payload={"summary": "done"}, accepted=True)  # fmt: skip
    events = (("fix.note", {"n": 1}), ("fix.note", {"n": 2}))
    before = dump()
    with pytest.raises(StoreError, match="not 'implementing'"):  # the move is refused: nothing of it is written
        _go(store, run_id, "implementing", "running_tests", events=events, consumed=signal.id)
    assert dump() == before
    _go(store, run_id, "received", "analyzing_requirements", events=events, consumed=signal.id)
    kinds = [(e.kind, e.payload.get("n")) for e in store.events(run_id, task_id="1")]
    assert kinds == [("session.created", None), ("signal.recorded", None), ("fix.note", 1), ("fix.note", 2),
                     ("signal.consumed", None), ("task.transition", None)]  # fmt: skip
    assert store.unconsumed_signals(run_id) == []


@pytest.mark.parametrize("point", ["transition.task_updated", "transition.recorded"])
def test_transition_interrupted_leaves_the_database_as_before(
    faulty_store: tuple[SqliteStore, Arm],
    db_path: Path,
    point: str,
    dump: Callable[[], Any],
    make_plan: Callable[..., Any],
) -> None:
    store, arm = faulty_store
    run_id = _create(store, make_plan)
    _go(store, run_id, "received", "analyzing_requirements")
    before = dump()
    arm(point)
    with pytest.raises(RuntimeError, match="fault at"):
        _go(store, run_id, "analyzing_requirements", "implementing", status=TaskStatus.IN_PROGRESS, attempt=2)
    assert dump() == before
    arm(None)
    assert _go(store, run_id, "analyzing_requirements", "implementing").state == "implementing"
    assert [t.seq for t in store.transitions(run_id, "1")] == [1, 2]


UNKNOWN_CALLS: list[tuple[str, Callable[[SqliteStore], object], str]] = [
    ("get_run", lambda s: s.get_run("nope"), "nope"),
    ("list_tasks", lambda s: s.list_tasks("nope"), "nope"),
    ("set_run_status", lambda s: s.set_run_status("nope", RunStatus.FAILED), "nope"),
    ("update_run", lambda s: s.update_run("nope", current_sha="x"), "nope"),
    ("get_task/run", lambda s: s.get_task("nope", "1"), "nope"),
    ("get_task/task", lambda s: s.get_task("run1", "t99"), "t99"),
    ("update_task", lambda s: s.update_task("run1", "t99", event="x", attempt=1), "t99"),
    (
        "transition",
        lambda s: s.transition(
            "run1", "t99", from_state="received", to_state="x", reason="", iteration=0, workflow_context={}
        ),
        "t99",
    ),
    ("transitions", lambda s: s.transitions("run1", "t99"), "t99"),
    ("events", lambda s: s.events("nope"), "nope"),
    ("append_event", lambda s: s.append_event("run1", "k", {}, task_id="t99"), "t99"),
    ("task_history", lambda s: s.task_history("run1", "t99"), "t99"),
    ("create_session", lambda s: s.create_session("run1", "t99", "developer", 1, "t", "claude", "/w"), "t99"),
    ("get_session", lambda s: s.get_session(4242), "4242"),
    ("update_session", lambda s: s.update_session(4242, pid=1), "4242"),
    ("touch_session", lambda s: s.touch_session(4242), "4242"),
    ("record_session_event", lambda s: s.record_session_event(4242, 1, "k", "x"), "4242"),
    ("list_sessions", lambda s: s.list_sessions("nope"), "nope"),
    ("signals_for_session", lambda s: s.signals_for_session(4242), "4242"),
    ("unconsumed_signals", lambda s: s.unconsumed_signals("nope"), "nope"),
    ("mark_signal_consumed", lambda s: s.mark_signal_consumed(4242), "4242"),
    (
        "record_signal",
        lambda s: s.record_signal(
            run_id="nope",
            task_id="1",
            session_id=None,
            attempt=0,
            seq=0,
            kind="complete",
            payload={},
            accepted=False,
            reason="bad token",
        ),
        "nope",
    ),
    (
        "record_gate_result",
        lambda s: s.record_gate_result(
            "run1", "t99", attempt=1, gate="1-plan-alignment", passed=True, evidence=""
        ),
        "t99",
    ),
    ("gate_results", lambda s: s.gate_results("run1", "t99"), "t99"),
    (
        "open_escalation",
        lambda s: s.open_escalation(
            "run1", "t99", source="pm", problem="p", impact="i", options=[], recommended="r"
        ),
        "t99",
    ),
    ("answer_escalation", lambda s: s.answer_escalation(4242, "yes"), "4242"),
    ("get_escalation", lambda s: s.get_escalation(4242), "4242"),
    ("list_escalations", lambda s: s.list_escalations("nope"), "nope"),
    ("add_risk", lambda s: s.add_risk("nope", description="d", severity="low"), "nope"),  # type: ignore[arg-type]
    ("update_risk_status", lambda s: s.update_risk_status("run1", "R9", "accepted"), "R9"),  # type: ignore[arg-type]
    ("list_risks", lambda s: s.list_risks("nope"), "nope"),
    ("record_commit", lambda s: s.record_commit("run1", "t99", sha="s", branch="b", message="m"), "t99"),
    ("commits", lambda s: s.commits("nope"), "nope"),
    ("add_report", lambda s: s.add_report("nope", "progress", "text"), "nope"),
    ("list_reports", lambda s: s.list_reports("nope"), "nope"),
]


@pytest.mark.parametrize(
    ("call", "needle"), [(c, n) for _, c, n in UNKNOWN_CALLS], ids=[i for i, _, _ in UNKNOWN_CALLS]
)
def test_unknown_ids_raise_not_found(
    store: SqliteStore,
    run_id: str,
    db_path: Path,
    call: Callable[[SqliteStore], object],
    needle: str,
    dump: Callable[[], Any],
) -> None:
    before = dump()
    with pytest.raises(NotFoundError, match=needle):
        call(store)
    assert dump() == before
