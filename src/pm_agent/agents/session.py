"""Run one agent session end to end: record it, give it its signal server, start, monitor, resume.

    host = AgentHost(store, db_path, ClaudeRunner(agent_home=home))
    first = await start_session(host, run_id=run, task_id="t1", role="developer", prompt=..., workdir=wt)
    if first.signal and first.signal.kind == "needs-user-input":
        again = await resume_session(host, first.record, answer_prompt(first.signal.payload, answer))

`resume_session` continues the same agent conversation (`--resume <agent session id>`, same HOME
and workdir), as a new session row that points at the one it resumes (`resumed_from`) and with a
fresh token. The prompt helpers at the bottom word the messages seed 004's routing sends.

A conversation can be lost: Claude Code writes it to disk asynchronously (a kill before the first
write leaves none) and keeps it under HOME, which a user may clean. Resuming it then ends at once
with "No conversation found". The callers that decide to resume (the task flow, the final review,
the intake) recognise that with `conversation_lost` and fall back once to a fresh session whose
prompt is the one a new attempt gets plus `LOST_LINE` (`lost_conversation_prompt`), and record a
`session.conversation_lost` event.

Every session is confined to its workdir (`Confinement`: the runner enforces what it can) and,
when the workdir is a linked worktree, its main checkout is recorded before and compared after
(`CheckoutGuard`, the run's own or one per session). What the confinement refused becomes a
`guard.denied` event of the task, what got out anyway an `integrity.checkout` event.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pm_agent.agents.base import AgentRunner, Confinement, Outcome, SessionLimits, SessionRequest
from pm_agent.agents.monitor import MonitorResult, SessionMonitor
from pm_agent.errors import AgentError, PmAgentError
from pm_agent.signals.tokens import mcp_config, new_token
from pm_agent.store import SessionRecord, SessionStatus, Store
from pm_agent.vcs import SessionBaseline, record_session_baseline
from pm_agent.vcs.checkout_guard import CheckoutGuard, CheckoutTicket

if TYPE_CHECKING:
    from pm_agent.signals.socket_server import SignalSocket

__all__ = [
    "CONVERSATION_LOST",
    "LOST_LINE",
    "AgentHost",
    "SessionResult",
    "answer_prompt",
    "continuation_prompt",
    "conversation_lost",
    "followup_done_prompt",
    "lost_conversation_prompt",
    "previous_cost",
    "record_lost",
    "resume_session",
    "start_session",
]

log = logging.getLogger(__name__)


@dataclass
class AgentHost:
    """What sessions need: the store (and its file, for the signal server), a runner and limits."""

    store: Store
    db_path: Path
    runner: AgentRunner
    limits: SessionLimits = field(default_factory=SessionLimits)
    env: Mapping[str, str] = field(default_factory=dict)  # extra environment for every session
    python: str = sys.executable  # runs the signal_back server
    check_vcs: bool = True  # record a VCS baseline and refuse results of agents that committed
    poll_s: float = 0.25
    confine: bool = True  # keep sessions' writes in their workdir (settings and hook for runners that take them)
    checkout_guard: CheckoutGuard | None = None  # the run's guard; None: one per session from its worktree
    # Answer signal_back in this process (`signals/socket_server.py`), each session's MCP server a small relay;
    # False: each session starts the standalone server process (its ~75 ms of imports).
    serve_signals: bool = False
    _signals: SignalSocket | None = field(default=None, init=False, repr=False)

    @property
    def state_dir(self) -> Path:
        """pm-agent's own folder: where the store lives (`<repo>/.pm-agent`)."""
        return self.db_path.parent

    def signal_socket(self) -> Path | None:
        """Where this process answers signal_back (listening from the first call); None: not served here."""
        if not self.serve_signals:
            return None
        if self._signals is None:
            from pm_agent.signals.socket_server import SignalSocket

            try:
                self._signals = SignalSocket(self.db_path)
            except OSError as exc:  # e.g. a temporary folder too deep for a socket: sessions start their own server
                log.warning("signal_back stays one process per session: %s", exc)
                self.serve_signals = False
                return None
        return self._signals.path

    def close(self) -> None:
        """Stop answering signal_back here (sessions still open get the rest of `SignalSocket.close`'s wait)."""
        if self._signals is not None:
            self._signals.close()
            self._signals = None


SessionResult = MonitorResult

