"""`SqliteStore`'s gate results, escalations, risks, commits and reports (`store.outcomes`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pm_agent.store import _fast_queries as fq
from pm_agent.store import _fast_writes as fw
from pm_agent.store import outcomes as oc
from pm_agent.store._sqlite_base import SqliteStoreBase
from pm_agent.store.database import read_txn, write_txn
from pm_agent.store.records import (
    CommitRecord,
    EscalationRecord,
    EscalationStatus,
    GateResultRecord,
    ReportRecord,
    RiskRecord,
    RiskStatus,
    Severity,
)


class OutcomesMixin(SqliteStoreBase):
    """Gate results, escalations, risks, commits and reports, one transaction per write."""

    # -- gates
    def record_gate_result(
        self, run_id: str, task_id: str, *, attempt: int, gate: str, passed: bool, evidence: str
    ) -> GateResultRecord:
        [record] = self.record_gate_results(run_id, task_id, attempt=attempt, results=[(gate, passed, evidence)])
        return record

    def record_gate_results(
        self,
        run_id: str,
        task_id: str,
        *,
        attempt: int,
        results: Sequence[tuple[str, bool, str]],
        events: Sequence[tuple[str, dict[str, Any]]] = (),
    ) -> list[GateResultRecord]:
        with self._fast.write() as fast:
            return fw.record_gate_results(
                fast, run_id, task_id, attempt=attempt, results=results, now=self.now(), events=events
            )

    def gate_results(self, run_id: str, task_id: str, attempt: int | None = None) -> list[GateResultRecord]:
        with self._fast.read() as fast:
            return fq.gate_results_of(fast, run_id, task_id, attempt)

    # -- escalations
    def open_escalation(
        self,
        run_id: str,
        task_id: str | None,
        *,
        source: str,
        problem: str,
        impact: str,
        options: Sequence[str],
        recommended: str,
        blocking: bool = True,
        session_id: int | None = None,
    ) -> EscalationRecord:
        with write_txn(self._writer) as conn:
            return oc.open_escalation_txn(
                conn,
                run_id,
                task_id,
                source=source,
                problem=problem,
                impact=impact,
                options=options,
                recommended=recommended,
                blocking=blocking,
                session_id=session_id,
                now=self.now(),
            )

    def answer_escalation(self, escalation_id: int, answer: str) -> EscalationRecord:
        with write_txn(self._writer) as conn:
            return oc.answer_escalation_txn(conn, escalation_id, answer, now=self.now())

    def mark_escalation_applied(self, escalation_id: int) -> EscalationRecord:
        with write_txn(self._writer) as conn:
            return oc.mark_escalation_applied_txn(conn, escalation_id, now=self.now())

    def get_escalation(self, escalation_id: int) -> EscalationRecord:
        with read_txn(self.engine) as conn:
            return oc.get_escalation(conn, escalation_id)

    def list_escalations(
        self, run_id: str | None = None, status: EscalationStatus | None = None
    ) -> list[EscalationRecord]:
        with read_txn(self.engine) as conn:
            return oc.list_escalations(conn, run_id, status)

    # -- risks
    def add_risk(
        self,
        run_id: str,
        *,
        description: str,
        severity: Severity,
        source_task: str | None = None,
        risk_id: str | None = None,
    ) -> RiskRecord:
        with write_txn(self._writer) as conn:
            return oc.add_risk_txn(
                conn,
                run_id,
                description=description,
                severity=severity,
                source_task=source_task,
                risk_id=risk_id,
                now=self.now(),
            )

    def update_risk_status(self, run_id: str, risk_id: str, status: RiskStatus) -> RiskRecord:
        with write_txn(self._writer) as conn:
            return oc.update_risk_status_txn(conn, run_id, risk_id, status, now=self.now())

    def list_risks(self, run_id: str, status: RiskStatus | None = None) -> list[RiskRecord]:
        with read_txn(self.engine) as conn:
            return oc.list_risks(conn, run_id, status)

    # -- commits and reports
    def record_commit(self, run_id: str, task_id: str, *, sha: str, branch: str, message: str) -> CommitRecord:
        with self._fast.write() as fast:
            return fw.record_commit(
                fast, run_id, task_id, sha=sha, branch=branch, message=message, now=self.now(), fault=self._fault
            )

    def commits(self, run_id: str) -> list[CommitRecord]:
        with read_txn(self.engine) as conn:
            return oc.list_commits(conn, run_id)

    def add_report(self, run_id: str, kind: str, text: str) -> ReportRecord:
        with write_txn(self._writer) as conn:
            return oc.add_report_txn(conn, run_id, kind, text, now=self.now())

    def list_reports(self, run_id: str, kind: str | None = None) -> list[ReportRecord]:
        with read_txn(self.engine) as conn:
            return oc.list_reports(conn, run_id, kind)
