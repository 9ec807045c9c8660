"""One task through its lifecycle: the loop that runs sessions and applies decisions.

Seed 003's single-state rule: `drive` looks at the stored state, asks that state's step (steps.py,
deliver_step.py, routing.py's triage) or agent what happens, and applies the one `Decision` that
comes back, then looks again, until the task ends or waits for a human. Where a session's signal
leads is pure (routing.py, over the workflow file's routes); doing happens here: `TaskFlow` runs
the agent sessions (recovering one a restart interrupted, refusing one whose result fails the
integrity checks) and is the only place a task moves, an escalation opens or a fix is requested.
Everything it decides from is in the store, so a restarted pm-agent continues from the same place.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from pm_agent.agents.session import (
    CONVERSATION_LOST,
    SessionResult,
    continuation_prompt,
    conversation_lost,
    lost_conversation_prompt,
    record_lost,
    resume_session,
)
from pm_agent.agents.session import start_session as run_session
from pm_agent.engine import integrity
from pm_agent.engine.agentslots import AgentSlots
from pm_agent.engine.decisions import Answer, Decision, FixRequest, NextSession, WorktreeCleanup
from pm_agent.engine.deliver_step import deliver_step
from pm_agent.engine.faults import fault_point
from pm_agent.engine.history import TaskHistory, typed_signal
from pm_agent.engine.prompt_builder import build_prompt, system_prompt
from pm_agent.engine.routing import AGENT_ACCOUNT, held_by_account, limit_reached, route, triage
from pm_agent.engine.runctx import RunContext
from pm_agent.engine.session_end import Step, recover
from pm_agent.engine.steps import apply_slices, planning_step, review_step, run_gates_step
from pm_agent.errors import AgentError, NotFoundError, TransitionError
from pm_agent.lifecycle import AGENT_ROLES, IssueState, resolve_role
from pm_agent.signals import CompleteSignal, NeedsUserInputSignal, signal_payload
from pm_agent.store import EscalationStatus, SessionRecord, TaskRecord

S = IssueState
StepFn = Callable[[RunContext, TaskRecord, TaskHistory], Awaitable[Decision]]


async def _triage(rc: RunContext, rec: TaskRecord, history: TaskHistory) -> Decision:
    return triage(rec.task())


# The states pm-agent itself works in, and the step that does it (agent states run their owner's session).
STEPS: dict[IssueState, StepFn] = {
    S.RECEIVED: _triage,
    S.PLANNING_APPROACH: planning_step,
    S.RUNNING_TESTS: run_gates_step,
    S.REVIEWING_CODE: review_step,
    S.CREATING_PR: deliver_step,
}
ANSWERED = (S.HUMAN_INPUT_RECEIVED, S.REQUIREMENTS_CLARIFIED)
# Where pm-agent checks what an agent did: a task dispatched (or resumed) into one gives its agent slot back.
CHECKS = frozenset({S.RUNNING_TESTS, S.REVIEWING_CODE, S.CREATING_PR})
HANDOVER_REASONS = {
    S.REQUIREMENTS_UNCLEAR: "the PM asks the human",
    S.BLOCKED: "blocked on an external dependency",
}


class _Refused(Exception):
    """A session's result was refused for an integrity failure; the task was already moved or held."""


