"""What a decision about a task is (`Decision` and what it asks for), and what it decides on (`SessionEnd`,
`Answer`): the data `routing.route` and the steps return and `TaskFlow` applies."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pm_agent.lifecycle import IssueState
from pm_agent.reports.escalation import Escalation
from pm_agent.signals import AnySignal, NeedsUserInputSignal, PartiallyCompleteSignal
from pm_agent.store import SessionStatus

S = IssueState


# ---------------------------------------------------------------- what a decision is


@dataclass(frozen=True)
class FixRequest:
    """What the fixer must fix; its prompt reads the latest one (`fix.requested`)."""

    source: str
    evidence: str


@dataclass(frozen=True)
class EscalationRequest:
    """An escalation to open about the task (seed 001's format)."""

    source: str
    body: Escalation
    session_id: int | None = None
    context: str = ""


@dataclass(frozen=True)
class NextSession:
    """A session to run once the decision is applied, in the state the task is then in.

    kind "agent": the state's owner works (a stored signal or an interrupted session is recovered first);
    "resume": session `resume_session` continues with `prompt`; "continue": a fresh session of `role`
    carries on after `continuation` (a partially-complete signal). `slices` marks the planner session
    whose complete signal slices the task (planning.py)."""

    role: str
    kind: str = "agent"
    resume_session: int | None = None
    prompt: str = ""
    continuation: PartiallyCompleteSignal | None = None
    slices: bool = False


@dataclass(frozen=True)
class WorktreeCleanup:
    """A finished task's worktree to remove after its move; its branch too unless kept (staged integration)."""

    worktree: Path
    branch: str
    keep_branch: bool = False


@dataclass(frozen=True)
class Decision:
    """One decision about one task; `target` None keeps the task in its state."""

    target: IssueState | None
    reason: str = ""
    fields: Mapping[str, Any] = field(default_factory=dict)  # stored with the move (e.g. retry_count)
    fix: FixRequest | None = None
    escalation: EscalationRequest | None = None
    consume: bool = False  # the session's signal is handled
    events: tuple[tuple[str, Mapping[str, Any]], ...] = ()  # appended to the task's event log
    note: tuple[str, str] | None = None  # (kind, message) told to the listeners after the move
    then: NextSession | None = None
    applied_escalation: int | None = None  # an answered escalation this decision acts on
    abort: bool = False  # no new task is dispatched: the human chose to abort the run, or the agent cannot work
    cleanup: WorktreeCleanup | None = None


# ---------------------------------------------------------------- what happened


@dataclass(frozen=True)
class SessionEnd:
    """How one agent session ended, as far as routing cares."""

    role: str
    session_id: int
    signal: AnySignal | None
    status: SessionStatus
    detail: str = ""
    resumable: bool = False  # the CLI session can be resumed (it has an id and did not hang)
    last_lines: str = ""
    account_error: str | None = None  # the agent's account cannot work: no session can (agents/stream.py)


@dataclass(frozen=True)
class Answer:
    """A human's answer to the task's latest answered escalation."""

    escalation_id: int
    source: str
    answer: str
    session_id: int | None = None  # the session that asked (needs-user-input)
    session_role: str = ""
    asked: NeedsUserInputSignal | None = None
    asking_state: IssueState = S.IMPLEMENTING  # the state the task was in before it waited


Outcome = SessionEnd | Answer
