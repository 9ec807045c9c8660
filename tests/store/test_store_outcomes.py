"""Gate results, escalations, risks, commits and reports."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pm_agent.errors import NotFoundError, StoreError
from pm_agent.store import EscalationStatus, RiskStatus, Severity, SqliteStore

Arm = Callable[[str | None], None]


def test_gate_results_by_attempt(store: SqliteStore, run_id: str) -> None:
    store.record_gate_result(
        run_id, "1", attempt=1, gate="1-plan-alignment", passed=True, evidence="a -> x.py:3"
    )
    store.record_gate_result(run_id, "1", attempt=1, gate="4-lint-typecheck", passed=False, evidence="E501")
    store.record_gate_result(run_id, "1", attempt=2, gate="4-lint-typecheck", passed=True, evidence="clean")
    assert [(g.attempt, g.gate, g.passed) for g in store.gate_results(run_id, "1")] == [
        (1, "1-plan-alignment", True),
        (1, "4-lint-typecheck", False),
        (2, "4-lint-typecheck", True),
    ]
    assert [g.evidence for g in store.gate_results(run_id, "1", attempt=2)] == ["clean"]
    assert store.gate_results(run_id, "2") == []
    assert [e.kind for e in store.events(run_id, task_id="1")] == ["gate.recorded"] * 3


def test_a_gate_runs_verdicts_and_its_events_are_one_write(store: SqliteStore, run_id: str) -> None:
    verdicts = [("3-tests-run", True, "2 passed"), ("scope", False, "x.py is outside the task")]
    observed = {"attempt": 1, "test_counts": {"passed": 2}, "suspicious": []}
    store.record_gate_results(run_id, "1", attempt=1, results=verdicts, events=[("gate.observations", observed)])
    events = store.events(run_id, task_id="1")
    assert [e.kind for e in events] == ["gate.recorded", "gate.recorded", "gate.observations"]
    assert events[-1].payload == observed
    # An event that cannot be stored fails the whole write: the verdicts before it are not kept either.
    with pytest.raises(TypeError):
        store.record_gate_results(run_id, "1", attempt=2, results=verdicts, events=[("gate.observations", {1j})])
    assert store.gate_results(run_id, "1", attempt=2) == []
    assert len(store.events(run_id, task_id="1")) == 3


def test_escalation_lifecycle(store: SqliteStore, run_id: str) -> None:
    session = store.create_session(run_id, "2", "analyst", 1, "tok", "claude", "/w")
    esc = store.open_escalation(
        run_id, "2", source="needs-user-input", problem="Which database?", impact="task 2 and 3 wait",
        options=["SQLite", "PostgreSQL"], recommended="SQLite", session_id=session.id,
    )  # fmt: skip
    assert (esc.status, esc.blocking, esc.answer, esc.answered_at) == (
        EscalationStatus.OPEN,
        True,
        None,
        None,
    )
    assert esc.options == ["SQLite", "PostgreSQL"]
    run_level = store.open_escalation(
        run_id, None, source="final-gate", problem="p", impact="i", options=["a", "b"], recommended="a",
        blocking=False,
    )  # fmt: skip
    assert run_level.task_id is None
    assert [e.id for e in store.list_escalations(run_id, EscalationStatus.OPEN)] == [esc.id, run_level.id]

    answered = store.answer_escalation(esc.id, "SQLite, keep it simple")
    assert (answered.status, answered.answer) == (EscalationStatus.ANSWERED, "SQLite, keep it simple")
    assert answered.answered_at is not None
    assert store.get_escalation(esc.id) == answered
    with pytest.raises(StoreError, match="answered, not open"):
        store.answer_escalation(esc.id, "again")
    with pytest.raises(StoreError, match="open, not answered"):
        store.mark_escalation_applied(run_level.id)
    applied = store.mark_escalation_applied(esc.id)
    assert applied.status is EscalationStatus.APPLIED
    assert [e.id for e in store.list_escalations(status=EscalationStatus.OPEN)] == [run_level.id]
    assert len(store.list_escalations()) == 2
    kinds = [e.kind for e in store.events(run_id) if e.kind.startswith("escalation.")]
    assert kinds == ["escalation.opened", "escalation.opened", "escalation.answered", "escalation.applied"]


def test_answering_an_unknown_escalation(store: SqliteStore, run_id: str) -> None:
    with pytest.raises(NotFoundError, match="escalation 77"):
        store.answer_escalation(77, "yes")


def test_escalation_answer_interrupted_stays_open(
    faulty_store: tuple[SqliteStore, Arm],
    db_path: Path,
    dump: Callable[[], Any],
    make_plan: Callable[..., Any],
) -> None:
    store, arm = faulty_store
    store.create_run(
        make_plan(), baseline_sha="a", working_branch="b", shared_context={}, config={}, run_id="r"
    )
    esc = store.open_escalation(
        "r", "1", source="pm", problem="p", impact="i", options=["a"], recommended="a"
    )
    before = dump()
    arm("escalation.answered")
    with pytest.raises(RuntimeError, match="fault at"):
        store.answer_escalation(esc.id, "a")
    assert dump() == before
    assert store.get_escalation(esc.id).status is EscalationStatus.OPEN


def test_risks(store: SqliteStore, run_id: str) -> None:
    r1 = store.add_risk(
        run_id, description="no rollback for migration", severity=Severity.CRITICAL, source_task="1"
    )
    r2 = store.add_risk(run_id, description="flaky test", severity=Severity.LOW, risk_id="R3")
    r3 = store.add_risk(run_id, description="slow query", severity=Severity.NORMAL)
    assert [r.id for r in (r1, r2, r3)] == ["R1", "R3", "R2"]
    assert store.update_risk_status(run_id, "R1", RiskStatus.MITIGATED).status is RiskStatus.MITIGATED
    assert [r.id for r in store.list_risks(run_id, RiskStatus.OPEN)] == ["R3", "R2"]
    assert len(store.list_risks(run_id)) == 3
    with pytest.raises(StoreError):
        store.add_risk(run_id, description="dup", severity=Severity.LOW, risk_id="R1")


def test_commit_is_recorded_once(
    store: SqliteStore, run_id: str, db_path: Path, dump: Callable[[], Any]
) -> None:
    commit = store.record_commit(
        run_id, "1", sha="c1" * 20, branch="pm/demo", message="feat(x): y\n\nRefs: task-1"
    )
    assert store.get_task(run_id, "1").commit_sha == "c1" * 20
    assert store.get_run(run_id).current_sha == "c1" * 20
    before = dump()
    assert store.record_commit(run_id, "1", sha="c1" * 20, branch="pm/demo", message="again") == commit
    assert dump() == before
    with pytest.raises(StoreError, match="already committed"):
        store.record_commit(run_id, "1", sha="d" * 40, branch="pm/demo", message="other")
    assert store.commits(run_id) == [commit]


def test_commit_interrupted_leaves_nothing(
    faulty_store: tuple[SqliteStore, Arm],
    db_path: Path,
    dump: Callable[[], Any],
    make_plan: Callable[..., Any],
) -> None:
    store, arm = faulty_store
    store.create_run(
        make_plan(), baseline_sha="a", working_branch="b", shared_context={}, config={}, run_id="r"
    )
    before = dump()
    arm("commit.inserted")
    with pytest.raises(RuntimeError, match="fault at"):
        store.record_commit("r", "1", sha="s", branch="b", message="m")
    assert dump() == before
    assert store.get_run("r").current_sha == "a"


def test_reports(store: SqliteStore, run_id: str) -> None:
    store.add_report(run_id, "progress", "PROGRESS — demo\nCompleted: 0/3")
    store.add_report(run_id, "handoff", "all done")
    assert [r.kind for r in store.list_reports(run_id)] == ["progress", "handoff"]
    assert [r.text for r in store.list_reports(run_id, "handoff")] == ["all done"]