class TaskFlow:
    """Drives one task: asks its state's step or agent what happens and applies the decision.

    One instance per task per dispatch. The only caller of `RunContext.move`, `RunContext.open_escalation`
    and `request_fix` on a task's path. With `slots`, each agent session holds one of the loop's agent slots
    from its start to its process's end (agentslots.py)."""

    def __init__(
        self, rc: RunContext, task_id: str, *, defer_cleanup: bool = False, slots: AgentSlots | None = None
    ) -> None:
        self.rc = rc
        self.task_id = task_id
        self.slots = slots
        self.on_exit = partial(slots.release, task_id) if slots is not None else None
        self.history = rc.history(task_id)
        # The loop defers worktree removal until it has refilled the slot; `cleanups` is what is left to do.
        self.defer_cleanup = defer_cleanup
        self.cleanups: list[WorktreeCleanup] = []

    def record(self) -> TaskRecord:
        """The task as stored now."""
        return self.rc.store.get_task(self.rc.run_id, self.task_id)

    async def drive(self) -> TaskRecord:
        """Act in the current state and transition, until the task ends or waits for a human."""
        rec = await self._drive()
        while self.cleanups and not self.defer_cleanup:
            await asyncio.to_thread(remove_worktree, self.rc, self.cleanups.pop(0))
        return rec

    async def _drive(self) -> TaskRecord:
        guard = 4 * self.rc.config.max_iterations + 20  # every step transitions; this is a backstop
        # The task as the last decision's writes read it back: nothing writes a task in flight between those writes
        # and the next look (the store watch skips it while it is written, answers and plan edits skip tasks in
        # flight), so that record is what a fresh read gives, without another worker-thread trip.
        known: TaskRecord | None = None
        for _ in range(guard):
            rec = known if known is not None else await asyncio.to_thread(self.record)
            known = None
            state = S(rec.state)
            if self.rc.workflow.is_terminal(state) or self.rc.workflow.is_waiting(state) or self.rc.aborted:
                return rec
            if not self._dependencies_done(rec):
                return rec  # sliced: the subtasks run first, the loop brings this task back after them
            if state in CHECKS and self.slots is not None:
                self.slots.release(self.task_id)  # pm-agent's own work: another task's agent starts meanwhile
            stop = limit_reached(rec.task_id, state, self.rc.context_of(rec), self.rc.config, self.rc.workflow)
            try:
                known = await self.apply(state, stop if stop is not None else await self.decide(rec, state))
            except _Refused:
                continue  # escalated (or the run stopped): the next look at the state says what follows
        raise AgentError(f"task-{self.task_id} made no progress in {guard} steps")

    def _dependencies_done(self, rec: TaskRecord) -> bool:
        store, run_id = self.rc.store, self.rc.run_id
        try:
            return all(S(store.get_task(run_id, dep).state) is S.COMPLETED for dep in rec.task().dependency_ids())
        except NotFoundError:
            return False

    async def decide(self, rec: TaskRecord, state: IssueState) -> Decision:
        """What the owner of `state` does once: a step's decision, an answer's, or an agent session to run."""
        step = STEPS.get(state)
        if step is not None:
            return await step(self.rc, rec, self.history)
        if state in ANSWERED:
            return route(state, self._answer(rec, state), self.history, self.rc.config, self.rc.workflow)
        owner = self.rc.workflow.owner(state)
        if owner is not None and resolve_role(owner) in AGENT_ROLES:
            return Decision(None, then=NextSession(owner))
        handover = self.rc.workflow.on_complete(state)
        if owner is not None and handover is not None:  # a PM state that hands the task to a human
            return Decision(handover, HANDOVER_REASONS.get(state, f"the PM moves on from {state.value}"))
        raise TransitionError(f"task-{rec.task_id}: no handler for state {state.value}")

    async def apply(self, state: IssueState, decision: Decision, step: Step | None = None) -> TaskRecord:
        """Store what `decision` says, in order, then run the session it asks for and apply what follows; the task
        as the last decision's writes read it back."""
        rc, d = self.rc, decision
        if d.escalation is not None and d.escalation.source == AGENT_ACCOUNT:
            if rc.account_escalated:  # one escalation says it for every slot
                d = held_by_account(self.task_id, state, d)
            rc.account_escalated = True
        rc.aborted = rc.aborted or d.abort
        if d.escalation is None:
            # The usual decision's writes (each transaction waits for its fsync) run on a worker thread, so
            # the other slots go on meanwhile; the listeners hear of the move here, on the loop's thread.
            rec, moved = await rc.write(self.task_id, self._store, d, step)
        else:  # opening an escalation tells the listeners: on the loop's thread, as every emit
            rec, moved = self._store(d, step)
        if moved is not None and d.target is not None:
            rc.moved(self.task_id, moved, d.target, d.reason)
        if d.note is not None:
            rc.emit(*d.note)
        if d.cleanup is not None:
            self.cleanups.append(d.cleanup)
        if d.then is None:
            return rec
        now = d.target or state
        ran = await self.session(rec, d.then)
        signal = typed_signal(ran.signal) if ran.signal is not None else None
        if d.then.slices and isinstance(signal, CompleteSignal):
            following = apply_slices(rc, self.record(), signal)
        else:
            following = route(now, ran.end(), self.history, rc.config, rc.workflow)
        return await self.apply(now, following, ran)

    def _store(self, d: Decision, step: Step | None) -> tuple[TaskRecord, IssueState | None]:
        """The decision's writes, in order; the task's record, and the state it left if it moved."""
        rc = self.rc
        if d.applied_escalation is not None:
            rc.store.mark_escalation_applied(d.applied_escalation)
        # The usual decision (events, the signal it acted on, a move) is one transaction, one fsync: each of its
        # writes used to be one. With a fix or an escalation between them, each is written in its own, in order.
        joined = d.target is not None and d.fix is None and d.escalation is None
        consumed = step.signal.id if d.consume and step is not None and step.signal is not None else None
        if not joined:
            for kind, payload in d.events:
                rc.store.append_event(rc.run_id, kind, dict(payload), task_id=self.task_id)
        if d.fix is not None:
            self.request_fix(d.fix)
        if d.escalation is not None:
            e = d.escalation
            rc.open_escalation(self.task_id, e.source, e.body, session_id=e.session_id, context=e.context)
        if consumed is not None and not joined:
            rc.store.mark_signal_consumed(consumed)
        rec = self.record()
        if d.target is None:
            return rec, None
        if joined:
            moved = rc.store_move(rec, d.target, d.reason, events=d.events, consumed=consumed, **d.fields)
        else:
            moved = rc.store_move(rec, d.target, d.reason, **d.fields)
        if d.target is S.CREATING_PR:
            entries = [t for t in rc.store.transitions(rc.run_id, self.task_id) if t.to_state == S.CREATING_PR.value]
            if len(entries) == 1:
                rc.first_deliveries.add(self.task_id)
        return moved

    def _answer(self, rec: TaskRecord, state: IssueState) -> Answer:
        """The task's latest answered escalation, with the session that asked."""
        store = self.rc.store
        answered = [
            e
            for e in store.list_escalations(self.rc.run_id)
            if e.task_id == rec.task_id and e.status is EscalationStatus.ANSWERED
        ]
        if not answered:
            raise TransitionError(f"task-{rec.task_id} is in {state.value} with no answered escalation")
        esc = answered[-1]
        ctx = self.rc.context_of(rec)
        role, asked = "", None
        if esc.session_id is not None:
            role = store.get_session(esc.session_id).role
            signal = self.history.session_signal(esc.session_id, "needs-user-input")
            asked = signal if isinstance(signal, NeedsUserInputSignal) else None
        return Answer(
            escalation_id=esc.id,
            source=esc.source,
            answer=esc.answer or "",
            session_id=esc.session_id,
            session_role=role,
            asked=asked,
            asking_state=ctx.previous_states[-2] if len(ctx.previous_states) >= 2 else S.IMPLEMENTING,
        )

    # ------------------------------------------------------------------ sessions

    async def session(self, rec: TaskRecord, nxt: NextSession) -> Step:
        """Run the session `nxt` asks for; an "agent" turn first reuses a stored signal or an interrupted session."""
        role, rc = nxt.role, self.rc
        resume: tuple[SessionRecord, str] | None = None
        fresh_prompt: str | None = None
        if nxt.kind == "agent":
            # A task never dispatched (attempt 0) has no session to recover: no worker-thread trip to find none.
            recovered = await asyncio.to_thread(recover, rc.store, rc.run_id, rec, role) if rec.attempt else None
            if isinstance(recovered, Step):
                return recovered
            resume = recovered
        elif nxt.kind == "resume" and nxt.resume_session is not None:
            resume = (rc.store.get_session(nxt.resume_session), nxt.prompt)
        elif nxt.continuation is not None:
            base = build_prompt(rc, rec, role, self.history)
            fresh_prompt = continuation_prompt(base, signal_payload(nxt.continuation))
        if self.slots is not None and await self._take_slot(self.slots, role) and rc.aborted:
            self.slots.release(self.task_id)
            raise _Refused("the run stopped while the task waited for an agent slot")
        incidents = rc.watch.incidents  # store findings made while this session runs refuse its result too
        if resume is not None:
            previous, prompt = resume
            rc.emit("session.resumed", f"task-{rec.task_id}: {role} continues session {previous.id}")
            result = await resume_session(
                rc.host,
                previous,
                prompt,
                system_prompt=system_prompt(rc, rec, role, previous.attempt),
                on_exit=self.on_exit,
            )
            if conversation_lost(result):  # nothing to continue: once, a fresh session told so
                result = await self._lost(rec, role, previous, result, prompt)
        else:
            attempt = rec.attempt + 1
            fields: dict[str, Any] = {"attempt": attempt}
            if rec.started_at is None:
                fields["started_at"] = datetime.now(UTC)
            rec = rc.store.update_task(rc.run_id, rec.task_id, event="task.dispatched", **fields)
            workdir = rc.worktree_path(rec.task_id)
            prompt = fresh_prompt or build_prompt(rc, rec, role, self.history)
            rc.emit("session.started", f"task-{rec.task_id}: {role} (attempt {attempt}) in {workdir}")
            result = await run_session(
                rc.host,
                run_id=rc.run_id,
                task_id=rec.task_id,
                role=role,
                prompt=prompt,
                workdir=workdir,
                attempt=attempt,
                system_prompt=system_prompt(rc, rec, role, attempt),
                on_exit=self.on_exit,
            )
        detail = result.outcome.error or ""
        kind = result.signal.kind if result.signal else "no signal"
        spent = f"${result.outcome.cost_usd:.4f}, {result.outcome.num_turns or 0} turns"
        rc.emit(
            "session.ended",
            f"task-{rec.task_id}: {role} session {result.record.id} → {result.status.value} ({kind}; {spent})"
            + (f": {detail}" if detail else ""),
        )
        account = result.outcome.account_error
        step = Step(self.rc.store.get_session(result.record.id), result.signal, result.status, detail, account)
        self._integrity(role, result, step, incidents)
        fault_point("after-signal")
        return step

    async def _take_slot(self, slots: AgentSlots, role: str) -> bool:
        """An agent slot for the task's next session, said on the console if it must wait; whether it waited."""
        if slots.must_wait(self.task_id):
            holders = ", ".join(sorted(f"task-{t}" for t in slots.holders))
            self.rc.emit("slots", f"task-{self.task_id}: its {role} waits for a free slot (slots: {holders})")
        return await slots.acquire(self.task_id)

    async def _lost(
        self, rec: TaskRecord, role: str, previous: SessionRecord, failed: SessionResult, message: str
    ) -> SessionResult:
        """The conversation `previous` had is gone: a fresh session, same attempt and worktree, with the new
        attempt's prompt, the line that says so, and the message it was to get."""
        rc = self.rc
        rc.emit(CONVERSATION_LOST, await asyncio.to_thread(record_lost, rc.store, previous, failed))
        prompt = lost_conversation_prompt(build_prompt(rc, rec, role, self.history), message)
        if self.slots is not None:
            await self._take_slot(self.slots, role)
        return await run_session(
            rc.host, run_id=rc.run_id, task_id=rec.task_id, role=role, prompt=prompt,
            workdir=Path(previous.workdir), attempt=previous.attempt,
            system_prompt=system_prompt(rc, rec, role, previous.attempt), on_exit=self.on_exit,
        )  # fmt: skip

    def _integrity(self, role: str, result: SessionResult, step: Step, incidents: int) -> None:
        """Refuse the session's result if the store or the main checkout changed from outside pm-agent."""
        rc = self.rc
        findings = integrity.check_run(rc)
        escaped = integrity.escape_problem(result)
        if not findings and escaped is None and rc.watch.incidents == incidents:
            return
        self.consume(step)
        if findings:
            integrity.handle_findings(rc, findings)
        if escaped is not None:
            rec = self.record()
            body = integrity.escape_escalation(rec.task_id, role, step.session.id, escaped)
            rc.emit("integrity.checkout", body.problem)
            rc.open_escalation(rec.task_id, integrity.CHECKOUT_GUARD, body, session_id=step.session.id)
            hold = integrity.hold_state(rc.workflow, S(rec.state))
            rc.move(rec, hold, f"{integrity.CHECKOUT_GUARD}: result refused")
        raise _Refused(escaped or "; ".join(f.problem for f in findings) or "the store changed while it ran")

    def consume(self, step: Step) -> None:
        """Mark the step's signal as handled."""
        if step.signal is not None:
            self.rc.store.mark_signal_consumed(step.signal.id)

    def request_fix(self, fix: FixRequest) -> None:
        """Record what the fixer must fix (its prompt reads the latest one)."""
        payload: dict[str, Any] = {"source": fix.source, "evidence": fix.evidence}
        self.rc.store.append_event(self.rc.run_id, "fix.requested", payload, task_id=self.task_id)


def remove_worktree(rc: RunContext, cleanup: WorktreeCleanup) -> None:
    """Remove a finished task's worktree (and its branch unless kept); best effort."""
    try:
        rc.git.worktree_remove(cleanup.worktree, force=True)
        if not cleanup.keep_branch:
            rc.git.delete_branch(cleanup.branch)
    except Exception:  # cleanup is best effort; a leftover worktree is harmless and listed by git
        return