CONVERSATION_LOST = "session.conversation_lost"  # the event the caller records when it falls back
NO_CONVERSATION = "No conversation found"  # what Claude Code (and the fake agent) print for an unknown --resume id
LOST_LINE = (
    "Your earlier conversation on this task was lost (the agent could not resume it), so this is a fresh "
    "session: the task as it stands is above; check the worktree for work already done before you change anything."
)


def conversation_lost(result: SessionResult) -> bool:
    """True when a resume ended because the agent has no such conversation (nothing ran, no signal)."""
    if result.record.resumed_from is None or result.signal is not None:
        return False
    said = f"{result.record.last_lines or ''}\n{result.outcome.error or ''}"
    return NO_CONVERSATION in said


def record_lost(store: Store, previous: SessionRecord, failed: SessionResult) -> str:
    """Record `session.conversation_lost` for the task of `previous`; the line to print."""
    payload = {"session": failed.record.id, "resumed": previous.id, "agent_session_id": previous.agent_session_id}
    store.append_event(previous.run_id, CONVERSATION_LOST, payload, task_id=previous.task_id)
    return (
        f"task-{previous.task_id}: the {previous.role}'s conversation of session {previous.id} is gone "
        "(the agent has no such conversation); a fresh session starts, told so"
    )


def lost_conversation_prompt(fresh_prompt: str, message: str) -> str:
    """A fresh session's prompt when the conversation to resume is lost: the new attempt's prompt, LOST_LINE,
    and the message the lost conversation was to get (a human's answer must not be lost with it)."""
    return f"{fresh_prompt.rstrip()}\n\n## Lost conversation\n{LOST_LINE}\nThe message it was to get:\n{message}\n"


def previous_cost(store: Store, session: SessionRecord) -> float:
    """The cost of `session` and of every session it resumed (the agent's total already holds it)."""
    total = 0.0
    current: SessionRecord | None = session
    seen: set[int] = set()
    while current is not None and current.id not in seen:
        seen.add(current.id)
        total += current.cost_usd
        current = store.get_session(current.resumed_from) if current.resumed_from is not None else None
    return total


def _baseline(host: AgentHost, workdir: Path) -> SessionBaseline | None:
    if not host.check_vcs:
        return None
    try:
        return record_session_baseline(workdir)
    except PmAgentError:  # not a git worktree: nothing to compare against
        return None


def _guard(host: AgentHost, workdir: Path) -> tuple[CheckoutGuard, CheckoutTicket] | None:
    if not host.check_vcs:
        return None
    guard = host.checkout_guard
    if guard is None:
        guard = CheckoutGuard.of_worktree(workdir, host.state_dir / "quarantine")
    return (guard, guard.begin()) if guard is not None else None


def _confinement(host: AgentHost, workdir: Path, guard: CheckoutGuard | None, session_id: int) -> Confinement:
    db = host.db_path
    log = host.state_dir / "guard" / f"session-{session_id}.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    return Confinement(
        worktree=workdir,
        checkout=guard.checkout if guard is not None else None,
        state_dir=host.state_dir,
        protected=(db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")),
        denial_log=log,
    )


def _has_findings(result: MonitorResult) -> bool:
    """Whether `_record_findings` has anything to record (most sessions: no, and no worker thread is asked)."""
    return bool(result.outcome.denials) or (result.checkout is not None and bool(result.checkout.escaped))


def _record_findings(store: Store, run_id: str, task_id: str, result: MonitorResult) -> None:
    """The confinement's refusals and the guard's findings as events of the task (`pm-agent log`)."""
    session = result.record.id
    for denial in result.outcome.denials:
        payload = {"session": session, "tool": denial.tool, "target": denial.target, "by": denial.by}
        store.append_event(run_id, "guard.denied", {**payload, "reason": denial.reason}, task_id=task_id)
    report = result.checkout
    if report is not None and report.escaped:
        store.append_event(
            run_id,
            "integrity.checkout",
            {
                "session": session,
                "caught_by": "checkout-guard",
                "changes": report.lines(),
                "restored": report.restored,
                "unrestored": report.unrestored,
            },
            task_id=task_id,
        )


