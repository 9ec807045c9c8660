"""What the dashboard's JSON endpoints return (and its pages render): the OpenAPI schemas."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict


class _View(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RunSummary(_View):
    """One run in the runs list."""

    id: str
    plan_id: str
    status: str
    working_branch: str
    created_at: datetime
    updated_at: datetime
    done: int
    total: int
    cost_usd: float
    open_escalations: int


class Card(_View):
    """A task on the board."""

    task_id: str
    title: str
    tier: str
    state: str
    group: str
    attempt: int
    slot: int | None  # the slot number while the task holds one
    in_state_s: float  # seconds since it entered its state
    cost_usd: float


class Column(_View):
    """One board column: a group of lifecycle states."""

    group: str
    label: str
    cards: list[Card]


class BoardHeader(_View):
    """The line above the board."""

    run_id: str
    plan_id: str
    status: str
    slots_in_use: int
    max_slots: int
    done: int
    total: int
    cost_usd: float
    open_escalations: int


class Board(_View):
    """A run's board; `last_event_id` is where the live stream continues from."""

    header: BoardHeader
    columns: list[Column]
    last_event_id: int


class TransitionView(_View):
    """One move of a task."""

    seq: int
    from_state: str
    to_state: str
    reason: str
    at: datetime


class SessionView(_View):
    """One agent session of a task."""

    id: int
    role: str
    attempt: int
    status: str
    duration_s: float | None
    turns: int | None
    model: str | None
    input_tokens: int
    output_tokens: int
    cost_usd: float
    last_lines: str


class SignalView(_View):
    """One signal_back call with what it carried."""

    id: int
    session_id: int | None
    attempt: int
    kind: str
    accepted: bool
    reason: str
    payload: dict[str, Any]
    at: datetime


class GateView(_View):
    """One gate's verdict and the output it was decided on."""

    attempt: int
    gate: str
    passed: bool
    evidence: str
    at: datetime


class TaskView(_View):
    """Everything the task page shows."""

    run_id: str
    card: Card
    status: str
    ownership: str
    commit_sha: str | None
    contract: dict[str, Any]
    transitions: list[TransitionView]
    sessions: list[SessionView]
    signals: list[SignalView]
    gates: list[GateView]
    diff_stat: str
    review_artifact: str


class EscalationView(_View):
    """An escalation in seed 001's format, with the words an answer may start with."""

    id: int
    run_id: str
    task_id: str | None
    source: str
    status: str
    text: str
    answer_words: list[str]
    answer: str | None
    created_at: datetime


class CostLine(_View):
    """Cost and tokens of the sessions of one role or one model."""

    key: str
    sessions: int
    cost_usd: float
    input_tokens: int
    output_tokens: int


class ReportView(_View):
    """A stored report (progress, handoff)."""

    id: int
    kind: str
    text: str
    at: datetime


class ReportsView(_View):
    """A run's reports page."""

    run_id: str
    progress: list[ReportView]
    by_role: list[CostLine]
    by_model: list[CostLine]
    manifest: str
    handoff: str


class AnswerIn(_View):
    """An answer to an escalation, as `pm-agent answer ID TEXT` takes it."""

    answer: str


class AnswerOut(_View):
    """The escalation as stored after the answer."""

    id: int
    status: str
    answer: str | None
