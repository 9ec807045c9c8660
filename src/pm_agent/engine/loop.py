"""The PM loop (seed 001), phases 2-4: dispatch → review gate → commit → progress, in slots.

    rc = start_run(repo, plan_path, design_path, listener=..., channel=...)   # launch.py: phase 1
    outcome = await PmLoop(rc).drive()

After `resume_run` (launch.py) the loop continues every task from its stored state (see taskflow.py
for how sessions are recovered).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from pm_agent.engine import integrity
from pm_agent.engine.agentslots import AgentSlots
from pm_agent.engine.baseline import setup_worktree
from pm_agent.engine.decisions import WorktreeCleanup
from pm_agent.engine.delivery import is_high_blast_radius
from pm_agent.engine.loop_reports import LoopReports
from pm_agent.engine.plansync import PlanSync
from pm_agent.engine.prompt_builder import current_task
from pm_agent.engine.reconcile import cancelled_ids
from pm_agent.engine.runctx import RunContext
from pm_agent.engine.scheduler import Candidate, Readiness, Scheduler, critical_paths
from pm_agent.engine.taskflow import TaskFlow
from pm_agent.errors import PmAgentError
from pm_agent.gates.secret_scan import prepare as prepare_secret_scan
from pm_agent.internal_tasks import is_pm_internal, plan_task_count
from pm_agent.lifecycle import IssueState
from pm_agent.plan.models import Presence, Task, TaskStatus
from pm_agent.store import EscalationStatus, TaskRecord
from pm_agent.vcs.pool import WorktreePool

S = IssueState
# While nothing changes (every slot busy, nobody answering), the store is still looked at this often for
# changes made outside pm-agent (the store-watch and completion checks).
RECHECK_S = 2.0
DISPATCHED = "slot.dispatched"  # the event of a task taking a slot (before its worktree exists)
IN_FLIGHT = 2  # tasks in flight per slot: one with its agent, one in pm-agent's checks


@dataclass
class LoopOutcome:
    """How a drive of the loop ended."""

    completed: list[str] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)  # tasks waiting for a human answer
    failed: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)  # tasks whose dependencies did not complete
    held: list[str] = field(default_factory=list)  # open, dependencies done, when the run stopped dispatching
    cancelled: list[str] = field(default_factory=list)  # queued tasks removed from the plan (engine/reconcile.py)
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def all_done(self) -> bool:
        """Every task completed."""
        return not (self.waiting or self.failed or self.blocked or self.held or self.errors)


class PmLoop:
    """Seed 001's phases 2-4 over slots; the final release gate follows when the queue is empty."""

    def __init__(self, rc: RunContext) -> None:
        self.rc = rc
        config = rc.config
        self.scheduler = Scheduler(
            max_parallel=config.max_parallel_agents,
            parallel_tiers=frozenset(config.parallel_tiers),
            anti_starvation_interval=config.anti_starvation_interval,
        )
        self.flows: dict[str, asyncio.Task[TaskRecord]] = {}  # the tasks in flight, with an agent at work or not
        self.agents = AgentSlots(self.scheduler.max_parallel)
        self.prompts: set[asyncio.Task[None]] = set()
        self.errors: dict[str, str] = {}
        self.paths: dict[str, float] = {}
        # The task table, in memory: the loop and its flows are the only writers of task state, so a
        # task's record changes only when its flow ends, an answer moves it, or a repair rewrites it.
        self.table: dict[str, TaskRecord] = {}
        self.tasks: dict[str, Task] = {}
        self.readiness = Readiness()  # which tasks of the table are ready, kept with it
        self.candidates: dict[str, Candidate] = {}  # the scheduler's view of each task, kept with the table
        self.paths_stale = True  # a task the critical paths do not cover yet is in the table
        self.waiting: set[str] = set()  # tasks waiting for a human answer, kept with the table
        self.cleanups: list[WorktreeCleanup] = []  # finished tasks' worktrees, retired after the next dispatch
        # Retired worktrees, taken over by new tasks; one more than the slots: a task retires while the next takes one.
        spares = self.scheduler.max_parallel + 1 if config.reuse_worktrees else 0
        self.pool = WorktreePool(rc.git, rc.worktree_path("0").parent, limit=spares)
        self.cleaning: set[asyncio.Task[Any]] = set()  # background jobs, awaited before the loop returns
        self.reports = LoopReports(rc, self.cleaning)
        self.changed = True  # a flow ended or an answer moved a task since the last integrity check
        self.version = 0  # counts changes to the table and the slots: `_dispatch` skips a look that cannot differ
        self.idle_version = -1  # the version at which the last look started nothing
        self.checked_at = self.full_at = 0.0
        self.plan = PlanSync(rc)  # the plan file, watched for edits (issue 12 part 4)
        self.warmed = False  # the gates' slow imports made in the background (after the first dispatch)

    # ---------------------------------------------------------------- the table

    def _load(self) -> None:
        """Read every task from the store (at start, after a repair, when slicing added tasks)."""
        self.table, self.waiting, self.readiness, self.candidates = {}, set(), Readiness(), {}
        for rec in self.rc.store.list_tasks(self.rc.run_id):
            self._remember(rec)

    def _remember(self, rec: TaskRecord) -> None:
        self.changed = True
        self.version += 1
        self.table[rec.task_id] = rec
        task = self.tasks[rec.task_id] = rec.task()
        self.candidates.pop(rec.task_id, None)
        self.paths_stale = self.paths_stale or rec.task_id not in self.paths
        state, workflow = S(rec.state), self.rc.workflow
        waiting = workflow.is_waiting(state)
        if waiting:
            self.waiting.add(rec.task_id)
        else:
            self.waiting.discard(rec.task_id)
        is_open = not (waiting or workflow.is_terminal(state))
        self.readiness.update(rec.task_id, task.dependency_ids(), completed=state is S.COMPLETED, is_open=is_open)

    # ---------------------------------------------------------------- readiness

    def _ready(self) -> list[TaskRecord]:
        busy = self.flows.keys() | self.errors.keys()
        return [self.table[tid] for tid in self.readiness.ready(busy)]

    async def _slot(self, task_id: str) -> TaskRecord:
        rc = self.rc
        rec = self.table[task_id]
        if S(rec.state) is not S.RECEIVED or self.tasks[task_id].presence is not Presence.EXISTS:
            await asyncio.to_thread(self._worktree, rec)
        flow = TaskFlow(rc, task_id, defer_cleanup=True, slots=self.agents)
        try:
            return await flow.drive()
        finally:
            self.agents.release(task_id)
            self.cleanups.extend(flow.cleanups)

    def _clean_up(self) -> None:
        """Retire finished tasks' worktrees in the background: a freed slot is refilled first."""
        # A spare only while open tasks not running yet may want one: near the end of a run a finished
        # worktree is removed at once, so the disk never holds more checkouts than the work to come needs.
        to_come = len(self.readiness.open - self.flows.keys()) - len(self.pool.spares())
        while self.cleanups:
            done = self.cleanups.pop(0)
            wanted, to_come = to_come > 0, to_come - 1
            retire = partial(self.pool.retire, done.worktree, done.branch, keep_branch=done.keep_branch, spare=wanted)
            self._background(retire)

    def _background(self, work: Callable[[], object]) -> None:
        """`work` in a worker thread, awaited before the loop returns."""
        job = asyncio.create_task(asyncio.to_thread(work))
        self.cleaning.add(job)
        job.add_done_callback(self.cleaning.discard)

    def _warm_up(self) -> None:
        """Once the first agents work: the gates' slow imports, so the first tasks' gates do not wait for them."""
        if self.flows and not self.warmed:
            self.warmed = True
            self._background(prepare_secret_scan)

    def _leftovers(self) -> None:
        """Completed tasks' worktrees a stopped pm-agent did not remove: cleaned up after the first dispatch."""
        for rec in self.table.values():
            path = self.rc.worktree_path(rec.task_id)
            if S(rec.state) is S.COMPLETED and path.exists():
                keep = is_high_blast_radius(current_task(rec))  # as deliver_step decides for a landed task
                self.cleanups.append(WorktreeCleanup(path, self.rc.task_branch_of(rec), keep_branch=keep))

    def _worktree(self, rec: TaskRecord) -> None:
        path = self.rc.worktree_path(rec.task_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        wt, fresh = self.pool.ensure(path, self.rc.task_branch_of(rec), start=self.rc.run.working_branch)
        # A branch made just now starts at the latest work already; an older one may lag behind it.
        if not fresh and S(rec.state) in (S.RECEIVED, S.PLANNING_APPROACH) and wt.is_clean():
            # Nothing written yet (e.g. a sliced task back after its subtasks): start from the latest work.
            wt.try_run("merge", "--ff-only", "--quiet", self.rc.run.working_branch)
        setup_worktree(self.rc.config, wt)  # before the agent: it runs the tests too

    # ---------------------------------------------------------------- humans

    async def _escalations(self) -> None:
        """Hand new escalations to the channel, then wake tasks whose escalation was answered."""
        rc = self.rc
        while rc.pending_escalations:
            # In the background: a human may take minutes, and the other slots keep working meanwhile.
            esc, text = rc.pending_escalations.pop(0)
            prompt = asyncio.create_task(rc.channel.escalate(rc.store, esc, text))
            self.prompts.add(prompt)
            prompt.add_done_callback(self.prompts.discard)
        if not self.waiting:
            return  # no task waits for an answer: nothing to look for
        for esc in rc.store.list_escalations(rc.run_id):
            if esc.status is not EscalationStatus.ANSWERED or esc.task_id is None or esc.task_id in self.flows:
                continue
            rec = self.table.get(esc.task_id) or rc.store.get_task(rc.run_id, esc.task_id)
            target = rc.workflow.on_answer(S(rec.state))
            if target is not None:
                self._remember(rc.move(rec, target, f"answer to escalation #{esc.id} received"))
                self.reports.now("escalation resolved")

    # ---------------------------------------------------------------- the loop

    async def drive(self, *, poll_s: float = 0.5) -> LoopOutcome:
        """Run until every task is done, waits for a human (with no one to answer), or is blocked."""
        rc = self.rc
        queue_pos = {tid: i for i, tid in enumerate(_queue(rc))}
        self._load()
        # Before any dispatch: a spare a stopped pm-agent left may still have a task's branch checked out.
        await asyncio.to_thread(self.pool.sweep)
        self._leftovers()
        try:
            return await self._drive(queue_pos, poll_s)
        finally:
            self.pool.close()  # the run's tasks are over for now: no spare worktree outlives the loop

    async def _drive(self, queue_pos: dict[str, int], poll_s: float) -> LoopOutcome:
        rc = self.rc
        while True:
            await self._escalations()
            self._check()
            if self.plan.poll(self.flows):  # an edit of the plan added, replaced or cancelled tasks
                self._load()
            if not rc.aborted:
                if self.paths_stale:  # once per plan, again if slicing adds tasks
                    self.paths, self.paths_stale, self.candidates = critical_paths(self.tasks), False, {}
                self._dispatch(queue_pos)
                self._warm_up()
            self._clean_up()
            self.reports.write_due()
            if not self.flows:
                answered = any(
                    e.status is EscalationStatus.ANSWERED and e.task_id in self.waiting
                    for e in rc.store.list_escalations(rc.run_id)
                )
                # A human may still answer an open prompt; an answer may have landed since _escalations ran.
                if not rc.aborted and (rc.pending_escalations or self.prompts or answered):
                    await asyncio.sleep(poll_s)
                    continue
                for prompt in self.prompts:
                    prompt.cancel()
                if self.cleaning:
                    await asyncio.wait(self.cleaning)
                return self._outcome()
            freed = self.agents.freed()  # an agent's session ended and pm-agent checks its task: refill the slot
            waits: list[asyncio.Future[Any]] = [*self.flows.values(), freed]
            done, _ = await asyncio.wait(waits, timeout=poll_s, return_when=asyncio.FIRST_COMPLETED)
            if freed in done:
                self.version += 1
            for task_id, fut in list(self.flows.items()):
                if fut not in done:
                    continue
                del self.flows[task_id]
                self._finished(task_id, fut)
            self.reports.look()

    def _check(self) -> None:
        """The integrity checks, when something changed or RECHECK_S passed: over the rows changed since the last
        look, and every RECHECK_S over every row (a change the store's journal missed); reload on news."""
        rc, now = self.rc, time.monotonic()
        if not self.changed and now - self.checked_at < RECHECK_S:
            return
        full = now - self.full_at >= RECHECK_S
        self.changed, self.checked_at = False, now
        if full:
            self.full_at = now
        rows, gone, _ = integrity.changed_rows(rc, full=full)
        findings = integrity.check_run(rc, rows, gone)
        if findings:  # a task changed outside pm-agent, or completed without its commit: stop dispatching
            integrity.handle_findings(rc, findings)
            self._load()
        elif any(r[0] not in self.table for r in rows) or (gone is None and len(rows) != len(self.table)):
            self._load()  # slicing added subtasks

    def _dispatch(self, queue_pos: dict[str, int]) -> None:
        """Start a flow for every task the scheduler picks among the ready ones."""
        rc = self.rc
        # The scheduler starts nothing while every slot is busy, nor on the same table and slots as the last
        # look that started nothing; at 200 tasks ranking every ready task costs milliseconds per look. Tasks
        # in pm-agent's checks hold no slot; as many again as the slots may be in flight, no more.
        room = min(self.agents.free(), IN_FLIGHT * self.scheduler.max_parallel - len(self.flows))
        if room <= 0 or self.version == self.idle_version:
            return
        ready = [self._candidate(r, queue_pos) for r in self._ready()]
        if not ready:
            self.idle_version = self.version
            return
        running = [self._candidate(self.table[t], queue_pos) for t in self.flows]
        picked = self.scheduler.pick(ready, running, room=room)
        if not picked:
            self.idle_version = self.version
            return
        plan_total, done_count = plan_task_count(self.table), plan_task_count(self.readiness.done)
        cost = rc.store.sessions_cost(rc.run_id)
        for cand in picked:
            self.agents.reserve(cand.task_id)
            rc.emit(
                "slots",
                f"dispatch task-{cand.task_id} ({cand.tier.value}); slots: {self._in_flight()}; "
                f"{done_count}/{plan_total} done; cost so far ${cost:.4f}",
            )
            self.flows[cand.task_id] = asyncio.create_task(self._slot(cand.task_id))
            # The slots' holders (agents at work or about to be): the board numbers the slots from these.
            payload = {"slots": sorted(self.agents.holders), "done": done_count, "tasks": plan_total}
            rc.store.append_event(rc.run_id, DISPATCHED, payload, task_id=cand.task_id)
        self.reports.cycle_diff()

    def _in_flight(self) -> str:
        """The slots' tasks, then those pm-agent checks and those waiting for a slot, for the console."""
        waiting = {task for task, _ in self.agents.waiters}
        checked = [t for t in self.flows if t not in self.agents.holders and t not in waiting]
        parts = [", ".join(sorted(f"task-{t}" for t in self.agents.holders))]
        parts += [f"checks: {', '.join(sorted(f'task-{t}' for t in checked))}"] if checked else []
        parts += [f"waiting for a slot: {', '.join(sorted(f'task-{t}' for t in waiting))}"] if waiting else []
        return "; ".join(parts)

    def _candidate(self, rec: TaskRecord, queue_pos: dict[str, int]) -> Candidate:
        # Kept until the task's record or the paths change; queue_pos is the drive's one queue.
        cand = self.candidates.get(rec.task_id)
        if cand is None:
            cand = self.candidates[rec.task_id] = Candidate(
                task_id=rec.task_id,
                tier=rec.tier,
                plan_order=rec.plan_order,
                queue_order=queue_pos.get(rec.task_id, rec.plan_order),
                ownership=rec.ownership,
                depends_on=tuple(self.tasks[rec.task_id].dependency_ids()),
                remaining=self.paths.get(rec.task_id, 0.0),
            )
        return cand

    def _finished(self, task_id: str, fut: asyncio.Task[TaskRecord]) -> None:
        rc = self.rc
        self.version += 1  # a slot is free: look again
        exc = fut.exception()
        if exc is not None:
            if not isinstance(exc, PmAgentError):
                raise exc
            self.errors[task_id] = f"{type(exc).__name__}: {exc}"
            rc.store.append_event(rc.run_id, "task.error", {"error": self.errors[task_id]}, task_id=task_id)
            rc.emit(
                "task.error", f"task-{task_id}: {self.errors[task_id]} (worktree kept: {rc.worktree_path(task_id)})"
            )
            return
        rec = fut.result()
        self._remember(rec)
        if S(rec.state) is S.COMPLETED:
            self.scheduler.record_completion(rec.tier)
            self.reports.task_completed(task_id, rec.tier)
        elif rc.workflow.is_terminal(S(rec.state)):
            rc.emit("task.ended", f"task-{task_id} ended in {rec.state}; worktree kept: {rc.worktree_path(task_id)}")

    def _outcome(self) -> LoopOutcome:
        records = self.rc.store.list_tasks(self.rc.run_id)
        out = LoopOutcome(errors=dict(self.errors))
        cancelled = cancelled_ids(self.rc.store, self.rc.run_id)
        held = set(self.readiness.ready()) if self.rc.aborted else set()  # not dispatched, or stopped in flight
        for rec in records:
            if is_pm_internal(rec.task_id):  # not a task of the plan: the outcome counts the plan's work
                continue
            state = S(rec.state)
            if state is S.COMPLETED:
                out.completed.append(rec.task_id)
            elif state is S.FAILED and rec.task_id in cancelled:
                out.cancelled.append(rec.task_id)
            elif self.rc.workflow.is_waiting(state):
                out.waiting.append(rec.task_id)
            elif self.rc.workflow.is_terminal(state) or rec.status is TaskStatus.FAILED:
                out.failed.append(rec.task_id)
            elif rec.task_id not in self.errors:
                (out.held if rec.task_id in held else out.blocked).append(rec.task_id)
        return out


def _queue(rc: RunContext) -> list[str]:
    events = [e for e in rc.store.events(rc.run_id, limit=5) if e.kind == "run.created"]
    queue = events[0].payload.get("queue") if events else None
    if isinstance(queue, list):
        return [str(q) for q in queue]
    return [r.task_id for r in sorted(rc.store.list_tasks(rc.run_id), key=lambda r: r.plan_order)]
