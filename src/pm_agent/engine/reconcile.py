"""Plans that change while the run goes on (issue 12, part 4): re-read the plan, apply the differences.

    outcome = reconcile(host, running=flows)   # the loop (plansync.PlanSync) on an edit; `pm-agent reconcile`
    queued = apply_answers(host)               # answered plan-change escalations -> follow-up tasks

Each loop pass (plansync.py) stats the plan (a file, or every markdown file of a plan folder) and hashes it
only when its size or mtime moved; a new hash is parsed with pm-agent's own parser (`load_plan`) and diffed by task
id against the run's stored tasks (`plandiff.diff_plan`). A plan that does not parse (unknown
dependency, cycle, duplicate id ...) is refused as a whole: a `plan.refused` event and a console line
with file and line, and the run goes on with what it has (the last good version). Otherwise the edit
is applied in one store transaction with its `plan.reconciled` event (counts and ids), and every edit
to a task that is no longer queued opens a `plan-change:task-<id>` escalation, answered with:

- `continue`: the task and its work stay as they are; this text of the task is not asked about again;
- `restart`: a follow-up task `<id>-r<n>` with the new contract is queued now, from the working branch;
- `re-open`: the same follow-up, after the task completes, on top of its work.

A change never alters a running or finished task itself. A running pm-agent holds the run lock, so
`pm-agent reconcile` then only shows the diff: the loop sees the same file at its next pass.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pm_agent.engine.plandiff import ChangeKind, Known, PlanChange, PlanDiff, diff_plan, text_sha
from pm_agent.engine.planfiles import content_sha
from pm_agent.engine.storewatch import StoreWatch
from pm_agent.errors import PlanError
from pm_agent.lifecycle import IssueState, Workflow, WorkflowContext
from pm_agent.plan import load_plan
from pm_agent.plan.models import Dependency, Task
from pm_agent.plan.triage import RepoView, triage_update
from pm_agent.reports.escalation import Escalation
from pm_agent.reports.progress_data import PLAN_RECONCILED, PLAN_REFUSED
from pm_agent.store import Cancel, EscalationRecord, EscalationStatus, RunRecord, Store, TaskRecord

__all__ = [
    "PLAN_EVENTS",
    "RECONCILED",
    "REFUSED",
    "SOURCE",
    "Host",
    "OfflineHost",
    "ReconcileOutcome",
    "apply_answers",
    "cancelled_ids",
    "open_plan_escalations",
    "plan_exempt",
    "plan_path",
    "preview",
    "reconcile",
]

RECONCILED = PLAN_RECONCILED
REFUSED = PLAN_REFUSED
PLAN_EVENTS = (RECONCILED, REFUSED)
SOURCE = "plan-change"  # escalation source prefix: `plan-change:task-<id>`
PLAN_REASON = "plan edited during the run"  # the reason of `run.tasks_added` for tasks the plan added
CANCEL_REASON = "removed from the plan"



class Host(Protocol):
    """What reconciling needs from a run: `RunContext` in the loop, `OfflineHost` for the CLI."""

    repo: Path
    store: Store
    run: RunRecord
    workflow: Workflow
    watch: StoreWatch

    def emit(self, kind: str, message: str, **data: Any) -> None:
        """Tell the listeners."""

    def open_escalation(self, task_id: str | None, source: str, body: Escalation) -> EscalationRecord:
        """Store an escalation (and hand it to the human channel when there is one)."""


@dataclass
class ReconcileOutcome:
    """What one look at the plan found and did."""

    sha: str
    diff: PlanDiff | None = None  # None: the plan was refused
    error: str = ""
    escalations: dict[str, int] = field(default_factory=dict)  # task id -> escalation id
    unsettled: bool = False  # the file changed while it was read: nothing applied, look again

    @property
    def changed_tasks(self) -> bool:
        """The run's task table changed (added, updated or cancelled tasks)."""
        return self.diff is not None and bool(self.diff.added or self.diff.updated or self.diff.cancelled)


