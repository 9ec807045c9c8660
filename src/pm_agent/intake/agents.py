"""One agent phase of the intake (the analyst's requirements, the planner's plan), restartable.

`agent_phase` reads what the store holds about the task's sessions and does the next thing:
start the first session; resume the same session with a human's answer (needs-user-input), with
pm-agent's exact problems when its check of the work fails, or after pm-agent itself was killed
mid-session; until the work passes the check (DONE), a question waits for a human (WAITING), or
the retry budget is spent and the human says abort (FAILED). Everything it decides from is in the
store, so `pm-agent resume` after a `kill -9` continues where it stopped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime
from enum import StrEnum
from importlib import resources
from string import Template

from pm_agent.agents.header import session_header
from pm_agent.agents.session import (
    CONVERSATION_LOST,
    answer_prompt,
    conversation_lost,
    lost_conversation_prompt,
    record_lost,
    resume_session,
    start_session,
)
from pm_agent.intake.context import IntakeCtx
from pm_agent.lifecycle import IssueState
from pm_agent.plan.models import TaskStatus
from pm_agent.reports.escalation import Escalation
from pm_agent.signals import signal_instructions
from pm_agent.store import EscalationStatus, SessionRecord, SessionStatus, SignalRecord

__all__ = ["Phase", "agent_phase", "render_request_prompt", "system_prompt"]

SENT_BACK = "intake.sent_back"  # pm-agent's check failed: the problems went back to the session
LIVE = (SessionStatus.STARTING, SessionStatus.RUNNING)
ROLE_LINES = {
    "analyst": "You turn a request into locked BDD requirements; you write only the requirements doc.",
    "planner": "You turn locked requirements into a plan pm-agent can run; you write only the plan doc.",
}


class Phase(StrEnum):
    """How an agent phase (or the approval) ended for now."""

    DONE = "done"
    WAITING = "waiting"  # a human has to answer first
    FAILED = "failed"  # aborted by the human


def render_request_prompt(role: str, values: dict[str, str]) -> str:
    """Fill `engine/prompts/request_<role>.md` (unknown placeholders stay as written)."""
    text = resources.files("pm_agent.engine").joinpath("prompts", f"request_{role}.md").read_text(encoding="utf-8")
    return Template(text).safe_substitute(values).strip() + "\n"


def system_prompt(ic: IntakeCtx, task_id: str, role: str, attempt: int) -> str:
    """The header line scripted models route on, then the role's one line."""
    header = session_header(role, f"task-{task_id}", attempt, ic.workdir)
    return f"{header}\n{ROLE_LINES[role]} Report back only through the signal_back tool."


def instructions(role: str, task_id: str) -> str:
    """The signal_back instructions for an intake session."""
    return signal_instructions(role, f"task-{task_id}", criteria=[])


def _signal(ic: IntakeCtx, session: SessionRecord) -> SignalRecord | None:
    accepted = [s for s in ic.store.signals_for_session(session.id) if s.accepted]
    return accepted[0] if accepted else None


def _feedback_prompt(problems: list[str], role: str) -> str:
    lines = "\n".join(f"- {p}" for p in problems)
    return (
        f"pm-agent checked your work and sends it back. Fix exactly these problems:\n{lines}\n\n"
        f"Edit the file in place (you are the {role}; change nothing else), then call signal_back exactly once."
    )


class _Session:
    """The intake task's sessions as the store holds them, and how to start or resume one."""

    def __init__(self, ic: IntakeCtx, task_id: str, role: str, first_prompt: Callable[[], str]) -> None:
        self.ic, self.task_id, self.role, self.first_prompt = ic, task_id, role, first_prompt

    def last(self) -> SessionRecord | None:
        sessions = self.ic.store.list_sessions(self.ic.run_id, self.task_id)
        return sessions[-1] if sessions else None

    async def start(self, extra: str = "", *, lost: bool = False) -> None:
        """A fresh session: the first prompt, then `extra` (with `lost`, as the message a lost conversation was
        to get)."""
        attempt = len(self.ic.store.list_sessions(self.ic.run_id, self.task_id)) + 1
        if lost:
            prompt = lost_conversation_prompt(self.first_prompt(), extra)
        else:
            prompt = self.first_prompt() + (f"\n\n{extra}" if extra else "")
        self.ic.emit("intake.session", f"task-{self.task_id}: a {self.role} session starts (#{attempt} of the task)")
        await start_session(
            self.ic.host,
            run_id=self.ic.run_id,
            task_id=self.task_id,
            role=self.role,
            prompt=prompt,
            workdir=self.ic.workdir,
            attempt=1,
            system_prompt=system_prompt(self.ic, self.task_id, self.role, attempt),
        )

    async def resume(self, last: SessionRecord, prompt: str) -> None:
        """The same conversation when it can be resumed, else a fresh session told what happened."""
        if last.agent_session_id and last.status is not SessionStatus.STUCK:
            self.ic.emit("intake.session", f"task-{self.task_id}: {self.role} session #{last.id} resumed")
            attempt = len(self.ic.store.list_sessions(self.ic.run_id, self.task_id)) + 1
            result = await resume_session(
                self.ic.host, last, prompt, system_prompt=system_prompt(self.ic, self.task_id, self.role, attempt)
            )
            if conversation_lost(result):  # nothing to continue: once, a fresh session told so
                self.ic.emit(CONVERSATION_LOST, record_lost(self.ic.store, last, result))
                await self.start(prompt, lost=True)
        else:
            await self.start(prompt)


