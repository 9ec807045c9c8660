"""SqliteStore: the Store protocol on a SQLite file, one transaction per public write.

Every public write opens one BEGIN IMMEDIATE transaction around its `*_txn` function, so the change
and its event row commit together or not at all. Reads run in one snapshot each. The queries are
SQLAlchemy Core without SQLite-specific SQL; only `database.sqlite_engine` knows it is SQLite.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from sqlalchemy import Engine

from pm_agent.plan.models import Plan, Task, TaskStatus
from pm_agent.store import events as ev
from pm_agent.store import history as hist
from pm_agent.store import outcomes as oc
from pm_agent.store import runs as rn
from pm_agent.store import sessions as ss
from pm_agent.store.database import FaultHook, read_txn, sqlite_engine, write_txn, writer
from pm_agent.store.migrations import applied_migrations, migrate
from pm_agent.store.records import (
    CommitRecord,
    EscalationRecord,
    EscalationStatus,
    EventRecord,
    GateResultRecord,
    HistoryEntry,
    ReportRecord,
    RiskRecord,
    RiskStatus,
    RunRecord,
    RunStatus,
    SessionEventRecord,
    SessionRecord,
    Severity,
    SignalRecord,
    TaskRecord,
    TransitionRecord,
)

Clock = Callable[[], datetime]
STATE_DIR = ".pm-agent"
STATE_FILE = "state.db"


def utc_now() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


def default_store_path(repo: Path) -> Path:
    """Where a repository's state lives: `<repo>/.pm-agent/state.db`."""
    return repo / STATE_DIR / STATE_FILE


def open_store(
    path: Path | str, *, clock: Clock | None = None, fault: FaultHook | None = None
) -> SqliteStore:
    """Open (creating and migrating as needed) the SQLite store at `path`."""
    engine = sqlite_engine(Path(path))
    store = SqliteStore(engine, clock=clock, fault=fault)
    try:
        migrate(engine, now=store.now())
    except BaseException:
        engine.dispose()
        raise
    return store


