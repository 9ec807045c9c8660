"""One task through its lifecycle: each state's owner acts, the PM decides the one next state.

Seed 003's single-state rule: `drive` looks at the stored state, lets that state's owner act
(an agent session, pm-agent's gates, or the PM's own decision) and makes exactly one transition,
then looks again, until the task ends or waits for a human. Everything it decides from is in
the store, so a restarted pm-agent continues from the same place.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pm_agent.agents.session import (
    SessionResult,
    answer_prompt,
    continuation_prompt,
    followup_done_prompt,
    resume_session,
)
from pm_agent.agents.session import start_session as run_session
from pm_agent.engine import integrity, review_step
from pm_agent.engine.faults import fault_point
from pm_agent.engine.prompting import build_prompt, latest_report, system_prompt
from pm_agent.engine.runctx import RunContext
from pm_agent.engine.slicing import parse_slices, slice_task
from pm_agent.engine.stopping import ended_by_stop
from pm_agent.errors import AgentError, TransitionError
from pm_agent.gates import GateResult
from pm_agent.lifecycle import IssueState, resolve_role
from pm_agent.reports.escalation import Escalation
from pm_agent.store import SessionRecord, SessionStatus, SignalRecord, TaskRecord

S = IssueState
AGENT_STATES = frozenset(
    {
        S.ANALYZING_REQUIREMENTS,
        S.CREATING_TESTS,
        S.UPDATING_TESTS,
        S.IMPLEMENTING,
        S.FIXING_ISSUES,
        S.REFACTORING,
        S.VALIDATING_SOLUTION,
        S.ADDRESSING_FEEDBACK,
    }
)
# Where a finished (complete) agent state goes next: every change is checked by the gates first.
AFTER_COMPLETE = {
    S.CREATING_TESTS: S.IMPLEMENTING,
    S.UPDATING_TESTS: S.RUNNING_TESTS,
    S.IMPLEMENTING: S.RUNNING_TESTS,
    S.FIXING_ISSUES: S.RUNNING_TESTS,
    S.REFACTORING: S.RUNNING_TESTS,
    S.ADDRESSING_FEEDBACK: S.RUNNING_TESTS,
    S.VALIDATING_SOLUTION: S.REVIEWING_CODE,
    S.REVIEWING_CODE: S.CREATING_PR,
}
# needs-role-followup: the states a target role may be sent to, most specific first.
FOLLOWUP_STATES = {
    "fixer": (S.FIXING_ISSUES,),
    "developer": (S.ADDRESSING_FEEDBACK, S.IMPLEMENTING),
    "planner": (S.PLANNING_APPROACH,),
    "tester": (S.UPDATING_TESTS, S.VALIDATING_SOLUTION, S.CREATING_TESTS),
    "reviewer": (S.REVIEWING_CODE,),
    "analyst": (S.ANALYZING_REQUIREMENTS,),
}
WAITING = (S.WAITING_FOR_HUMAN_INPUT, S.WAITING_FOR_REQUIREMENTS_CLARIFICATION)


class _Refused(Exception):
    """A session's result was refused for an integrity failure; the task was already moved or held."""


@dataclass(frozen=True)
class Step:
    """How one agent session ended, as far as the PM cares."""

    session: SessionRecord
    signal: SignalRecord | None
    status: SessionStatus
    detail: str = ""


