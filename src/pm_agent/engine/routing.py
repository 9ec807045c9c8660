"""Where a task goes next, decided from data alone: seed 004's routing as pure functions.

`route(state, outcome, history, config, workflow)` reads the state a task is in, what just happened
there (a session's end, or a human's answer), the task's history and the workflow file's routing
keys (`on_complete`, `followup`), and returns a `Decision`. It touches no store, no git and no
agent; `TaskFlow` applies the decision (the only place a task moves, an escalation opens or a fix
is requested). The steps (planning, gates, review, delivery) build their decisions with the
helpers here too, so every escalation of one kind reads the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from pm_agent.agents.session import answer_prompt, followup_done_prompt
from pm_agent.config import PmConfig
from pm_agent.engine.decisions import (
    Answer,
    Decision,
    EscalationRequest,
    FixRequest,
    NextSession,
    Outcome,
    SessionEnd,
)
from pm_agent.engine.history import FOLLOWUP_PENDING, FOLLOWUP_RESOLVED, PendingFollowup
from pm_agent.lifecycle import IssueState, Workflow, WorkflowContext
from pm_agent.plan.models import Presence, Task
from pm_agent.reports.escalation import Escalation
from pm_agent.signals import (
    CompleteSignal,
    NeedsRoleFollowupSignal,
    NeedsUserInputSignal,
    PartiallyCompleteSignal,
    signal_payload,
)

S = IssueState
RESUME_AFTER_CRASH = "Your last run ended without calling signal_back. Finish the task and call it exactly once."


class History(Protocol):
    """The facts of a task's history routing reads (`TaskHistory` reads them from the store)."""

    task_id: str

    def pending_followup(self) -> PendingFollowup | None: ...

    def since_state_entry(self, kind: str | None) -> int: ...

    def retry_count(self) -> int: ...


@dataclass(frozen=True)
class HistoryFacts:
    """A history given as values: what `route` needs, without a store (replays, tests)."""

    task_id: str
    pending: PendingFollowup | None = None
    counts: Mapping[str | None, int] = field(default_factory=dict)  # since_state_entry by kind
    retries: int = 0

    def pending_followup(self) -> PendingFollowup | None:
        """The open followup, if any."""
        return self.pending

    def since_state_entry(self, kind: str | None) -> int:
        """Sessions in the current state that ended with `kind` (None: without a signal)."""
        return self.counts.get(kind, 0)

    def retry_count(self) -> int:
        """Fix attempts spent."""
        return self.retries


# ---------------------------------------------------------------- shared decisions


def budget_escalation(
    task_id: str,
    why: str,
    config: PmConfig,
    *,
    limit: str | None = None,
    consume: bool = False,
    fix: FixRequest | None = None,
) -> Decision:
    """A task that used up a limit waits for a human; `limit` names it (default: the retry budget)."""
    limit = limit or f"retry budget of {config.retry_budget} (retry_budget) exhausted"
    body = Escalation(
        problem=f"task-{task_id}: {why}; {limit}",
        impact=f"task-{task_id} and the tasks that depend on it are blocked",
        options=["retry: <guidance for the fixer>", "skip the task", "abort the run"],
        recommended="retry with guidance after reading `pm-agent log " + task_id + "`",
    )
    return Decision(
        S.WAITING_FOR_HUMAN_INPUT,
        f"escalated: {why[:100]}",
        escalation=EscalationRequest("retry-budget", body),
        consume=consume,
        fix=fix,
    )


def to_fixer(
    fix: FixRequest, reason: str, retry_count: int, *, consume: bool = False, to: IssueState = S.FIXING_ISSUES
) -> Decision:
    """Send the task to the fixer (or `to`: the developer) with `fix` as its evidence; one fix attempt is spent."""
    return Decision(to, reason, {"retry_count": retry_count + 1}, fix=fix, consume=consume)