async def start_session(
    host: AgentHost,
    *,
    run_id: str,
    task_id: str,
    role: str,
    prompt: str,
    workdir: Path,
    attempt: int = 1,
    system_prompt: str | None = None,
    resume: SessionRecord | None = None,
    limits: SessionLimits | None = None,
    on_exit: Callable[[], None] | None = None,
) -> SessionResult:
    """Create the session row, start the agent, monitor it to the end; how it ended.

    With `resume`, the agent continues that session's conversation (same workdir, `--resume`). `on_exit` is
    called as soon as the agent's process has ended (the loop gives its slot to the next agent).
    Raises AgentError (after recording the session as crashed) when the agent cannot start.
    """
    store = host.store
    limits = limits or host.limits
    resume_id: str | None = None
    cost_before = 0.0
    if resume is not None:
        if not resume.agent_session_id:
            raise AgentError(f"session {resume.id} has no agent session id to resume")
        resume_id = resume.agent_session_id
        workdir = Path(resume.workdir)
        cost_before = await asyncio.to_thread(previous_cost, store, resume)
    token = new_token()

    def prepare() -> tuple[SessionRecord, SessionBaseline | None, tuple[CheckoutGuard, CheckoutTicket] | None]:
        # One worker-thread trip for the three, in this order: each trip costs the loop a wake-up and a handoff.
        record = store.create_session(
            run_id,
            task_id,
            role,
            attempt,
            token,
            host.runner.name,
            str(workdir),
            resume.id if resume is not None else None,
        )
        return record, _baseline(host, workdir), _guard(host, workdir)

    record, baseline, guard = await asyncio.to_thread(prepare)
    confinement = _confinement(host, workdir, guard[0] if guard else None, record.id) if host.confine else None
    request = SessionRequest(
        prompt=prompt,
        workdir=workdir,
        role=role,
        system_prompt=system_prompt,
        resume_id=resume_id,
        env=dict(host.env),
        limits=limits,
        mcp_config=mcp_config(
            host.db_path, token, host.python, run_id=run_id, task_id=task_id, socket=host.signal_socket()
        ),
        previous_cost_usd=cost_before,
        confinement=confinement,
    )
    try:
        session = await host.runner.start(request)
    except AgentError as exc:
        await asyncio.to_thread(
            store.update_session,
            record.id,
            status=SessionStatus.CRASHED,
            ended_at=datetime.now(UTC),
            last_lines=str(exc),
        )
        raise
    monitor = SessionMonitor(
        store,
        record.id,
        session,
        limits=limits,
        worktree=workdir,
        baseline=baseline,
        guard=guard,
        denial_log=confinement.denial_log if confinement is not None else None,
        poll_s=host.poll_s,
        on_exit=on_exit,
    )
    result = await monitor.run()
    if _has_findings(result):
        await asyncio.to_thread(_record_findings, store, run_id, task_id, result)
    return result


async def resume_session(
    host: AgentHost,
    previous: SessionRecord,
    prompt: str,
    *,
    system_prompt: str | None = None,
    limits: SessionLimits | None = None,
    on_exit: Callable[[], None] | None = None,
) -> SessionResult:
    """Continue `previous`'s agent conversation with `prompt` (same role, task, attempt and workdir)."""
    return await start_session(
        host,
        run_id=previous.run_id,
        task_id=previous.task_id,
        role=previous.role,
        prompt=prompt,
        workdir=Path(previous.workdir),
        attempt=previous.attempt,
        system_prompt=system_prompt,
        resume=previous,
        limits=limits,
        on_exit=on_exit,
    )


def _field(payload: Mapping[str, Any], name: str) -> str:
    value = payload.get(name)
    return str(value).strip() if value is not None else ""


def answer_prompt(signal: Mapping[str, Any], answer: str) -> str:
    """The message that resumes a session after its needs-user-input signal was answered."""
    question = _field(signal, "question")
    asked = f"You asked: {question}\n" if question else ""
    return (
        f"{asked}The user answered: {answer}\n\n"
        "Continue the task with this answer. When you stop, call signal_back exactly once."
    )


def continuation_prompt(base_prompt: str, signal: Mapping[str, Any]) -> str:
    """The prompt of the fresh session that continues after a partially-complete signal."""
    return (
        f"{base_prompt}\n\n"
        "## Continuation\n"
        "A previous session of your role ran out of context on this task. Do not redo its work.\n"
        f"Progress so far: {_field(signal, 'progress')}\n"
        f"Continue from: {_field(signal, 'continuationPoint')}\n"
    )


def followup_done_prompt(signal: Mapping[str, Any], result: Outcome | None, summary: str) -> str:
    """The message that resumes a session after the role it asked for (needs-role-followup) finished."""
    role = _field(signal, "targetRole") or "the requested role"
    state = "" if result is None or result.ok else " (it did not finish cleanly)"
    return (
        f"The {role} session you asked for has finished{state}.\n"
        f"Its report: {summary}\n\n"
        "Continue your task. When you stop, call signal_back exactly once."
    )