def plan_path(repo: Path, run: RunRecord) -> Path:
    """The run's plan file or folder (a relative path was given relative to the repository)."""
    path = Path(run.plan_doc)
    return path if path.is_absolute() else repo / path


def plan_exempt(repo: Path, run: RunRecord) -> tuple[str, ...]:
    """The plan as a path of the main checkout (a folder ends in "/"), for the checkout guard to leave alone."""
    path = plan_path(repo, run)
    try:
        rel = path.resolve().relative_to(repo.resolve()).as_posix()
    except ValueError:
        return ()  # outside the repository: the guard never sees it
    return (f"{rel}/",) if path.is_dir() else (rel,)


# ---------------------------------------------------------------- reading the run


def _plan_ids(store: Store, run_id: str) -> set[str]:
    """Tasks that came from the plan: those the run started with and those an edit added."""
    ids: set[str] = set()
    for ev in store.events_of_kind(run_id, ("run.created", "run.tasks_added")):
        if ev.kind == "run.created" or ev.payload.get("reason") == PLAN_REASON:
            ids.update(str(t) for t in ev.payload.get("tasks", []))
    return ids


def _asked(store: Store, run_id: str) -> dict[str, str]:
    """Per task, the text (sha, or REMOVED) its last plan-change escalation asked about."""
    asked: dict[str, str] = {}
    for ev in store.events_of_kind(run_id, (RECONCILED,)):
        asked.update({str(k): str(v) for k, v in (ev.payload.get("asked") or {}).items()})
    return asked


def known_tasks(store: Store, run_id: str) -> list[Known]:
    """The run's tasks as the diff needs them."""
    from_plan = _plan_ids(store, run_id)
    known = []
    for rec in store.list_tasks(run_id):
        contract = rec.contract
        deps = tuple(str(d["task_id"]) for d in contract.get("depends_on", []))
        sha = text_sha(str(contract.get("title", rec.title)), str(contract.get("body", "")))
        known.append(Known(rec.task_id, IssueState(rec.state), sha, deps, rec.task_id in from_plan))
    return known


def _load(host: Host) -> list[Task]:
    """The plan's tasks, parsed and resolved but not triaged: triage asks git about each task, and only
    the tasks an edit adds or replaces need it (`_triaged`); at 2,000 tasks that is seconds saved."""
    design = Path(host.run.design_doc) if host.run.design_doc and Path(host.run.design_doc).exists() else None
    return load_plan(plan_path(host.repo, host.run), design, None).tasks


def _triaged(tasks: list[Task], repo: Path) -> list[Task]:
    """Tasks from `_load` triaged against the repository, as `load_plan` would (its last log line is triage's)."""
    if not tasks:
        return tasks
    view = RepoView.open(repo)
    out = []
    for task in tasks:
        update, line = triage_update(task, view)
        out.append(task.model_copy(update={**update, "decision_log": [*task.decision_log[:-1], line]}))
    return out


def preview(host: Host, running: Collection[str] = ()) -> PlanDiff:
    """The diff the plan as it is now would apply, writing nothing; PlanError if it does not parse."""
    run_id = host.run.id
    return diff_plan(known_tasks(host.store, run_id), _load(host), running=running, asked=_asked(host.store, run_id))


# ---------------------------------------------------------------- applying an edit


def _cancel(host: Host, rec: TaskRecord) -> Cancel:
    if rec.workflow_context:
        ctx = WorkflowContext.model_validate(rec.workflow_context)
    else:
        ctx = WorkflowContext(task_id=rec.task_id, max_iterations=int(host.run.config.get("max_iterations", 10)))
    ctx.bind(host.workflow)
    frm = ctx.current_state
    ctx.transition_to(IssueState.FAILED, CANCEL_REASON)  # TransitionError if the workflow has no such edge
    return Cancel(
        rec.task_id, frm.value, IssueState.FAILED.value, CANCEL_REASON, ctx.iteration_count, ctx.model_dump(mode="json")
    )


