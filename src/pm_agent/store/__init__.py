"""The durable state store: runs, tasks, transitions, agent sessions, signals, gates, escalations.

`open_store(path)` opens (creating and migrating) the SQLite file, by default
`<repo>/.pm-agent/state.db`; `Store` is the protocol the rest of pm-agent codes against.

Guarantees:
- every public write is one transaction (BEGIN IMMEDIATE on SQLite) and writes its row in the
  append-only `events` table in that same transaction; if anything in it raises, nothing is left;
- `transition` is a compare-and-set on the task's lifecycle state;
- signals, session lines and commits are idempotent on their natural keys, so replay after a crash
  never duplicates them;
- unknown run, task, session, signal, risk or escalation ids raise NotFoundError naming the id;
  refused changes raise StoreError; records come back as frozen pydantic models.
- several processes (pm-agent, one MCP signal server per agent session) may use one file at once.

The exports load on first use (`pm_agent._lazy`): importing `pm_agent.store.records` or the plain-sqlite3
modules does not import SQLAlchemy.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from pm_agent._lazy import lazy_exports

if TYPE_CHECKING:
    from pm_agent.plan.models import Plan, Task, TaskStatus
    from pm_agent.store.database import FaultHook
    from pm_agent.store.planedit import Cancel
    from pm_agent.store.records import (
        INITIAL_STATE,
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
        SessionStatus,
        Severity,
        SignalRecord,
        TaskRecord,
        TaskRow,
        TaskRowChanges,
        TaskRowValues,
        TransitionRecord,
    )
    from pm_agent.store.sqlite import SqliteStore, default_store_path, open_store

__all__ = [
    "INITIAL_STATE",
    "Cancel",
    "CommitRecord",
    "EscalationRecord",
    "EscalationStatus",
    "EventRecord",
    "FaultHook",
    "GateResultRecord",
    "HistoryEntry",
    "ReportRecord",
    "RiskRecord",
    "RiskStatus",
    "RunRecord",
    "RunStatus",
    "SessionEventRecord",
    "SessionRecord",
    "SessionStatus",
    "Severity",
    "SignalRecord",
    "SqliteStore",
    "Store",
    "TaskRecord",
    "TaskRow",
    "TaskRowChanges",
    "TaskRowValues",
    "TransitionRecord",
    "default_store_path",
    "open_store",
]


class Store(Protocol):
    """What pm-agent needs from its state store. Writes are atomic with their event row."""

    def close(self) -> None:
        """Release connections."""

    def now(self) -> datetime:
        """The store's clock (timezone-aware UTC); every timestamp it writes comes from here."""

    def schema_version(self) -> int:
        """How many migrations the database has."""

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
        """Insert a run (status running, current_sha = baseline_sha) and all plan tasks (pending,
        state `received`, plan_order = index in plan.tasks, contract = Task.model_dump) with a
        `run.created` event, in one transaction. `run_id` defaults to a short random id."""

    def add_tasks(self, run_id: str, new: Sequence[Task], *, reason: str) -> None:
        """Append tasks (state received) after the run's existing ones, with a `run.tasks_added` event."""

    def get_run(self, run_id: str) -> RunRecord:
        """The run; NotFoundError if unknown."""

    def list_runs(self) -> list[RunRecord]:
        """All runs, newest first."""

    def latest_run(self) -> RunRecord | None:
        """The newest run, or None."""

    def set_run_status(self, run_id: str, status: RunStatus) -> RunRecord:
        """Set the run status (`run.status` event, with the previous status)."""

    def update_run(self, run_id: str, *, event: str = "run.updated", **fields: Any) -> RunRecord:
        """Change run fields: plan_doc, design_doc, current_sha, working_branch, shared_context,
        config, status, checkpoint_tags. Unknown fields or bad values: StoreError."""

    # -- tasks
    def get_task(self, run_id: str, task_id: str) -> TaskRecord:
        """The task; NotFoundError naming the unknown run or task."""

    def list_tasks(self, run_id: str) -> list[TaskRecord]:
        """Tasks of a run in plan order."""

    def task_rows(self, run_id: str) -> list[TaskRow]:
        """Every task's moving fields (state, status, commit, counters, context) in plan order; no contracts."""

    def task_row_values(self, run_id: str) -> list[TaskRowValues]:
        """`task_rows` as the table holds them (plain tuples, see `TaskRowValues`): the store watch's read."""

    def task_row_changes(self, run_id: str, since: int | None, also: Collection[str] = ()) -> TaskRowChanges:
        """The rows changed since the journal's `since` (every row when None) and those of `also` (`TaskRowChanges`)."""

    def task_ids(self, run_id: str) -> list[str]:
        """The run's task ids in plan order."""

    def update_task(self, run_id: str, task_id: str, *, event: str, **fields: Any) -> TaskRecord:
        """Change task fields (not `state`: see transition) and write `event` with the new values."""

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
        events: Sequence[tuple[str, Mapping[str, Any]]] = (),
        consumed: int | None = None,
        **fields: Any,
    ) -> TaskRecord:
        """Compare-and-set the lifecycle state: if the stored state is not `from_state`, StoreError
        and nothing written; else update the task, add the transitions row (next seq) and a
        `task.transition` event. `events` (kind, payload) of the task and the signal `consumed`
        (`mark_signal_consumed`) are written first, in the same transaction: all of it or none."""

    def transitions(self, run_id: str, task_id: str) -> list[TransitionRecord]:
        """A task's transitions by seq."""

    # -- events and history
    def append_event(self, run_id: str, kind: str, payload: Mapping[str, Any], *, task_id: str | None = None) -> int:
        """Append a free-form event (e.g. "dispatch.prompt"); returns its id."""

    def events(
        self,
        run_id: str,
        task_id: str | None = None,
        after_id: int = 0,
        limit: int | None = None,
        *,
        kind: str | None = None,
    ) -> list[EventRecord]:
        """Events with id > after_id (of one `kind`, if given), oldest first (the feed for reports and the web)."""

    def task_history(self, run_id: str, task_id: str) -> list[HistoryEntry]:
        """Transitions, sessions, signals, gate results and other events of a task, in time order."""

    def events_of_kind(self, run_id: str, kinds: Sequence[str]) -> list[EventRecord]:
        """A run's events of these kinds, oldest first."""

    # -- plan edits
    def apply_plan_edit(
        self,
        run_id: str,
        *,
        added: Sequence[Task],
        updated: Sequence[Task],
        cancelled: Sequence[Cancel],
        reason: str,
        event: str,
        payload: Mapping[str, Any],
    ) -> list[TaskRecord]:
        """One plan edit in one transaction: `added` appended (a `run.tasks_added` event with `reason`),
        `updated` take their new contract (`task.contract_replaced`), `cancelled` move as given (status
        failed), then `event` with `payload`. Returns the cancelled tasks as stored."""

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
        """Record an agent session (status starting) with a `session.created` event."""

    def session_by_token(self, token: str) -> SessionRecord | None:
        """The session holding `token`, or None."""

    def get_session(self, session_id: int) -> SessionRecord:
        """The session; NotFoundError if unknown."""

    def list_sessions(self, run_id: str, task_id: str | None = None) -> list[SessionRecord]:
        """Sessions of a run or task, oldest first."""

    def sessions_cost(self, run_id: str) -> float:
        """The summed cost of every agent session of the run."""

    def update_session(self, session_id: int, **fields: Any) -> SessionRecord:
        """Change agent_session_id, status, pid, exit_code, workdir, last_output_at, ended_at,
        cost_usd, input_tokens, output_tokens or last_lines (`session.updated` event)."""

    def touch_session(self, session_id: int, at: datetime | None = None) -> None:
        """Set last_output_at only (no event): the heartbeat stuck detection reads."""

    def record_session_event(self, session_id: int, seq: int, kind: str, payload: Any) -> bool:
        """Store one line an agent printed; idempotent on (session_id, seq): False if already there."""

    def record_session_events(
        self, session_id: int, lines: Sequence[tuple[int, str, Any]], touched_at: datetime | None = None
    ) -> int:
        """Store lines an agent printed, (seq, kind, payload) each, in one transaction, skipping a seq already
        there; with `touched_at`, last_output_at too. The number stored."""

    def session_events(self, session_id: int, after_seq: int = 0) -> list[SessionEventRecord]:
        """Lines a session printed, by seq."""

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
        """Store a signal (accepted or refused) with a `signal.recorded` event. The same
        (session_id, seq) again returns the stored record and writes nothing."""

    def signals_for_session(self, session_id: int) -> list[SignalRecord]:
        """Signals a session sent, by seq."""

    def unconsumed_signals(self, run_id: str) -> list[SignalRecord]:
        """Accepted signals not yet acted on, oldest first."""

    def mark_signal_consumed(self, signal_id: int) -> SignalRecord:
        """Mark a signal acted on (`signal.consumed` event); no-op if it already was."""

    # -- gates
    def record_gate_result(
        self, run_id: str, task_id: str, *, attempt: int, gate: str, passed: bool, evidence: str
    ) -> GateResultRecord:
        """Store a gate verdict with its evidence (`gate.recorded` event)."""

    def record_gate_results(
        self,
        run_id: str,
        task_id: str,
        *,
        attempt: int,
        results: Sequence[tuple[str, bool, str]],
        events: Sequence[tuple[str, dict[str, Any]]] = (),
    ) -> list[GateResultRecord]:
        """Store a gate run's verdicts, (gate, passed, evidence) each, then `events` (kind, payload) of the
        task, in one transaction."""

    def gate_results(self, run_id: str, task_id: str, attempt: int | None = None) -> list[GateResultRecord]:
        """Gate verdicts of a task, of one attempt or all."""

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
        """Open an escalation (task_id None: about the run) with an `escalation.opened` event."""

    def answer_escalation(self, escalation_id: int, answer: str) -> EscalationRecord:
        """Record the answer; NotFoundError if unknown, StoreError if not open."""

    def mark_escalation_applied(self, escalation_id: int) -> EscalationRecord:
        """answered -> applied once the engine acted on it; StoreError if not answered."""

    def get_escalation(self, escalation_id: int) -> EscalationRecord:
        """The escalation; NotFoundError if unknown."""

    def list_escalations(
        self, run_id: str | None = None, status: EscalationStatus | None = None
    ) -> list[EscalationRecord]:
        """Escalations, oldest first, filtered by run and/or status."""

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
        """Add an open risk; the id defaults to the next free `R<n>` of the run."""

    def update_risk_status(self, run_id: str, risk_id: str, status: RiskStatus) -> RiskRecord:
        """Set open / mitigated / accepted."""

    def list_risks(self, run_id: str, status: RiskStatus | None = None) -> list[RiskRecord]:
        """Risks of a run in the order added."""

    # -- commits and reports
    def record_commit(self, run_id: str, task_id: str, *, sha: str, branch: str, message: str) -> CommitRecord:
        """Record a task's commit and set task.commit_sha and run.current_sha, in one transaction.
        Idempotent on (run, task) for the same sha; another sha is a StoreError."""

    def commits(self, run_id: str) -> list[CommitRecord]:
        """Commits of a run in order."""

    def add_report(self, run_id: str, kind: str, text: str) -> ReportRecord:
        """Store a rendered report (progress, handoff, ...)."""

    def list_reports(self, run_id: str, kind: str | None = None) -> list[ReportRecord]:
        """Reports of a run, oldest first."""


def _conforms(store: SqliteStore) -> Store:
    return store  # mypy checks here that SqliteStore implements Store


__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "pm_agent.store.database": "FaultHook",
        "pm_agent.store.planedit": "Cancel",
        "pm_agent.store.records": (
            "INITIAL_STATE CommitRecord EscalationRecord EscalationStatus EventRecord GateResultRecord "
            "HistoryEntry ReportRecord RiskRecord RiskStatus RunRecord RunStatus SessionEventRecord "
            "SessionRecord SessionStatus Severity SignalRecord TaskRecord TaskRow TaskRowChanges TaskRowValues "
            "TransitionRecord"
        ),
        "pm_agent.store.sqlite": "SqliteStore default_store_path open_store",
    },
)