def fix_or_escalate(
    task_id: str,
    retry_count: int,
    config: PmConfig,
    *,
    fix: FixRequest,
    reason: str,
    exhausted: FixRequest,
    why: str,
    to: IssueState = S.FIXING_ISSUES,
) -> Decision:
    """`to` (the fixer) gets `fix` while the retry budget lasts; after it, `exhausted` is recorded and a human asked."""
    if retry_count >= config.retry_budget:
        return budget_escalation(task_id, why, config, fix=exhausted)
    return to_fixer(fix, reason, retry_count, to=to)


def triage(task: Task) -> Decision:
    """RECEIVED: a task triage found already done completes without an agent; any other is planned."""
    if task.presence is Presence.EXISTS:
        return Decision(S.COMPLETED, f"triage: EXISTS ({task.presence_reason}); no agent dispatched")
    return Decision(S.PLANNING_APPROACH, f"triage: {task.presence.value}; the PM plans the approach")


def limit_reached(
    task_id: str, state: IssueState, ctx: WorkflowContext, config: PmConfig, workflow: Workflow
) -> Decision | None:
    """Seed 003's loop detection and iteration limit: REQUIRES_HUMAN_INTERVENTION, else None."""
    window = max(3, 2 * config.retry_budget + 2)
    why = ""
    if ctx.iterations_exhausted:
        why = f"{ctx.iteration_count} transitions reached max_iterations ({ctx.max_iterations})"
    elif ctx.is_in_loop(window):
        why = f"loop detected in the last {window} states: " + ", ".join(s.value for s in ctx.previous_states[-window:])
    if not why or state is S.CREATING_PR or not workflow.is_valid(state, S.REQUIRES_HUMAN_INTERVENTION):
        return None
    body = Escalation(
        problem=f"task-{task_id} is not converging: {why}",
        impact="the task stops; tasks that depend on it stay blocked",
        options=["retry with guidance (new run of the task)", "skip the task", "abort the run"],
        recommended="read `pm-agent log` for the task, then retry with guidance",
    )
    return Decision(S.REQUIRES_HUMAN_INTERVENTION, why, escalation=EscalationRequest("loop-detection", body))


# ---------------------------------------------------------------- route


def route(state: IssueState, outcome: Outcome, history: History, config: PmConfig, workflow: Workflow) -> Decision:
    """Seed 004's routing: the one decision that follows `outcome` in `state`."""
    if isinstance(outcome, Answer):
        return _answer(state, outcome)
    signal = outcome.signal
    if signal is None:
        return _no_signal(outcome, history, config)
    if isinstance(signal, CompleteSignal):
        return _complete(state, outcome, signal, history, workflow)
    if isinstance(signal, PartiallyCompleteSignal):
        done = history.since_state_entry("partially-complete")
        if done > config.max_continuations:
            why = f"{done} partially-complete sessions in {state.value}"
            hit = f"continuation limit of {config.max_continuations} (max_continuations) reached"
            return budget_escalation(history.task_id, why, config, limit=hit, consume=True)
        note = ("session.continuation", f"task-{history.task_id}: a fresh {outcome.role} session continues")
        then = NextSession(outcome.role, kind="continue", continuation=signal)
        return Decision(None, consume=True, note=note, then=then)
    if isinstance(signal, NeedsUserInputSignal):
        return _needs_user_input(state, outcome, signal, history.task_id)
    return _followup(state, outcome, signal, history, config, workflow)


def _needs_user_input(state: IssueState, end: SessionEnd, signal: NeedsUserInputSignal, task_id: str) -> Decision:
    body = Escalation(
        problem=f"the {end.role} on task-{task_id} asks: {signal.question}",
        impact=f"task-{task_id} and the tasks that depend on it wait; other slots keep working",
        options=["answer the question (the agent resumes its session with your answer)", "skip the task"],
        recommended="answer the question",
    )
    target = S.REQUIREMENTS_UNCLEAR if state is S.ANALYZING_REQUIREMENTS else S.WAITING_FOR_HUMAN_INPUT
    escalation = EscalationRequest("needs-user-input", body, session_id=end.session_id, context=signal.context)
    return Decision(target, "needs-user-input: escalated to the human", escalation=escalation, consume=True)


