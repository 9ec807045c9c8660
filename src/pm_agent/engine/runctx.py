"""What every part of one PM run shares: the repository, the store, the configuration, the agents."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from pm_agent.agents.session import AgentHost
from pm_agent.config import PmConfig
from pm_agent.engine.events import Listener
from pm_agent.engine.history import TaskHistory
from pm_agent.engine.storewatch import StoreWatch
from pm_agent.errors import VcsError
from pm_agent.gates import Baseline
from pm_agent.human.channels import EscalationChannel
from pm_agent.lifecycle import IssueState, Workflow, WorkflowContext
from pm_agent.plan.models import TaskStatus
from pm_agent.reports.escalation import Escalation, render_escalation
from pm_agent.store import EscalationRecord, EscalationStatus, RunRecord, Store, TaskRecord
from pm_agent.vcs import ChangeSet, Git, KeptSnapshot, task_branch

P = ParamSpec("P")
T = TypeVar("T")


@dataclass(frozen=True)
class GateView:
    """What one gate run checked: the change from `base` to the checked `tree`, and its diff text."""

    base: str
    tree: str
    changes: ChangeSet
    diff: str


class ForkPoints:
    """`git merge-base <working> <task branch>` with what pm-agent knows of the working branch's history.

    It keeps the working branch's tip as last seen or moved by pm-agent, and commits known to be that tip's
    ancestors (earlier tips it moved forward from). A task branch still at one of them (the agent made no
    commit: the usual case) is an ancestor of the working branch, so it is the merge base itself, told from
    two lookups in the batch process. Anything else asks git. Ancestry is a property of the commit, so the
    answer holds however the branch got to that tip."""

    def __init__(self) -> None:
        self._state: tuple[str, frozenset[str]] = ("", frozenset())  # one tuple: read and replaced atomically

    def merge_base(self, git: Git, working: str, branch: str) -> str:
        """What `git merge-base working branch` prints."""
        try:
            tip, head = git.rev_parse(working), git.rev_parse(branch)
        except VcsError:
            tip = head = ""
        known_tip, known = self._state
        if tip and tip == known_tip and head in known:
            return head
        if tip and tip != known_tip:
            self._state = (tip, frozenset({tip}))
        return git.run("merge-base", working, branch).strip()

    def known_ancestor(self, commit: str, tip: str) -> bool:
        """True when `commit` is surely an ancestor of `tip` (an earlier tip pm-agent saw `tip` grow from)."""
        known_tip, known = self._state
        return tip == known_tip and commit in known

    def landed(self, before: str, after: str) -> None:
        """pm-agent moved the working branch from `before` to `after`, a descendant (under the integration lock)."""
        known_tip, known = self._state
        self._state = (after, (known if before == known_tip else frozenset({before})) | {after})


@dataclass
class RunContext:
    """One run of the PM loop over one plan."""

    repo: Path
    store: Store
    db_path: Path
    config: PmConfig
    workflow: Workflow
    host: AgentHost
    run: RunRecord
    listener: Listener
    channel: EscalationChannel
    design_text: str = ""
    env_baseline: Baseline | None = None  # the environment commands on the baseline commit (preflight)
    integrate_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    aborted: bool = False
    account_escalated: bool = False  # an agent-account escalation is open: the next slots' same failure waits on it
    watch: StoreWatch = field(default_factory=StoreWatch)  # pm-agent's memory of its own task writes
    # Escalations opened by task flows, handed to the channel by the loop (the channel may block on a human).
    pending_escalations: list[tuple[EscalationRecord, str]] = field(default_factory=list)
    # Per task, the change its latest gate run checked, so the review step need not ask git again.
    gate_views: dict[str, GateView] = field(default_factory=dict)
    # Per task, the latest gate run's (base, checked tree, changed paths): delivery's record of the commit's files.
    checked_paths: dict[str, tuple[str, str, tuple[str, ...]]] = field(default_factory=dict)
    # Per task, the latest gate run's snapshot with its index, so delivery can tell cheaply that nothing changed.
    kept_snapshots: dict[str, KeptSnapshot] = field(default_factory=dict)
    fork_points: ForkPoints = field(default_factory=lambda: ForkPoints())  # task_base without a git process
    # Tasks this process moved into CREATING_PR for the first time ever: pm-agent commits for a task only there,
    # so none of its commits can exist yet and delivery need not search the branches for one.
    first_deliveries: set[str] = field(default_factory=set)

    @property
    def run_id(self) -> str:
        """The run's id."""
        return self.run.id

    @cached_property
    def git(self) -> Git:
        """The target repository (one instance: it caches what never changes, like the common git dir)."""
        return Git(self.repo)

    @property
    def state_dir(self) -> Path:
        """`<repo>/.pm-agent`."""
        return self.db_path.parent

    def worktree_path(self, task_id: str) -> Path:
        """Where a task's worktree lives."""
        return self.state_dir / "worktrees" / self.run_id / f"task-{task_id}"

    def history(self, task_id: str) -> TaskHistory:
        """What the store holds about one task, read as typed facts."""
        return TaskHistory(self.store, self.run_id, task_id)

    def task_branch_of(self, rec: TaskRecord) -> str:
        """The branch of the task's worktree."""
        return task_branch(self.run.plan_id, rec.task_id, rec.title)

    def task_base(self, rec: TaskRecord) -> str:
        """The commit the task's branch forked from the working branch: what its change is measured against."""
        return self.fork_points.merge_base(self.git, self.run.working_branch, f"refs/heads/{self.task_branch_of(rec)}")

    def keep_snapshot(self, task_id: str, kept: KeptSnapshot | None) -> None:
        """Keep the task's latest snapshot (None: none), closing the one it replaces."""
        old = self.kept_snapshots.pop(task_id, None)
        if old is not None and old is not kept:
            old.close()
        if kept is not None:
            self.kept_snapshots[task_id] = kept

    def emit(self, kind: str, message: str, **data: Any) -> None:
        """Tell the listeners."""
        self.listener.emit(kind, message, **data)

    def open_escalation(
        self,
        task_id: str | None,
        source: str,
        body: Escalation,
        *,
        session_id: int | None = None,
        context: str = "",
    ) -> EscalationRecord:
        """Store an escalation in seed 001's format, once per (task, source, session) while it is open,
        show it to the listeners and queue it for the channel (the loop hands it over)."""
        for esc in self.store.list_escalations(self.run_id):
            same = (esc.task_id, esc.source, esc.session_id) == (task_id, source, session_id)
            if same and esc.status is EscalationStatus.OPEN:
                return esc  # opened before a restart
        esc = self.store.open_escalation(
            self.run_id,
            task_id,
            source=source,
            problem=body.problem + (f"\nContext: {context}" if context else ""),
            impact=body.impact,
            options=list(body.options),
            recommended=body.recommended,
            blocking=body.blocking,
            session_id=session_id,
        )
        text = render_escalation(body, esc.id)
        self.emit("escalation.opened", text, escalation=esc.id, task=task_id)
        if body.blocking:
            self.pending_escalations.append((esc, text))
        return esc

    def context_of(self, rec: TaskRecord) -> WorkflowContext:
        """The task's WorkflowContext as stored, bound to this run's workflow."""
        if rec.workflow_context:
            ctx = WorkflowContext.model_validate(rec.workflow_context)
        else:
            ctx = WorkflowContext(task_id=rec.task_id, max_iterations=self.config.max_iterations)
        ctx.bind(self.workflow)
        return ctx

    def move(
        self, rec: TaskRecord, to: IssueState, reason: str, *, status: TaskStatus | None = None, **fields: Any
    ) -> TaskRecord:
        """Validate the transition with the workflow, then store it with its event in one transaction."""
        new, frm = self.store_move(rec, to, reason, status=status, **fields)
        self.moved(rec.task_id, frm, to, reason)
        return new

    async def write(self, task_id: str, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`fn` (store writes to this task, each waiting for its fsync) on a worker thread, so the other slots go
        on meanwhile; the store watch leaves the task to its next look until it returns (`StoreWatch.writing`)."""
        self.watch.writing.add(task_id)
        try:
            return await asyncio.to_thread(fn, *args, **kwargs)
        finally:
            self.watch.writing.discard(task_id)

    def moved(self, task_id: str, frm: IssueState, to: IssueState, reason: str) -> None:
        """Tell the listeners of a stored move (on the event loop's thread)."""
        self.emit("task.moved", f"task-{task_id}: {frm.value} → {to.value} ({reason})", task=task_id)

    def store_move(
        self,
        rec: TaskRecord,
        to: IssueState,
        reason: str,
        *,
        status: TaskStatus | None = None,
        events: Sequence[tuple[str, Mapping[str, Any]]] = (),
        consumed: int | None = None,
        **fields: Any,
    ) -> tuple[TaskRecord, IssueState]:
        """`move` without telling the listeners (any thread): the new record and the state it left. `events` and the
        signal `consumed` are written in the move's transaction, before it (`Store.transition`)."""
        ctx = self.context_of(rec)
        frm = ctx.current_state
        ctx.transition_to(to, reason)  # raises TransitionError, nothing stored
        if status is None:  # the workflow file names each state's coarse status (seed 001)
            status = TaskStatus(self.workflow.status(to) or TaskStatus.IN_PROGRESS)
        new = self.store.transition(
            self.run_id,
            rec.task_id,
            from_state=frm.value,
            to_state=to.value,
            reason=reason,
            iteration=ctx.iteration_count,
            workflow_context=ctx.model_dump(mode="json"),
            status=status,
            events=events,
            consumed=consumed,
            iteration_count=ctx.iteration_count,
            **fields,
        )
        self.watch.saw(new)
        return new, frm