def _escalate(host: Host, change: PlanChange) -> EscalationRecord:
    ref = f"task-{change.task_id}"
    what = "was removed from the plan" if change.kind is ChangeKind.REMOVED else "changed in the plan"
    body = Escalation(
        problem=f"{ref} {what} while it is {change.state.value}; its work so far is left as it is",
        impact=f"{ref} goes on under its old contract until you answer",
        options=[
            f"continue: keep {ref} and its work as they are",
            f"restart: queue {ref}-r<n> with the new contract now, from the working branch",
            f"re-open: queue {ref}-r<n> with the new contract after {ref} completes, on top of its work",
        ],
        recommended="continue" if change.kind is ChangeKind.REMOVED else "re-open",
    )
    return host.open_escalation(None, f"{SOURCE}:{ref}", body)


def _summary(diff: PlanDiff) -> str:
    parts = []
    for label, ids in (
        ("added", [t.id for t in diff.added]),
        ("updated", [t.id for t in diff.updated]),
        ("cancelled", diff.cancelled),
        ("escalated", [c.task_id for c in diff.escalated]),
    ):
        if ids:
            parts.append(f"{len(ids)} {label} ({', '.join(f'task-{i}' for i in ids)})")
    return "; ".join(parts) or "no task changed"


def reconcile(host: Host, *, running: Collection[str] = (), sha: str | None = None) -> ReconcileOutcome:
    """Re-read the plan and apply the edit (see the module docstring); a refused plan changes nothing."""
    path = plan_path(host.repo, host.run)
    sha = sha or content_sha(path)
    run_id = host.run.id
    try:
        diff = preview(host, running)
    except PlanError as exc:
        if content_sha(path) != sha:
            return ReconcileOutcome(sha, unsettled=True)
        error = str(exc) if exc.path is not None else f"{path}: {exc}"
        host.store.append_event(run_id, REFUSED, {"sha": sha, "error": error})
        host.emit(REFUSED, f"plan edit refused: {error}; the run goes on with the last good version")
        return ReconcileOutcome(sha, None, error)
    if content_sha(path) != sha:
        # An editor's save is a truncate and a write: the text hashed is not the text parsed. Recording either
        # sha with the other's tasks would make the next look see a "new" version (CI at 5ae14bf).
        return ReconcileOutcome(sha, unsettled=True)
    diff.added, diff.updated = _triaged(diff.added, host.repo), _triaged(diff.updated, host.repo)
    records = {r.task_id: r for r in host.store.list_tasks(run_id)} if diff.cancelled else {}
    cancels = [_cancel(host, records[t]) for t in diff.cancelled]
    outcome = ReconcileOutcome(sha, diff)
    for change in diff.escalated:  # before the event: a crash in between asks again, and open ones are reused
        outcome.escalations[change.task_id] = _escalate(host, change).id
    payload = {
        "sha": sha,
        "counts": diff.counts(),
        "added": [t.id for t in diff.added],
        "updated": [t.id for t in diff.updated],
        "cancelled": list(diff.cancelled),
        "escalated": outcome.escalations,
        "asked": {c.task_id: c.sha for c in diff.escalated},
    }
    stored = host.store.apply_plan_edit(
        run_id,
        added=diff.added,
        updated=diff.updated,
        cancelled=cancels,
        reason=PLAN_REASON,
        event=RECONCILED,
        payload=payload,
    )
    for rec in stored:
        host.watch.saw(rec)  # pm-agent's own move: the store-watch must not take it for tampering
    host.emit(RECONCILED, f"plan edited ({path.name}): {_summary(diff)}")
    return outcome


# ---------------------------------------------------------------- answers