class SqliteStore:
    """The durable state store (see the Store protocol in `pm_agent.store` for the method docs)."""

    def __init__(self, engine: Engine, *, clock: Clock | None = None, fault: FaultHook | None = None) -> None:
        self.engine = engine
        self._writer = writer(engine, fault=fault)
        self._clock = clock or utc_now

    # -- lifecycle
    def now(self) -> datetime:
        return self._clock()

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def applied_migrations(self) -> list[str]:
        return applied_migrations(self.engine)

    def schema_version(self) -> int:
        return len(self.applied_migrations())

    # -- runs
    def create_run(
        self,
        plan: Plan,
        *,
        baseline_sha: str,
        working_branch: str,
        shared_context: Mapping[str, Any],
        config: Mapping[str, Any],
        run_id: str | None = None,
    ) -> RunRecord:
        with write_txn(self._writer) as conn:
            return rn.create_run_txn(
                conn,
                plan,
                baseline_sha=baseline_sha,
                working_branch=working_branch,
                shared_context=shared_context,
                config=config,
                now=self.now(),
                run_id=run_id,
            )

    def add_tasks(self, run_id: str, new: Sequence[Task], *, reason: str) -> None:
        with write_txn(self._writer) as conn:
            rn.add_tasks_txn(conn, run_id, new, reason=reason, now=self.now())

    def get_run(self, run_id: str) -> RunRecord:
        with read_txn(self.engine) as conn:
            return rn.get_run(conn, run_id)

    def list_runs(self) -> list[RunRecord]:
        with read_txn(self.engine) as conn:
            return rn.list_runs(conn)

    def latest_run(self) -> RunRecord | None:
        with read_txn(self.engine) as conn:
            return rn.latest_run(conn)

    def set_run_status(self, run_id: str, status: RunStatus) -> RunRecord:
        return self.update_run(run_id, event="run.status", status=status)

    def update_run(self, run_id: str, *, event: str = "run.updated", **fields: Any) -> RunRecord:
        with write_txn(self._writer) as conn:
            return rn.update_run_txn(conn, run_id, fields, event=event, now=self.now())

    # -- tasks
    def get_task(self, run_id: str, task_id: str) -> TaskRecord:
        with read_txn(self.engine) as conn:
            return rn.get_task(conn, run_id, task_id)

    def list_tasks(self, run_id: str) -> list[TaskRecord]:
        with read_txn(self.engine) as conn:
            return rn.list_tasks(conn, run_id)

    def update_task(self, run_id: str, task_id: str, *, event: str, **fields: Any) -> TaskRecord:
        with write_txn(self._writer) as conn:
            return rn.update_task_txn(conn, run_id, task_id, fields, event=event, now=self.now())

    def transition(
        self,
        run_id: str,
        task_id: str,
        *,
        from_state: str,
        to_state: str,
        reason: str,
        iteration: int,
        workflow_context: Mapping[str, Any],
        status: TaskStatus | None = None,
        **fields: Any,
    ) -> TaskRecord:
        with write_txn(self._writer) as conn:
            return rn.transition_txn(
                conn,
                run_id,
                task_id,
                from_state=from_state,
                to_state=to_state,
                reason=reason,
                iteration=iteration,
                workflow_context=workflow_context,
                status=status,
                fields=fields,
                now=self.now(),
            )

    def transitions(self, run_id: str, task_id: str) -> list[TransitionRecord]:
        with read_txn(self.engine) as conn:
            return rn.list_transitions(conn, run_id, task_id)

    # -- events
    def append_event(
        self, run_id: str, kind: str, payload: Mapping[str, Any], *, task_id: str | None = None
    ) -> int:
        with write_txn(self._writer) as conn:
            if task_id is None:
                rn.get_run(conn, run_id)
            else:
                rn.get_task(conn, run_id, task_id)
            return ev.append_event_txn(conn, run_id, task_id, kind, dict(payload), now=self.now())

    def events(
        self, run_id: str, task_id: str | None = None, after_id: int = 0, limit: int | None = None
    ) -> list[EventRecord]:
        with read_txn(self.engine) as conn:
            rn.get_run(conn, run_id)
            return ev.list_events(conn, run_id, task_id, after_id, limit)

    def task_history(self, run_id: str, task_id: str) -> list[HistoryEntry]:
        with read_txn(self.engine) as conn:
            return hist.task_history(conn, run_id, task_id)

    # -- sessions
    def create_session(
        self,
        run_id: str,
        task_id: str,
        role: str,
        attempt: int,
        token: str,
        runner: str,
        workdir: str,
        resumed_from: int | None = None,
    ) -> SessionRecord:
        with write_txn(self._writer) as conn:
            return ss.create_session_txn(
                conn,
                run_id=run_id,
                task_id=task_id,
                role=role,
                attempt=attempt,
                token=token,
                runner=runner,
                workdir=workdir,
                resumed_from=resumed_from,
                now=self.now(),
            )

    def session_by_token(self, token: str) -> SessionRecord | None:
        with read_txn(self.engine) as conn:
            return ss.session_by_token(conn, token)

    def get_session(self, session_id: int) -> SessionRecord:
        with read_txn(self.engine) as conn:
            return ss.get_session(conn, session_id)

    def list_sessions(self, run_id: str, task_id: str | None = None) -> list[SessionRecord]:
        with read_txn(self.engine) as conn:
            return ss.list_sessions(conn, run_id, task_id)

    def update_session(self, session_id: int, **fields: Any) -> SessionRecord:
        with write_txn(self._writer) as conn:
            return ss.update_session_txn(conn, session_id, fields, now=self.now())

    def touch_session(self, session_id: int, at: datetime | None = None) -> None:
        with write_txn(self._writer) as conn:
            ss.touch_session_txn(conn, session_id, at or self.now())

    def record_session_event(self, session_id: int, seq: int, kind: str, payload: Any) -> bool:
        with write_txn(self._writer) as conn:
            return ss.record_session_event_txn(conn, session_id, seq, kind, payload, now=self.now())

    def session_events(self, session_id: int, after_seq: int = 0) -> list[SessionEventRecord]:
        with read_txn(self.engine) as conn:
            ss.get_session(conn, session_id)
            return ss.session_events_of(conn, session_id, after_seq)

    # -- signals
    def record_signal(
        self,
        *,
        run_id: str,
        task_id: str,
        session_id: int | None,
        attempt: int,
        seq: int,
        kind: str,
        payload: Mapping[str, Any],
        accepted: bool,
        reason: str = "",
    ) -> SignalRecord:
        with write_txn(self._writer) as conn:
            record, _ = ss.record_signal_txn(
                conn,
                run_id=run_id,
                task_id=task_id,
                session_id=session_id,
                attempt=attempt,
                seq=seq,
                kind=kind,
                payload=payload,
                accepted=accepted,
                reason=reason,
                now=self.now(),
            )
            return record

    def signals_for_session(self, session_id: int) -> list[SignalRecord]:
        with read_txn(self.engine) as conn:
            ss.get_session(conn, session_id)
            return ss.signals_for_session(conn, session_id)

    def unconsumed_signals(self, run_id: str) -> list[SignalRecord]:
        with read_txn(self.engine) as conn:
            return ss.unconsumed_signals(conn, run_id)

    def mark_signal_consumed(self, signal_id: int) -> SignalRecord:
        with write_txn(self._writer) as conn:
            return ss.mark_signal_consumed_txn(conn, signal_id, now=self.now())

    # -- gates
    def record_gate_result(
        self, run_id: str, task_id: str, *, attempt: int, gate: str, passed: bool, evidence: str
    ) -> GateResultRecord:
        with write_txn(self._writer) as conn:
            return oc.record_gate_result_txn(
                conn,
                run_id,
                task_id,
                attempt=attempt,
                gate=gate,
                passed=passed,
                evidence=evidence,
                now=self.now(),
            )

    def gate_results(self, run_id: str, task_id: str, attempt: int | None = None) -> list[GateResultRecord]:
        with read_txn(self.engine) as conn:
            return oc.list_gate_results(conn, run_id, task_id, attempt)

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
    def record_commit(
        self, run_id: str, task_id: str, *, sha: str, branch: str, message: str
    ) -> CommitRecord:
        with write_txn(self._writer) as conn:
            record, _ = oc.record_commit_txn(
                conn, run_id, task_id, sha=sha, branch=branch, message=message, now=self.now()
            )
            return record

    def commits(self, run_id: str) -> list[CommitRecord]:
        with read_txn(self.engine) as conn:
            return oc.list_commits(conn, run_id)

    def add_report(self, run_id: str, kind: str, text: str) -> ReportRecord:
        with write_txn(self._writer) as conn:
            return oc.add_report_txn(conn, run_id, kind, text, now=self.now())

    def list_reports(self, run_id: str, kind: str | None = None) -> list[ReportRecord]:
        with read_txn(self.engine) as conn:
            return oc.list_reports(conn, run_id, kind)
