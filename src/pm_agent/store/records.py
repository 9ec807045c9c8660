"""What the store hands back: frozen pydantic models, one per table, never database rows.

Field names are the column names, so `Record.model_validate(row._mapping)` reads a row and
`record.model_dump(mode="json")` is what `pm-agent status --json` prints.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from pm_agent.lifecycle.states import IssueState
from pm_agent.plan.enums import TaskStatus, Tier

if TYPE_CHECKING:
    from pm_agent.plan.models import Task

INITIAL_STATE = IssueState.RECEIVED  # lifecycle state of every new task


class RunStatus(StrEnum):
    """Where a run is."""

    RUNNING = "running"
    STOPPED = "stopped"
    COMPLETED = "completed"
    FAILED = "failed"


class SessionStatus(StrEnum):
    """Where an agent session (one CLI process) is."""

    STARTING = "starting"
    RUNNING = "running"
    EXITED = "exited"  # exited without a signal
    SIGNALLED = "signalled"  # sent a terminal signal
    CRASHED = "crashed"
    STUCK = "stuck"  # no output for `stuck_after`
    KILLED = "killed"


class EscalationStatus(StrEnum):
    """An escalation is open until a human answers; `applied` once the answer was acted on."""

    OPEN = "open"
    ANSWERED = "answered"
    APPLIED = "applied"


class RiskStatus(StrEnum):
    """Seed 001's Risk.status."""

    OPEN = "open"
    MITIGATED = "mitigated"
    ACCEPTED = "accepted"


class Severity(StrEnum):
    """Seed 001's Risk.severity."""

    CRITICAL = "critical"
    NORMAL = "normal"
    LOW = "low"


class _Record(BaseModel):
    # Built on first use: a process that reads three kinds of record (the signal server) builds three.
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class RunRecord(_Record):
    """One plan driven to release (seed 001's `state_store.global`)."""

    id: str
    plan_id: str
    plan_doc: str
    design_doc: str | None
    baseline_sha: str
    current_sha: str
    working_branch: str
    shared_context: dict[str, Any]
    config: dict[str, Any]
    status: RunStatus
    checkpoint_tags: list[str]
    created_at: datetime
    updated_at: datetime


class TaskRecord(_Record):
    """One task of a run (seed 001's `per_task`) with its lifecycle state (seed 003)."""

    run_id: str
    task_id: str
    plan_order: int
    title: str
    tier: Tier
    status: TaskStatus
    state: IssueState  # the column holds the value; reading a row converts it here
    ownership: str
    contract: dict[str, Any]  # Task.model_dump(mode="json")
    retry_count: int = Field(ge=0)
    attempt: int = Field(ge=0)
    iteration_count: int = Field(ge=0)
    decision_log: list[str]
    artifacts: list[str]
    known_risks: list[Any]
    review_notes: Any
    commit_sha: str | None
    duration_ms: int | None
    workflow_context: dict[str, Any]
    started_at: datetime | None
    updated_at: datetime

    def task(self) -> Task:
        """The task contract as the plan model."""
        from pm_agent.plan.models import Task  # not at import: the signal server reads records, never tasks

        return Task.model_validate(self.contract)


# A task's moving fields as the tasks table holds them: task_id, state, status, commit_sha, iteration_count,
# retry_count and workflow_context (its JSON text). The store watch compares these as they come, and builds a
# TaskRow only for a row that changed.
TaskRowValues = tuple[str, str, str, str | None, int, int, str]


class TaskRowChanges(NamedTuple):
    """What `Store.task_row_changes` read: the rows, the ids whose row is gone, and the journal's last seq."""

    rows: list[TaskRowValues]
    gone: list[str] | None  # None: every row was read (a missing one is told by its absence)
    seq: int


# Value -> member by a dict lookup: `IssueState(value)` costs a microsecond, and the checks read every row often.
_STATES: dict[str, IssueState] = {s.value: s for s in IssueState}
_STATUSES: dict[str, TaskStatus] = {s.value: s for s in TaskStatus}