def _follow_up(host: Host, task: Task, word: str, esc_id: int) -> Task:
    taken = {r.task_id for r in host.store.list_tasks(host.run.id)}
    n = 1
    while f"{task.id}-r{n}" in taken:
        n += 1
    deps = list(task.depends_on)
    if word == "re-open":
        deps.append(Dependency(task_id=task.id, reason=f"re-opened (escalation #{esc_id}): builds on its work"))
    note = f"The plan changed task-{task.id} after it was dispatched (escalation #{esc_id}, answer: {word})."
    return task.model_copy(
        update={
            "id": f"{task.id}-r{n}",
            "depends_on": deps,
            "body": f"{note}\n\n{task.body}",
            "decision_log": [*task.decision_log, note],
        }
    )


def _word(answer: str | None) -> str:
    text = (answer or "").strip().lower()
    if text.startswith(("2", "restart")):
        return "restart"
    if text.startswith(("3", "re-open", "reopen")):
        return "re-open"
    return "continue"


def apply_answers(host: Host) -> list[str]:
    """Act on answered plan-change escalations; the follow-up tasks queued (ids)."""
    queued: list[str] = []
    answered = [
        e
        for e in host.store.list_escalations(host.run.id, EscalationStatus.ANSWERED)
        if e.source.startswith(f"{SOURCE}:task-")
    ]
    for esc in answered:
        task_id, word = esc.source.removeprefix(f"{SOURCE}:task-"), _word(esc.answer)
        task = None
        if word != "continue":
            try:
                task = next((t for t in _load(host) if t.id == task_id), None)
            except PlanError:
                continue  # the plan does not parse right now: the answer waits for a good version
        if task is not None:
            [new] = _triaged([_follow_up(host, task, word, esc.id)], host.repo)
            host.store.apply_plan_edit(
                host.run.id,
                added=[new],
                updated=[],
                cancelled=[],
                reason=f"plan change of task-{task_id}: {word} (escalation #{esc.id})",  # not PLAN_REASON: no plan task
                event=RECONCILED,
                payload={"counts": {"added": 1}, "added": [new.id], "answer": {task_id: word}, "escalation": esc.id},
            )
            queued.append(new.id)
        host.store.mark_escalation_applied(esc.id)
        done = f"follow-up task-{queued[-1]} queued" if task is not None else f"task-{task_id} left as it is"
        host.emit(RECONCILED, f"escalation #{esc.id} answered {word}: {done}")
    return queued


def cancelled_ids(store: Store, run_id: str) -> set[str]:
    """Tasks cancelled because the plan dropped them: ended, but no failure (the release does not wait on them)."""
    return {str(t) for ev in store.events_of_kind(run_id, (RECONCILED,)) for t in ev.payload.get("cancelled", [])}


def open_plan_escalations(store: Store, run_id: str) -> int:
    """How many plan-change escalations wait for an answer or for pm-agent to act on one."""
    return sum(
        1
        for e in store.list_escalations(run_id)
        if e.source.startswith(SOURCE) and e.status in (EscalationStatus.OPEN, EscalationStatus.ANSWERED)
    )


@dataclass
class OfflineHost:
    """A stopped run, for `pm-agent reconcile`: escalations are stored for `pm-agent answer`, not prompted."""

    repo: Path
    store: Store
    run: RunRecord
    workflow: Workflow
    lines: list[tuple[str, str]] = field(default_factory=list)
    watch: StoreWatch = field(default_factory=StoreWatch)

    def emit(self, kind: str, message: str, **data: Any) -> None:
        """Keep the line for the caller to print."""
        self.lines.append((kind, message))

    def open_escalation(self, task_id: str | None, source: str, body: Escalation) -> EscalationRecord:
        """Store it once while it is open."""
        for esc in self.store.list_escalations(self.run.id, EscalationStatus.OPEN):
            if (esc.task_id, esc.source) == (task_id, source):
                return esc
        return self.store.open_escalation(
            self.run.id,
            task_id,
            source=source,
            problem=body.problem,
            impact=body.impact,
            options=list(body.options),
            recommended=body.recommended,
            blocking=body.blocking,
        )