def _complete(
    state: IssueState, end: SessionEnd, signal: CompleteSignal, history: History, workflow: Workflow
) -> Decision:
    pending = history.pending_followup()
    if pending is not None and state is not pending.return_state:
        asked = signal_payload(pending.asked) if pending.asked is not None else {}
        prompt = followup_done_prompt(asked, None, signal.summary)
        return Decision(
            pending.return_state,
            f"{end.role} finished; resuming the asking {pending.asker_role}",
            consume=True,
            events=((FOLLOWUP_RESOLVED, {"session_id": pending.session_id}),),
            then=NextSession(pending.asker_role, kind="resume", resume_session=pending.session_id, prompt=prompt),
        )
    if state is S.ANALYZING_REQUIREMENTS and signal.self_assessment != "confident":
        return Decision(S.REQUIREMENTS_UNCLEAR, "analyst is not confident the requirements are clear", consume=True)
    if state is S.ANALYZING_REQUIREMENTS:
        return Decision(workflow.on_complete(state) or S.PLANNING_APPROACH, "analyst: requirements clear", consume=True)
    nxt = workflow.on_complete(state) or S.RUNNING_TESTS  # every change is checked by the gates first
    return Decision(nxt, f"{end.role} signalled complete; pm-agent checks it", consume=True)


def _followup(
    state: IssueState,
    end: SessionEnd,
    signal: NeedsRoleFollowupSignal,
    history: History,
    config: PmConfig,
    workflow: Workflow,
) -> Decision:
    role, reason, task_id = signal.target_role, signal.reason, history.task_id
    target = workflow.followup(state, role)
    if target is None or not workflow.is_valid(state, target):
        body = Escalation(
            problem=f"the {end.role} asked for {role}, which cannot follow {state.value}",
            impact=f"task-{task_id} waits",
            options=["retry with guidance", "skip the task"],
            recommended="retry with guidance",
        )
        return Decision(
            S.WAITING_FOR_HUMAN_INPUT,
            f"followup to {role} not allowed here",
            escalation=EscalationRequest("needs-role-followup", body),
            consume=True,
        )
    evidence = reason + (f"\n{signal.context}" if signal.context else "")
    if target is S.FIXING_ISSUES:
        retries = history.retry_count()
        if retries >= config.retry_budget:
            return budget_escalation(task_id, f"{end.role} found issues: {reason}", config, consume=True)
        fix = FixRequest(f"{end.role} ({state.value}) found issues", evidence)
        return to_fixer(fix, f"{end.role} asked for the fixer", retries, consume=True)
    events: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    if signal.resume:
        pending = {"session_id": end.session_id, "return_state": state.value, "target": role}
        events = ((FOLLOWUP_PENDING, pending),)
    fix = FixRequest(f"{end.role} asked for the {role}", evidence)
    return Decision(target, f"needs-role-followup → {role}: {reason[:80]}", fix=fix, consume=True, events=events)


def _no_signal(end: SessionEnd, history: History, config: PmConfig) -> Decision:
    """Seed 004: a process that ends without a signal crashed; retry within the budget, then escalate."""
    crashes = history.since_state_entry(None)
    what = f"{end.status.value}: {end.detail or 'exited without calling signal_back'}"
    failed = (
        "session.failed",
        {"session_id": end.session_id, "status": end.status.value, "last_lines": end.last_lines},
    )
    if end.account_error is not None:
        return replace(_account_escalation(history.task_id, end), events=(failed,))
    if crashes > config.retry_budget:
        escalated = budget_escalation(
            history.task_id, f"{crashes} {end.role} sessions ended without a signal ({what})", config
        )
        return replace(escalated, events=(failed,))
    note = ("session.retry", f"task-{history.task_id}: {what}; retry {crashes}/{config.retry_budget}")
    # A resumable session continues; otherwise the next drive step starts a fresh one in the same state.
    then = (
        NextSession(end.role, kind="resume", resume_session=end.session_id, prompt=RESUME_AFTER_CRASH)
        if end.resumable
        else None
    )
    return Decision(None, events=(failed,), note=note, then=then)