@dataclass(frozen=True, slots=True)
class TaskRow:
    """The fields of a task that change as it moves, read without validating its contract.

    The loop and the integrity checks look at every task often; at 1,000 tasks a full `TaskRecord`
    each time would cost more than the rest of the orchestration together."""

    task_id: str
    state: IssueState
    status: TaskStatus
    commit_sha: str | None
    iteration_count: int
    retry_count: int
    workflow_json: str  # as stored: decoded only when asked (the store watch compares the text)

    @classmethod
    def of(cls, values: TaskRowValues) -> TaskRow:
        """The row of these stored values; a state or status no enum has raises ValueError."""
        task_id, state, status, commit_sha, iterations, retries, workflow = values
        return cls(
            task_id,
            _STATES.get(state) or IssueState(state),
            _STATUSES.get(status) or TaskStatus(status),
            commit_sha,
            iterations,
            retries,
            workflow,
        )

    @property
    def workflow_context(self) -> dict[str, Any]:
        """The workflow context, decoded."""
        decoded: dict[str, Any] = json.loads(self.workflow_json)
        return decoded


class TransitionRecord(_Record):
    """One lifecycle transition of a task; `seq` counts from 1 per task."""

    id: int
    run_id: str
    task_id: str
    seq: int
    from_state: str
    to_state: str
    reason: str
    iteration: int
    created_at: datetime


class SessionRecord(_Record):
    """One agent CLI process working on a task."""

    id: int
    run_id: str
    task_id: str
    role: str
    attempt: int
    token: str
    runner: str
    agent_session_id: str | None  # the CLI's own session id, for --resume
    resumed_from: int | None
    status: SessionStatus
    pid: int | None
    exit_code: int | None
    workdir: str
    started_at: datetime
    last_output_at: datetime | None
    ended_at: datetime | None
    cost_usd: float = Field(ge=0)
    input_tokens: int = Field(ge=0)
    output_tokens: int = Field(ge=0)
    last_lines: str


class SessionEventRecord(_Record):
    """One line an agent printed (NDJSON as printed, or raw text)."""

    id: int
    session_id: int
    seq: int
    kind: str
    payload: str
    created_at: datetime


class SignalRecord(_Record):
    """One signal_back call, accepted or refused: `reason` says why it was refused, or for an accepted one
    what pm-agent read leniently ("normalised: ..."; "" when it came as the schema says)."""

    id: int
    run_id: str
    task_id: str
    session_id: int | None
    attempt: int
    seq: int
    kind: str
    payload: dict[str, Any]
    accepted: bool
    reason: str
    consumed: bool
    created_at: datetime


class GateResultRecord(_Record):
    """One gate's verdict on one attempt of a task, with its evidence."""

    id: int
    run_id: str
    task_id: str
    attempt: int
    gate: str
    passed: bool
    evidence: str
    created_at: datetime


class EscalationRecord(_Record):
    """A question for a human, in seed 001's escalation format."""

    id: int
    run_id: str
    task_id: str | None  # None: about the whole run
    source: str
    problem: str
    impact: str
    options: list[str]
    recommended: str
    blocking: bool
    status: EscalationStatus
    answer: str | None
    session_id: int | None  # the waiting session to resume with the answer
    created_at: datetime
    answered_at: datetime | None


class RiskRecord(_Record):
    """Seed 001's Risk, per run."""

    run_id: str
    id: str
    description: str
    severity: Severity
    status: RiskStatus
    source_task: str | None
    created_at: datetime
    updated_at: datetime


class CommitRecord(_Record):
    """The commit pm-agent made for a task (one per task and run)."""

    id: int
    run_id: str
    task_id: str
    sha: str
    branch: str
    message: str
    created_at: datetime


class ReportRecord(_Record):
    """A rendered report (progress, handoff, ...)."""

    id: int
    run_id: str
    kind: str
    text: str
    created_at: datetime


class EventRecord(_Record):
    """One row of the append-only event log."""

    id: int
    run_id: str
    task_id: str | None
    kind: str
    payload: dict[str, Any]
    created_at: datetime


HistorySource = Literal["transition", "session", "signal", "gate", "event"]


class HistoryEntry(_Record):
    """One line of `pm-agent log TASK`: what happened to a task, from whichever table."""

    at: datetime
    source: HistorySource
    kind: str
    summary: str
    data: dict[str, Any]
