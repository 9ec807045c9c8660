"""What the intake of one request shares: its run in the store, its worktree, its agents, its human.

The intake is a run of its own (see start.py for why): two pm-internal tasks, `requirements`
(the analyst) and `plan` (the planner), whose sessions, signals and escalations are the store's
usual ones. `IntakeInfo` is the request as recorded in the run's `intake.started` event.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pm_agent.agents.session import AgentHost
from pm_agent.config import PmConfig
from pm_agent.engine.events import Listener
from pm_agent.human.channels import EscalationChannel
from pm_agent.lifecycle import IssueState
from pm_agent.plan.models import TaskStatus
from pm_agent.reports.escalation import Escalation, render_escalation
from pm_agent.store import EscalationRecord, EscalationStatus, EventRecord, RunRecord, Store

__all__ = ["PLAN", "REQUIREMENTS", "STARTED", "IntakeCtx", "IntakeInfo"]

REQUIREMENTS = "requirements"  # the analyst's task
PLAN = "plan"  # the planner's task
STARTED = "intake.started"  # the run's first event: the request and where its documents go


@dataclass(frozen=True)
class IntakeInfo:
    """The request and its places, as the `intake.started` event holds them."""

    request: str
    design_rel: str
    plan_rel: str
    branch: str
    worktree: str
    user_design: str = ""  # the text of `--design DOC`, given to the analyst as input
    yes: bool = False  # `--yes`: no approval escalation
    allow_dirty: bool = False  # `--allow-dirty`, kept for the plan's run after a resume

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> IntakeInfo:
        """Read the event's payload back."""
        return cls(
            request=str(payload["request"]),
            design_rel=str(payload["design_rel"]),
            plan_rel=str(payload["plan_rel"]),
            branch=str(payload["branch"]),
            worktree=str(payload["worktree"]),
            user_design=str(payload.get("user_design", "")),
            yes=bool(payload.get("yes", False)),
            allow_dirty=bool(payload.get("allow_dirty", False)),
        )

    def payload(self) -> dict[str, Any]:
        """What the event stores."""
        return {
            "request": self.request,
            "design_rel": self.design_rel,
            "plan_rel": self.plan_rel,
            "branch": self.branch,
            "worktree": self.worktree,
            "user_design": self.user_design,
            "yes": self.yes,
            "allow_dirty": self.allow_dirty,
        }

    @property
    def design_file(self) -> Path:
        """The requirements doc in the intake worktree."""
        return Path(self.worktree) / self.design_rel

    @property
    def plan_file(self) -> Path:
        """The plan in the intake worktree."""
        return Path(self.worktree) / self.plan_rel


@dataclass
class IntakeCtx:
    """One request's intake: store, run, configuration, agents, listener and escalation channel."""

    repo: Path
    store: Store
    config: PmConfig
    host: AgentHost
    run: RunRecord
    info: IntakeInfo
    listener: Listener
    channel: EscalationChannel

    @property
    def run_id(self) -> str:
        """The intake run's id."""
        return self.run.id

    @property
    def workdir(self) -> Path:
        """The intake worktree (the working branch checked out), where the sessions write."""
        return Path(self.info.worktree)

    def emit(self, kind: str, message: str, **data: Any) -> None:
        """Tell the listeners."""
        self.listener.emit(kind, message, **data)

    def record(self, kind: str, payload: Mapping[str, Any], task_id: str | None = None) -> None:
        """Append an event of the intake run."""
        self.store.append_event(self.run_id, kind, payload, task_id=task_id)

    def events(self, kind: str, task_id: str | None = None) -> list[EventRecord]:
        """The run's events of one kind (of one task when given), oldest first."""
        return [e for e in self.store.events(self.run_id, task_id) if e.kind == kind]

    def move(self, task_id: str, to: IssueState, reason: str, status: TaskStatus | None = None) -> None:
        """Show where an intake task is (`pm-agent status`); these tasks are never driven by the PM loop."""
        rec = self.store.get_task(self.run_id, task_id)
        if rec.state == to.value:
            return
        self.store.transition(
            self.run_id,
            task_id,
            from_state=rec.state,
            to_state=to.value,
            reason=reason,
            iteration=0,
            workflow_context={},
            status=status or TaskStatus.IN_PROGRESS,
        )
        self.emit("task.moved", f"task-{task_id}: {rec.state} → {to.value} ({reason})", task=task_id)

    def escalations(self, task_id: str, source: str) -> list[EscalationRecord]:
        """The intake's escalations of one task and source, oldest first."""
        found = self.store.list_escalations(self.run_id)
        return sorted((e for e in found if e.task_id == task_id and e.source == source), key=lambda e: e.id)

    def open_escalation(
        self, task_id: str, source: str, body: Escalation, session_id: int | None = None
    ) -> EscalationRecord:
        """Store a blocking escalation in seed 001's format and show it."""
        esc = self.store.open_escalation(
            self.run_id,
            task_id,
            source=source,
            problem=body.problem,
            impact=body.impact,
            options=list(body.options),
            recommended=body.recommended,
            blocking=True,
            session_id=session_id,
        )
        self.emit("escalation.opened", render_escalation(body, esc.id), escalation=esc.id, task=task_id)
        return esc

    async def await_answer(self, esc: EscalationRecord) -> EscalationRecord:
        """Hand an open escalation to the channel (a terminal waits for the human, others only say how
        to answer); the escalation as stored afterwards: still open means nobody answered yet."""
        if esc.status is EscalationStatus.OPEN:
            body = Escalation(
                problem=esc.problem,
                impact=esc.impact,
                options=list(esc.options),
                recommended=esc.recommended,
                blocking=True,
            )
            await self.channel.escalate(self.store, esc, render_escalation(body, esc.id))
        return await asyncio.to_thread(self.store.get_escalation, esc.id)