AGENT_ACCOUNT = "agent-account"  # the escalation source of a session whose agent's account cannot work


def _account_escalation(task_id: str, end: SessionEnd) -> Decision:
    """The agent's account cannot work (not logged in, key refused, no credit): every session would end the same, so
    no retry is spent on it and no new task is dispatched; the human fixes the account, answers retry, resumes."""
    said = end.detail or str(end.account_error)
    body = Escalation(
        problem=f"task-{task_id}: the {end.role} agent cannot work: its CLI says {said!r} ({end.account_error})",
        impact="no new task is dispatched until it can; the tasks already running stop after their current step, and"
        " those whose agent fails the same way wait for this answer too (no escalation of their own)",
        options=["retry (once the agent can work again)", "skip the task", "abort the run"],
        recommended="log the agent CLI in (Claude Code: `claude`, then /login) or give it a valid ANTHROPIC_API_KEY "
        "(or CLAUDE_CODE_OAUTH_TOKEN) where pm-agent runs, then answer retry and run `pm-agent resume`",
    )
    return Decision(
        S.WAITING_FOR_HUMAN_INPUT,
        f"the agent cannot work: {said[:100]}",
        escalation=EscalationRequest(AGENT_ACCOUNT, body),
        abort=True,
    )


def held_by_account(task_id: str, state: IssueState, decision: Decision) -> Decision:
    """A session of another slot met the account problem already escalated: its events without a second escalation to
    answer; the task stays in `state`, and the run's resume after the one answer runs it again."""
    note = (
        "session.held",
        f"task-{task_id}: its agent cannot work either; it stays in {state.value} until the open agent-account "
        "escalation is answered and the run resumed",
    )
    held = ("session.held", {"state": state.value, "waits_on": AGENT_ACCOUNT})
    return Decision(None, events=(*decision.events, held), note=note, abort=True)


def _answer(state: IssueState, answer: Answer) -> Decision:
    """HUMAN_INPUT_RECEIVED / REQUIREMENTS_CLARIFIED: act on the human's answer."""
    esc, text = answer.escalation_id, answer.answer
    if answer.source == "needs-user-input" and answer.session_id is not None and not text.lower().startswith("skip"):
        back = S.ANALYZING_REQUIREMENTS if state is S.REQUIREMENTS_CLARIFIED else answer.asking_state
        asked = signal_payload(answer.asked) if answer.asked is not None else {}
        then = NextSession(
            answer.session_role, kind="resume", resume_session=answer.session_id, prompt=answer_prompt(asked, text)
        )
        reason = f"human answered escalation #{esc}; resuming the {answer.session_role}"
        return Decision(back, reason, applied_escalation=esc, then=then)
    word = text.strip().lower()
    if word.startswith(("skip", "abort")):
        reason = f"human chose to {word.split()[0]} (escalation #{esc})"
        return Decision(S.FAILED, reason, applied_escalation=esc, abort=word.startswith("abort"))
    if word.startswith("accept"):
        return Decision(S.CREATING_PR, f"human accepted (escalation #{esc})", applied_escalation=esc)
    if answer.source == "environment" and word.startswith("retry"):
        reason = f"human fixed the environment (escalation #{esc}): gates again"
        return Decision(S.RUNNING_TESTS, reason, applied_escalation=esc)
    if answer.source == AGENT_ACCOUNT and word.startswith("retry"):
        reason = f"the agent can work again (escalation #{esc}): a new session"
        return Decision(answer.asking_state, reason, applied_escalation=esc)
    guidance = text.split(":", 1)[1].strip() if word.startswith("retry") and ":" in text else text
    return Decision(
        S.FIXING_ISSUES,
        f"human chose retry with guidance (escalation #{esc})",
        {"retry_count": 0},
        fix=FixRequest(f"human guidance (escalation #{esc})", guidance),
        applied_escalation=esc,
    )