class TaskFlow:
    """Drives one task; one instance per task per slot."""

    def __init__(self, rc: RunContext, task_id: str) -> None:
        self.rc = rc
        self.task_id = task_id

    # ------------------------------------------------------------------ main loop

    def record(self) -> TaskRecord:
        """The task as stored now."""
        return self.rc.store.get_task(self.rc.run_id, self.task_id)

    async def drive(self) -> TaskRecord:
        """Act in the current state and transition, until the task ends or waits for a human."""
        guard = 4 * self.rc.config.max_iterations + 20  # every step transitions; this is a backstop
        for _ in range(guard):
            rec = await asyncio.to_thread(self.record)
            state = S(rec.state)
            if self.rc.workflow.is_terminal(state) or self.rc.workflow.is_waiting(state) or self.rc.aborted:
                return rec
            if not self._dependencies_done(rec):
                return rec  # sliced: the subtasks run first, the loop brings this task back after them
            if self._exhausted(rec, state):
                continue
            try:
                await self.act(rec, state)
            except _Refused:
                continue  # escalated (or the run stopped): the next look at the state says what follows
        raise AgentError(f"task-{self.task_id} made no progress in {guard} steps")

    def _dependencies_done(self, rec: TaskRecord) -> bool:
        done = {t.task_id for t in self.rc.store.list_tasks(self.rc.run_id) if t.state == S.COMPLETED.value}
        return all(dep in done for dep in rec.task().dependency_ids())

    def _exhausted(self, rec: TaskRecord, state: IssueState) -> bool:
        """Seed 003's loop detection and iteration limit end in REQUIRES_HUMAN_INTERVENTION."""
        ctx = self.rc.context_of(rec)
        window = max(3, 2 * self.rc.config.retry_budget + 2)
        why = ""
        if ctx.iterations_exhausted:
            why = f"{ctx.iteration_count} transitions reached max_iterations ({ctx.max_iterations})"
        elif ctx.is_in_loop(window):
            why = f"loop detected in the last {window} states: " + ", ".join(
                s.value for s in ctx.previous_states[-window:]
            )
        if not why or state in (S.CREATING_PR,) or not self.rc.workflow.is_valid(state, S.REQUIRES_HUMAN_INTERVENTION):
            return False
        self.open_escalation(
            rec,
            source="loop-detection",
            problem=f"task-{rec.task_id} is not converging: {why}",
            impact="the task stops; tasks that depend on it stay blocked",
            options=["retry with guidance (new run of the task)", "skip the task", "abort the run"],
            recommended="read `pm-agent log` for the task, then retry with guidance",
        )
        self.rc.move(rec, S.REQUIRES_HUMAN_INTERVENTION, why)
        return True

    async def act(self, rec: TaskRecord, state: IssueState) -> None:
        """Let the owner of `state` act once and make the one transition that follows."""
        if state is S.RECEIVED:
            await self._received(rec)
        elif state is S.PLANNING_APPROACH:
            await self._planning(rec)
        elif state is S.RUNNING_TESTS:
            await review_step.run_gates_step(self, rec)
        elif state is S.REVIEWING_CODE:
            await review_step.review_step(self, rec)
        elif state is S.CREATING_PR:
            await review_step.deliver_step(self, rec)
        elif state in (S.HUMAN_INPUT_RECEIVED, S.REQUIREMENTS_CLARIFIED):
            await self._apply_answer(rec, state)
        elif state is S.REQUIREMENTS_UNCLEAR:
            self.rc.move(rec, S.WAITING_FOR_REQUIREMENTS_CLARIFICATION, "the PM asks the human")
        elif state is S.BLOCKED:
            self.rc.move(rec, S.WAITING_FOR_HUMAN_INPUT, "blocked on an external dependency")
        elif state in AGENT_STATES:
            await self.agent_state(rec, state)
        else:
            raise TransitionError(f"task-{rec.task_id}: no handler for state {state.value}")

    # ------------------------------------------------------------------ PM states

    async def _received(self, rec: TaskRecord) -> None:
        task = rec.task()
        if task.presence.value == "EXISTS":
            self.rc.move(rec, S.COMPLETED, f"triage: EXISTS ({task.presence_reason}); no agent dispatched")
            return
        self.rc.move(rec, S.PLANNING_APPROACH, f"triage: {task.presence.value}; the PM plans the approach")

    async def _planning(self, rec: TaskRecord) -> None:
        task = rec.task()
        vague = not task.acceptance_criteria and not task.steps and not task.expected_files.all_paths()
        if vague and not latest_report(self, ("analyst",)):
            self.rc.move(rec, S.ANALYZING_REQUIREMENTS, "no criteria, steps or files: requirements need analysis")
            return
        files = task.expected_files.all_paths()
        limit = self.rc.config.patch_size_limit_files
        sliced = self.events("task.sliced")
        if len(files) > limit and not sliced:
            step = await self.session(rec, "planner", S.PLANNING_APPROACH)
            if step.signal is not None and step.signal.kind == "complete":
                summary = str(step.signal.payload.get("summary", ""))
                self.rc.store.append_event(
                    self.rc.run_id, "task.sliced", {"slices": summary, "files": len(files)}, task_id=rec.task_id
                )
                self.consume(step)
                pieces = parse_slices(summary)
                if pieces is not None:
                    subtasks, narrowed = slice_task(task, pieces)
                    self.rc.store.add_tasks(self.rc.run_id, subtasks, reason=f"{task.ref} sliced by the planner")
                    self.rc.store.update_task(
                        self.rc.run_id,
                        rec.task_id,
                        event="task.narrowed",
                        contract=narrowed.model_dump(mode="json"),
                        decision_log=narrowed.decision_log,
                    )
                    self.rc.emit(
                        "task.sliced",
                        f"task-{rec.task_id}: {len(files)} files > {limit}; subtasks "
                        + ", ".join(t.ref for t in subtasks)
                        + " first, then this task keeps the last slice",
                    )
                    return  # the task waits in planning_approach for its subtasks (see drive)
                rec = self.record()
                self.rc.move(rec, S.IMPLEMENTING, f"{len(files)} files > {limit}: slices given to one developer")
                return
            await self.route(rec, S.PLANNING_APPROACH, step)
            return
        self.rc.move(rec, S.IMPLEMENTING, f"approach: one developer session for {len(files)} expected files")

    # ------------------------------------------------------------------ agent states

    async def agent_state(self, rec: TaskRecord, state: IssueState) -> None:
        """Run (or recover) the session of the state's role and route on how it ended."""
        role = self.rc.workflow.owner(state)
        if role is None:
            raise TransitionError(f"state {state.value} has no owner")
        step = await self.session(rec, str(role), state)
        await self.route(self.record(), state, step)

    async def session(
        self,
        rec: TaskRecord,
        role: str,
        state: IssueState,
        *,
        resume: tuple[SessionRecord, str] | None = None,
        fresh_prompt: str | None = None,
    ) -> Step:
        """The session for this role and attempt: a stored signal if there is one, else run one."""
        if resume is None and fresh_prompt is None:
            recovered = await asyncio.to_thread(self._recover, rec, role, state)
            if isinstance(recovered, Step):
                return recovered
            resume = recovered
        rc = self.rc
        incidents = rc.watch.incidents  # store findings made while this session runs refuse its result too
        if resume is not None:
            previous, prompt = resume
            rc.emit("session.resumed", f"task-{rec.task_id}: {role} continues session {previous.id}")
            result = await resume_session(
                rc.host, previous, prompt, system_prompt=system_prompt(rc, rec, role, previous.attempt)
            )
        else:
            attempt = rec.attempt + 1
            fields: dict[str, Any] = {"attempt": attempt}
            if rec.started_at is None:
                fields["started_at"] = datetime.now(UTC)
            rec = rc.store.update_task(rc.run_id, rec.task_id, event="task.dispatched", **fields)
            workdir = rc.worktree_path(rec.task_id)
            prompt = fresh_prompt or build_prompt(rc, rec, role, state, self)
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
            )
        detail = result.outcome.error or ""
        kind = result.signal.kind if result.signal else "no signal"
        spent = f"${result.outcome.cost_usd:.4f}, {result.outcome.num_turns or 0} turns"
        rc.emit(
            "session.ended",
            f"task-{rec.task_id}: {role} session {result.record.id} → {result.status.value} ({kind}; {spent})"
            + (f": {detail}" if detail else ""),
        )
        step = Step(self.rc.store.get_session(result.record.id), result.signal, result.status, detail)
        self._integrity(role, result, step, incidents)
        fault_point("after-signal")
        return step

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
            rc.move(rec, integrity.hold_state(rc.workflow, S(rec.state)), f"{integrity.CHECKOUT_GUARD}: result refused")
        raise _Refused(escaped or "; ".join(f.problem for f in findings) or "the store changed while it ran")

    def _recover(self, rec: TaskRecord, role: str, state: IssueState) -> Step | tuple[SessionRecord, str] | None:
        """After a restart: reuse a stored signal, or resume a session pm-agent's death interrupted."""
        store = self.rc.store
        mine = [
            s for s in store.list_sessions(self.rc.run_id, rec.task_id) if s.role == role and s.attempt == rec.attempt
        ]
        if not mine or rec.attempt == 0:
            return None
        last = mine[-1]
        signal = next((g for g in store.signals_for_session(last.id) if g.accepted and not g.consumed), None)
        if signal is not None:
            if last.status in (SessionStatus.STARTING, SessionStatus.RUNNING):
                # pm-agent died between the signal being stored and the monitor closing the session.
                last = store.update_session(last.id, status=SessionStatus.SIGNALLED, ended_at=datetime.now(UTC))
            return Step(last, signal, last.status, "recovered from the store")
        interrupted = last.status in (SessionStatus.STARTING, SessionStatus.RUNNING)
        if interrupted:
            store.update_session(last.id, status=SessionStatus.KILLED, ended_at=datetime.now(UTC))
        # A SIGINT/SIGTERM stop interrupts a session as a crash does: both are resumed.
        if last.agent_session_id and (interrupted or ended_by_stop(store, last)):
            prompt = (
                "pm-agent restarted while you were working. Check the state of the files, finish the "
                "task, and call signal_back exactly once."
            )
            return (store.get_session(last.id), prompt)
        return None

    def consume(self, step: Step) -> None:
        """Mark the step's signal as handled."""
        if step.signal is not None:
            self.rc.store.mark_signal_consumed(step.signal.id)

    async def route(self, rec: TaskRecord, state: IssueState, step: Step) -> None:
        """Seed 004's routing on a session's signal (or on its absence)."""
        signal = step.signal
        if signal is None:
            await self._no_signal(rec, state, step)
            return
        payload = signal.payload
        if signal.kind == "complete":
            await self._complete(rec, state, step)
        elif signal.kind == "partially-complete":
            self.consume(step)
            done = self._since_state_entry(rec, "partially-complete")
            limit = self.rc.config.max_continuations
            if done > limit:
                why = f"{done} partially-complete sessions in {state.value}"
                hit = f"continuation limit of {limit} (max_continuations) reached"
                self._budget_escalation(rec, why, step, limit=hit)
                return
            base = build_prompt(self.rc, rec, step.session.role, state, self)
            self.rc.emit("session.continuation", f"task-{rec.task_id}: a fresh {step.session.role} session continues")
            fresh = await self.session(rec, step.session.role, state, fresh_prompt=continuation_prompt(base, payload))
            await self.route(self.record(), state, fresh)
        elif signal.kind == "needs-user-input":
            question = str(payload.get("question", ""))
            target = S.REQUIREMENTS_UNCLEAR if state is S.ANALYZING_REQUIREMENTS else S.WAITING_FOR_HUMAN_INPUT
            self.open_escalation(
                rec,
                source="needs-user-input",
                problem=f"the {step.session.role} on task-{rec.task_id} asks: {question}",
                impact=f"task-{rec.task_id} and the tasks that depend on it wait; other slots keep working",
                options=[
                    "answer the question (the agent resumes its session with your answer)",
                    "skip the task",
                ],
                recommended="answer the question",
                session_id=step.session.id,
                context=str(payload.get("context", "")),
            )
            self.consume(step)
            self.rc.move(rec, target, "needs-user-input: escalated to the human")
        elif signal.kind == "needs-role-followup":
            await self._followup(rec, state, step)

    async def _complete(self, rec: TaskRecord, state: IssueState, step: Step) -> None:
        payload = step.signal.payload if step.signal else {}
        pending = self.pending_followup()
        if pending is not None and state is not S(pending["return_state"]):
            asker = self.rc.store.get_session(int(pending["session_id"]))
            back = S(pending["return_state"])
            self.rc.store.append_event(
                self.rc.run_id, "followup.resolved", {"session_id": asker.id}, task_id=rec.task_id
            )
            self.consume(step)
            rec = self.rc.move(rec, back, f"{step.session.role} finished; resuming the asking {asker.role}")
            summary = str(payload.get("summary", ""))
            asker_signal = next(
                (g for g in self.rc.store.signals_for_session(asker.id) if g.kind == "needs-role-followup"), None
            )
            prompt = followup_done_prompt(asker_signal.payload if asker_signal else {}, None, summary)
            resumed = await self.session(rec, asker.role, back, resume=(asker, prompt))
            await self.route(self.record(), back, resumed)
            return
        if state is S.ANALYZING_REQUIREMENTS:
            confident = str(payload.get("selfAssessment", "confident")) == "confident"
            self.consume(step)
            if confident:
                self.rc.move(rec, S.PLANNING_APPROACH, "analyst: requirements clear")
            else:
                self.rc.move(rec, S.REQUIREMENTS_UNCLEAR, "analyst is not confident the requirements are clear")
            return
        nxt = AFTER_COMPLETE.get(state, S.RUNNING_TESTS)
        self.consume(step)
        self.rc.move(rec, nxt, f"{step.session.role} signalled complete; pm-agent checks it")

    async def _followup(self, rec: TaskRecord, state: IssueState, step: Step) -> None:
        payload = step.signal.payload if step.signal else {}
        target_role = resolve_role(str(payload.get("targetRole", "fixer"))).value
        reason = str(payload.get("reason", ""))
        targets = [t for t in FOLLOWUP_STATES.get(target_role, ()) if self.rc.workflow.is_valid(state, t)]
        if not targets:
            self.open_escalation(
                rec,
                source="needs-role-followup",
                problem=f"the {step.session.role} asked for {target_role}, which cannot follow {state.value}",
                impact=f"task-{rec.task_id} waits",
                options=["retry with guidance", "skip the task"],
                recommended="retry with guidance",
            )
            self.consume(step)
            self.rc.move(rec, S.WAITING_FOR_HUMAN_INPUT, f"followup to {target_role} not allowed here")
            return
        target = targets[0]
        if target is S.FIXING_ISSUES:
            if rec.retry_count >= self.rc.config.retry_budget:
                self._budget_escalation(rec, f"{step.session.role} found issues: {reason}", step)
                return
            self.request_fix(rec, f"{step.session.role} ({state.value}) found issues", reason, payload)
            self.consume(step)
            self.rc.move(rec, target, f"{step.session.role} asked for the fixer", retry_count=rec.retry_count + 1)
            return
        if bool(payload.get("resume", False)):
            self.rc.store.append_event(
                self.rc.run_id,
                "followup.pending",
                {"session_id": step.session.id, "return_state": state.value, "target": target_role},
                task_id=rec.task_id,
            )
        self.request_fix(rec, f"{step.session.role} asked for the {target_role}", reason, payload)
        self.consume(step)
        self.rc.move(rec, target, f"needs-role-followup → {target_role}: {reason[:80]}")

    async def _no_signal(self, rec: TaskRecord, state: IssueState, step: Step) -> None:
        """Seed 004: a process that ends without a signal crashed; retry within the budget, then escalate."""
        crashes = self._since_state_entry(rec, None)
        what = f"{step.status.value}: {step.detail or 'exited without calling signal_back'}"
        self.rc.store.append_event(
            self.rc.run_id,
            "session.failed",
            {"session_id": step.session.id, "status": step.status.value, "last_lines": step.session.last_lines[-2000:]},
            task_id=rec.task_id,
        )
        if crashes > self.rc.config.retry_budget:
            self._budget_escalation(
                rec, f"{crashes} {step.session.role} sessions ended without a signal ({what})", step
            )
            return
        self.rc.emit("session.retry", f"task-{rec.task_id}: {what}; retry {crashes}/{self.rc.config.retry_budget}")
        if step.status is not SessionStatus.STUCK and step.session.agent_session_id:
            prompt = "Your last run ended without calling signal_back. Finish the task and call it exactly once."
            resumed = await self.session(rec, step.session.role, state, resume=(step.session, prompt))
            await self.route(self.record(), state, resumed)
        # else: the next `drive` step starts a fresh session (a new attempt) in the same state.

    def _since_state_entry(self, rec: TaskRecord, kind: str | None) -> int:
        """Sessions since the task entered its state that ended with `kind` (None: without a signal)."""
        transitions = self.rc.store.transitions(self.rc.run_id, rec.task_id)
        since = transitions[-1].created_at if transitions else None
        count = 0
        for s in self.rc.store.list_sessions(self.rc.run_id, rec.task_id):
            if since is not None and s.started_at < since:
                continue
            kinds = {g.kind for g in self.rc.store.signals_for_session(s.id) if g.accepted}
            live = s.status in (SessionStatus.STARTING, SessionStatus.RUNNING)
            count += (kind in kinds) if kind is not None else (not kinds and not live)
        return count

    # ------------------------------------------------------------------ humans

    async def _apply_answer(self, rec: TaskRecord, state: IssueState) -> None:
        store = self.rc.store
        answered = [
            e
            for e in store.list_escalations(self.rc.run_id)
            if e.task_id == rec.task_id and e.status.value == "answered"
        ]
        if not answered:
            raise TransitionError(f"task-{rec.task_id} is in {state.value} with no answered escalation")
        esc = answered[-1]
        answer = esc.answer or ""
        ctx = self.rc.context_of(rec)
        asking = ctx.previous_states[-2] if len(ctx.previous_states) >= 2 else S.IMPLEMENTING
        if esc.source == "needs-user-input" and esc.session_id is not None and not answer.lower().startswith("skip"):
            session = store.get_session(esc.session_id)
            back = S.ANALYZING_REQUIREMENTS if state is S.REQUIREMENTS_CLARIFIED else asking
            store.mark_escalation_applied(esc.id)
            rec = self.rc.move(rec, back, f"human answered escalation #{esc.id}; resuming the {session.role}")
            signal = next((g for g in store.signals_for_session(session.id) if g.kind == "needs-user-input"), None)
            step = await self.session(
                rec, session.role, back, resume=(session, answer_prompt(signal.payload if signal else {}, answer))
            )
            await self.route(self.record(), back, step)
            return
        store.mark_escalation_applied(esc.id)
        word = answer.strip().lower()
        if word.startswith(("skip", "abort")):
            if word.startswith("abort"):
                self.rc.aborted = True
            self.rc.move(rec, S.FAILED, f"human chose to {word.split()[0]} (escalation #{esc.id})")
            return
        if word.startswith("accept"):
            self.rc.move(rec, S.CREATING_PR, f"human accepted (escalation #{esc.id})")
            return
        if esc.source == "environment" and word.startswith("retry"):
            self.rc.move(rec, S.RUNNING_TESTS, f"human fixed the environment (escalation #{esc.id}): gates again")
            return
        guidance = answer.split(":", 1)[1].strip() if word.startswith("retry") and ":" in answer else answer
        self.request_fix(rec, f"human guidance (escalation #{esc.id})", guidance, {})
        self.rc.move(rec, S.FIXING_ISSUES, f"human chose retry with guidance (escalation #{esc.id})", retry_count=0)

    def open_escalation(
        self,
        rec: TaskRecord | None,
        *,
        source: str,
        problem: str,
        impact: str,
        options: list[str],
        recommended: str,
        session_id: int | None = None,
        context: str = "",
    ) -> int:
        """Escalate about this task (see RunContext.open_escalation)."""
        body = Escalation(problem=problem, impact=impact, options=options, recommended=recommended)
        task_id = rec.task_id if rec is not None else None
        return self.rc.open_escalation(task_id, source, body, session_id=session_id, context=context).id

    def environment_escalation(self, rec: TaskRecord, broken: list[GateResult]) -> None:
        """A gate command that cannot run (not installed, time-out): ask a human at once, spend no fix attempt."""
        what = "; ".join(f"{r.gate}: {r.details['environment_failure']}" for r in broken)
        self.open_escalation(
            rec,
            source="environment",
            problem=f"task-{rec.task_id}: a gate command cannot run in this environment: {what}",
            impact=f"task-{rec.task_id} cannot be checked; the fixer is not asked (it is not the agent's doing)",
            options=[
                "retry: re-run the gates once the environment is fixed (install the tool, raise gate_timeout_s)",
                "skip the task",
                "abort the run",
            ],
            recommended="fix the environment (see the evidence in `pm-agent log " + rec.task_id + "`), then retry",
            context="\n".join(r.evidence for r in broken)[:2000],
        )
        self.rc.move(rec, S.WAITING_FOR_HUMAN_INPUT, f"environment failure: {what[:100]}")

    def _budget_escalation(self, rec: TaskRecord, why: str, step: Step | None, *, limit: str | None = None) -> None:
        """Escalate a task that used up a limit; `limit` names it (default: the retry budget)."""
        limit = limit or f"retry budget of {self.rc.config.retry_budget} (retry_budget) exhausted"
        self.open_escalation(
            rec,
            source="retry-budget",
            problem=f"task-{rec.task_id}: {why}; {limit}",
            impact=f"task-{rec.task_id} and the tasks that depend on it are blocked",
            options=["retry: <guidance for the fixer>", "skip the task", "abort the run"],
            recommended="retry with guidance after reading `pm-agent log " + rec.task_id + "`",
        )
        if step is not None:
            self.consume(step)
        self.rc.move(rec, S.WAITING_FOR_HUMAN_INPUT, f"escalated: {why[:100]}")

    # ------------------------------------------------------------------ helpers

    def events(self, kind: str) -> list[dict[str, Any]]:
        """Payloads of this task's events of one kind, oldest first."""
        return [e.payload for e in self.rc.store.events(self.rc.run_id, self.task_id) if e.kind == kind]

    def pending_followup(self) -> dict[str, Any] | None:
        """A needs-role-followup with resume=true whose target has not finished yet."""
        pending = self.events("followup.pending")
        resolved = {int(p["session_id"]) for p in self.events("followup.resolved")}
        open_ = [p for p in pending if int(p["session_id"]) not in resolved]
        return open_[-1] if open_ else None

    def request_fix(self, rec: TaskRecord, source: str, evidence: str, payload: dict[str, Any]) -> None:
        """Record what the fixer must fix (its prompt reads the latest one)."""
        context = str(payload.get("context", ""))
        self.rc.store.append_event(
            self.rc.run_id,
            "fix.requested",
            {"source": source, "evidence": evidence + (f"\n{context}" if context else "")},
            task_id=rec.task_id,
        )