async def agent_phase(
    ic: IntakeCtx,
    task_id: str,
    role: str,
    working: IssueState,
    waiting: IssueState,
    first_prompt: Callable[[], str],
    check: Callable[[], list[str]],
) -> Phase:
    """Drive one intake task's sessions until `check` finds nothing wrong with what they wrote."""
    sess = _Session(ic, task_id, role, first_prompt)
    while True:
        last = await asyncio.to_thread(sess.last)
        if last is None:
            ic.move(task_id, working, f"the {role} starts")
            await sess.start()
            continue
        if last.status in LIVE:  # pm-agent was killed while this session ran: it is gone with it
            ic.store.update_session(last.id, status=SessionStatus.CRASHED, ended_at=datetime.now(UTC))
            ic.record("intake.interrupted", {"session": last.id}, task_id)
            ic.emit("intake.session", f"task-{task_id}: session #{last.id} was cut off by a stop; resuming it")
            await sess.resume(
                last,
                "pm-agent was restarted while you worked. Check what you already wrote, "
                "finish the task, then call signal_back exactly once.",
            )
            continue
        signal = _signal(ic, last)
        if signal is not None and signal.kind == "needs-user-input":
            outcome = await _question(ic, sess, last, signal, working, waiting)
            if outcome is not None:
                return outcome
            continue
        problems = await asyncio.to_thread(check) if signal is not None and signal.kind == "complete" else None
        if problems == []:
            ic.move(task_id, working, "done")
            return Phase.DONE
        if problems is None:
            got = f"sent {signal.kind}" if signal is not None else f"ended without signal_back ({last.status.value})"
            problems = [f"pm-agent takes complete or needs-user-input from the {role} of a request; your session {got}"]
        outcome = await _send_back(ic, sess, last, problems, waiting)
        if outcome is not None:
            return outcome


async def _question(
    ic: IntakeCtx, sess: _Session, last: SessionRecord, signal: SignalRecord, working: IssueState, waiting: IssueState
) -> Phase | None:
    """A session's question: ask the human once, resume the same session with the answer."""
    asked = [e for e in ic.escalations(sess.task_id, "intake-question") if e.session_id == last.id]
    esc = asked[-1] if asked else None
    if esc is None:
        question = str(signal.payload.get("question", "")).strip()
        context = str(signal.payload.get("context", "")).strip()
        ic.move(sess.task_id, waiting, f"the {sess.role} asks the human", TaskStatus.ESCALATED)
        body = Escalation(
            problem=f"the {sess.role} asks: {question}" + (f"\nContext: {context}" if context else ""),
            impact=f"the {'requirements wait' if sess.role == 'analyst' else 'plan waits'} for this answer",
            options=["answer the question in your own words", "answer `unknown`: the agent decides and says so"],
            recommended="answer the question; the same session continues with your answer",
        )
        esc = ic.open_escalation(sess.task_id, "intake-question", body, session_id=last.id)
    esc = await ic.await_answer(esc)
    if esc.status is EscalationStatus.OPEN:
        return Phase.WAITING
    if esc.status is EscalationStatus.ANSWERED:
        ic.store.mark_escalation_applied(esc.id)
    ic.move(sess.task_id, working, f"answer to escalation #{esc.id} received")
    await sess.resume(last, answer_prompt(signal.payload, esc.answer or ""))
    return None


async def _send_back(
    ic: IntakeCtx, sess: _Session, last: SessionRecord, problems: list[str], waiting: IssueState
) -> Phase | None:
    """Send the exact problems back to the same session, within the retry budget; then ask the human."""
    sent = ic.events(SENT_BACK, sess.task_id)
    if not any(e.payload.get("session") == last.id for e in sent):
        answers = [(e.answer or "").strip().lower() for e in ic.escalations(sess.task_id, "intake-budget")]
        budget = ic.config.retry_budget * (1 + answers.count("retry"))
        if len(sent) >= budget:
            return await _out_of_budget(ic, sess, last, problems, waiting)
        ic.record(SENT_BACK, {"session": last.id, "problems": problems}, sess.task_id)
        ic.emit("intake.sent_back", f"task-{sess.task_id}: back to the {sess.role}:\n" + "\n".join(problems))
    await sess.resume(last, _feedback_prompt(problems, sess.role))
    return None


async def _out_of_budget(
    ic: IntakeCtx, sess: _Session, last: SessionRecord, problems: list[str], waiting: IssueState
) -> Phase | None:
    asked = [e for e in ic.escalations(sess.task_id, "intake-budget") if e.session_id == last.id]
    esc = asked[-1] if asked else None
    if esc is None:
        ic.move(sess.task_id, waiting, "retry budget spent", TaskStatus.ESCALATED)
        body = Escalation(
            problem=f"the {sess.role}'s work still fails pm-agent's check after {ic.config.retry_budget} round(s):\n"
            + "\n".join(f"- {p}" for p in problems),
            impact="no plan can be run until this is fixed",
            options=["retry: the same session gets another round of budget", "abort: stop this request"],
            recommended="retry if the problems look close to fixed; else abort and rephrase the request",
        )
        esc = ic.open_escalation(sess.task_id, "intake-budget", body, session_id=last.id)
    esc = await ic.await_answer(esc)
    if esc.status is EscalationStatus.OPEN:
        return Phase.WAITING
    if esc.status is EscalationStatus.ANSWERED:
        ic.store.mark_escalation_applied(esc.id)
    if (esc.answer or "").strip().lower() != "retry":
        ic.move(sess.task_id, IssueState.FAILED, f"aborted by the human (escalation #{esc.id})", TaskStatus.FAILED)
        return Phase.FAILED
    ic.record(SENT_BACK, {"session": last.id, "problems": problems}, sess.task_id)
    await sess.resume(last, _feedback_prompt(problems, sess.role))
    return None
