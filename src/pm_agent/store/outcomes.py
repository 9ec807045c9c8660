"""Escalations, risks, commits and reports: the PM's verdicts and hand-offs (gate results: `_fast_writes`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import Connection, select

from pm_agent.errors import NotFoundError, StoreError
from pm_agent.redaction import redact
from pm_agent.store._sql import fetch_all, fetch_one, fetch_required, inserted_id
from pm_agent.store.database import fault_point
from pm_agent.store.events import append_event_txn
from pm_agent.store.records import (
    CommitRecord,
    EscalationRecord,
    EscalationStatus,
    ReportRecord,
    RiskRecord,
    RiskStatus,
    Severity,
)
from pm_agent.store.runs import get_task, require_run
from pm_agent.store.schema import commits, escalations, reports, risks
from pm_agent.store.sessions import get_session

# ---- escalations -------------------------------------------------------------------------------


def get_escalation(conn: Connection, escalation_id: int) -> EscalationRecord:
    """The escalation; NotFoundError if unknown."""
    stmt = select(escalations).where(escalations.c.id == escalation_id)
    found = fetch_one(conn, stmt, EscalationRecord)
    if found is None:
        raise NotFoundError(f"unknown escalation {escalation_id!r}")
    return found


def open_escalation_txn(
    conn: Connection,
    run_id: str,
    task_id: str | None,
    *,
    source: str,
    problem: str,
    impact: str,
    options: Sequence[str],
    recommended: str,
    blocking: bool,
    session_id: int | None,
    now: datetime,
) -> EscalationRecord:
    """Open an escalation (seed 001's format) with an `escalation.opened` event."""
    if task_id is None:
        require_run(conn, run_id)
    else:
        get_task(conn, run_id, task_id)
    if session_id is not None:
        get_session(conn, session_id)
    result = conn.execute(
        escalations.insert().values(
            run_id=run_id,
            task_id=task_id,
            source=source,
            problem=redact(problem),
            impact=redact(impact),
            options=[redact(o) for o in options],
            recommended=redact(recommended),
            blocking=blocking,
            status=EscalationStatus.OPEN.value,
            answer=None,
            session_id=session_id,
            created_at=now,
            answered_at=None,
        )
    )
    escalation_id = inserted_id(result)
    payload = {"escalation_id": escalation_id, "source": source, "problem": problem, "blocking": blocking}
    append_event_txn(conn, run_id, task_id, "escalation.opened", payload, now=now)
    return get_escalation(conn, escalation_id)


def _move_escalation(
    conn: Connection,
    escalation_id: int,
    *,
    expect: EscalationStatus,
    to: EscalationStatus,
    answer: str | None,
    now: datetime,
) -> EscalationRecord:
    current = get_escalation(conn, escalation_id)
    if current.status != expect:
        raise StoreError(f"escalation {escalation_id} is {current.status.value}, not {expect.value}")
    values: dict[str, object] = {"status": to.value}
    if to is EscalationStatus.ANSWERED:
        values.update(answer=answer, answered_at=now)
    conn.execute(
        escalations.update()
        .where(escalations.c.id == escalation_id, escalations.c.status == expect.value)
        .values(**values)
    )
    fault_point(conn, f"escalation.{to.value}")
    payload = (
        {"escalation_id": escalation_id, "answer": answer} if answer is not None else {"escalation_id": escalation_id}
    )
    append_event_txn(conn, current.run_id, current.task_id, f"escalation.{to.value}", payload, now=now)
    return get_escalation(conn, escalation_id)


def answer_escalation_txn(conn: Connection, escalation_id: int, answer: str, *, now: datetime) -> EscalationRecord:
    """Record a human's answer; StoreError unless the escalation is open."""
    return _move_escalation(
        conn,
        escalation_id,
        expect=EscalationStatus.OPEN,
        to=EscalationStatus.ANSWERED,
        answer=answer,
        now=now,
    )


def mark_escalation_applied_txn(conn: Connection, escalation_id: int, *, now: datetime) -> EscalationRecord:
    """Record that the engine acted on the answer; StoreError unless the escalation is answered."""
    return _move_escalation(
        conn,
        escalation_id,
        expect=EscalationStatus.ANSWERED,
        to=EscalationStatus.APPLIED,
        answer=None,
        now=now,
    )


def list_escalations(
    conn: Connection, run_id: str | None = None, status: EscalationStatus | None = None
) -> list[EscalationRecord]:
    """Escalations, oldest first, of one run and/or in one status."""
    stmt = select(escalations).order_by(escalations.c.id)
    if run_id is not None:
        require_run(conn, run_id)
        stmt = stmt.where(escalations.c.run_id == run_id)
    if status is not None:
        stmt = stmt.where(escalations.c.status == EscalationStatus(status).value)
    return fetch_all(conn, stmt, EscalationRecord)


# ---- risks -------------------------------------------------------------------------------------


def _get_risk(conn: Connection, run_id: str, risk_id: str) -> RiskRecord:
    found = fetch_one(conn, select(risks).where(risks.c.run_id == run_id, risks.c.id == risk_id), RiskRecord)
    if found is None:
        require_run(conn, run_id)
        raise NotFoundError(f"unknown risk {risk_id!r} in run {run_id!r}")
    return found


def add_risk_txn(
    conn: Connection,
    run_id: str,
    *,
    description: str,
    severity: Severity,
    source_task: str | None,
    risk_id: str | None,
    now: datetime,
) -> RiskRecord:
    """Add an open risk (id `R<n>` unless given) with a `risk.added` event."""
    require_run(conn, run_id)
    if risk_id is None:
        taken = set(conn.scalars(select(risks.c.id).where(risks.c.run_id == run_id)))
        risk_id = next(f"R{n}" for n in range(1, len(taken) + 2) if f"R{n}" not in taken)
    severity = Severity(severity)
    conn.execute(
        risks.insert().values(
            run_id=run_id,
            id=risk_id,
            description=description,
            severity=severity.value,
            status=RiskStatus.OPEN.value,
            source_task=source_task,
            created_at=now,
            updated_at=now,
        )
    )
    payload = {"risk_id": risk_id, "severity": severity.value, "description": description}
    append_event_txn(conn, run_id, source_task, "risk.added", payload, now=now)
    return _get_risk(conn, run_id, risk_id)


def update_risk_status_txn(
    conn: Connection, run_id: str, risk_id: str, status: RiskStatus, *, now: datetime
) -> RiskRecord:
    """Set a risk's status with a `risk.status` event."""
    current = _get_risk(conn, run_id, risk_id)
    status = RiskStatus(status)
    conn.execute(
        risks.update()
        .where(risks.c.run_id == run_id, risks.c.id == risk_id)
        .values(status=status.value, updated_at=now)
    )
    payload = {"risk_id": risk_id, "from": current.status.value, "to": status.value}
    append_event_txn(conn, run_id, current.source_task, "risk.status", payload, now=now)
    return _get_risk(conn, run_id, risk_id)


def list_risks(conn: Connection, run_id: str, status: RiskStatus | None = None) -> list[RiskRecord]:
    """Risks of a run, in the order they were added."""
    require_run(conn, run_id)
    stmt = select(risks).where(risks.c.run_id == run_id).order_by(risks.c.created_at, risks.c.id)
    if status is not None:
        stmt = stmt.where(risks.c.status == RiskStatus(status).value)
    return fetch_all(conn, stmt, RiskRecord)


# ---- commits and reports -----------------------------------------------------------------------


def list_commits(conn: Connection, run_id: str) -> list[CommitRecord]:
    """Commits of a run, in the order they were made."""
    require_run(conn, run_id)
    return fetch_all(conn, select(commits).where(commits.c.run_id == run_id).order_by(commits.c.id), CommitRecord)


def add_report_txn(conn: Connection, run_id: str, kind: str, text: str, *, now: datetime) -> ReportRecord:
    """Store a rendered report with a `report.added` event."""
    require_run(conn, run_id)
    result = conn.execute(reports.insert().values(run_id=run_id, kind=kind, text=redact(text), created_at=now))
    report_id = inserted_id(result)
    append_event_txn(conn, run_id, None, "report.added", {"report_id": report_id, "kind": kind}, now=now)
    return fetch_required(conn, select(reports).where(reports.c.id == report_id), ReportRecord, "report")


def list_reports(conn: Connection, run_id: str, kind: str | None = None) -> list[ReportRecord]:
    """Reports of a run, oldest first."""
    require_run(conn, run_id)
    stmt = select(reports).where(reports.c.run_id == run_id).order_by(reports.c.id)
    if kind is not None:
        stmt = stmt.where(reports.c.kind == kind)
    return fetch_all(conn, stmt, ReportRecord)
