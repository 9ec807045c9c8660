"""Runs and tasks: creation, updates, and the compare-and-set lifecycle transition.

Each write is a `*_txn(conn, ...)` function that runs inside the caller's write transaction and
writes its event row there too; `SqliteStore` wraps each in one BEGIN IMMEDIATE transaction.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, func, select

from pm_agent.errors import NotFoundError, StoreError
from pm_agent.lifecycle.states import IssueState
from pm_agent.plan.models import Plan, Task, TaskStatus
from pm_agent.store._sql import db_value, fetch_all, fetch_one, json_payload, merge
from pm_agent.store.database import fault_point
from pm_agent.store.events import append_event_txn
from pm_agent.store.records import INITIAL_STATE, RunRecord, RunStatus, TaskRecord, TaskRow, TransitionRecord
from pm_agent.store.schema import runs, tasks, transitions

RUN_FIELDS = frozenset(
    {
        "plan_doc",
        "design_doc",
        "current_sha",
        "working_branch",
        "shared_context",
        "config",
        "status",
        "checkpoint_tags",
    }
)
TASK_FIELDS = frozenset(
    {
        "title",
        "tier",
        "status",
        "ownership",
        "contract",
        "retry_count",
        "attempt",
        "iteration_count",
        "decision_log",
        "artifacts",
        "known_risks",
        "review_notes",
        "commit_sha",
        "duration_ms",
        "workflow_context",
        "started_at",
    }
)
_BULKY = ("contract", "workflow_context", "shared_context", "config")  # named, not copied, in events


def new_run_id() -> str:
    """A short random run id."""
    return uuid.uuid4().hex[:12]


# ---- reads -------------------------------------------------------------------------------------


def get_run(conn: Connection, run_id: str) -> RunRecord:
    """The run; NotFoundError if unknown."""
    run = fetch_one(conn, select(runs).where(runs.c.id == run_id), RunRecord)
    if run is None:
        raise NotFoundError(f"unknown run {run_id!r}")
    return run


def require_run(conn: Connection, run_id: str) -> None:
    """NotFoundError if the run is unknown; cheaper than `get_run`, which validates its whole record."""
    if conn.scalar(select(runs.c.id).where(runs.c.id == run_id)) is None:
        raise NotFoundError(f"unknown run {run_id!r}")


_NEWEST_FIRST = (runs.c.created_at.desc(), runs.c.id.desc())


def list_runs(conn: Connection) -> list[RunRecord]:
    """Every run, newest first."""
    return fetch_all(conn, select(runs).order_by(*_NEWEST_FIRST), RunRecord)


def latest_run(conn: Connection) -> RunRecord | None:
    """The newest run, or None."""
    return fetch_one(conn, select(runs).order_by(*_NEWEST_FIRST).limit(1), RunRecord)


def get_task(conn: Connection, run_id: str, task_id: str) -> TaskRecord:
    """The task; NotFoundError naming the run or the task if either is unknown."""
    stmt = select(tasks).where(tasks.c.run_id == run_id, tasks.c.task_id == task_id)
    task = fetch_one(conn, stmt, TaskRecord)
    if task is None:
        require_run(conn, run_id)
        raise NotFoundError(f"unknown task {task_id!r} in run {run_id!r}")
    return task


def list_tasks(conn: Connection, run_id: str) -> list[TaskRecord]:
    """Tasks of a run in plan order; NotFoundError if the run is unknown."""
    require_run(conn, run_id)
    stmt = select(tasks).where(tasks.c.run_id == run_id).order_by(tasks.c.plan_order)
    return fetch_all(conn, stmt, TaskRecord)


def task_rows(conn: Connection, run_id: str) -> list[TaskRow]:
    """Every task's moving fields in plan order, without loading contracts; NotFoundError if the run is unknown."""
    require_run(conn, run_id)
    t = tasks.c
    cols = (t.task_id, t.state, t.status, t.commit_sha, t.iteration_count, t.retry_count, t.workflow_context)
    stmt = select(*cols).where(t.run_id == run_id).order_by(t.plan_order)
    return [TaskRow(r[0], IssueState(r[1]), TaskStatus(r[2]), r[3], r[4], r[5], r[6]) for r in conn.execute(stmt)]


def list_transitions(conn: Connection, run_id: str, task_id: str) -> list[TransitionRecord]:
    """A task's transitions in order."""
    get_task(conn, run_id, task_id)
    stmt = (
        select(transitions)
        .where(transitions.c.run_id == run_id, transitions.c.task_id == task_id)
        .order_by(transitions.c.seq)
    )
    return fetch_all(conn, stmt, TransitionRecord)


# ---- writes ------------------------------------------------------------------------------------


def create_run_txn(
    conn: Connection,
    plan: Plan,
    *,
    baseline_sha: str,
    working_branch: str,
    shared_context: Mapping[str, Any],
    config: Mapping[str, Any],
    now: datetime,
    run_id: str | None = None,
) -> RunRecord:
    """Insert the run, all its tasks (pending, received, in plan order) and a `run.created` event."""
    run_id = run_id or new_run_id()
    conn.execute(
        runs.insert().values(
            id=run_id,
            plan_id=plan.plan_id,
            plan_doc=plan.path,
            design_doc=plan.design_path,
            baseline_sha=baseline_sha,
            current_sha=baseline_sha,
            working_branch=working_branch,
            shared_context=dict(shared_context),
            config=dict(config),
            status=RunStatus.RUNNING.value,
            checkpoint_tags=[],
            created_at=now,
            updated_at=now,
        )
    )
    fault_point(conn, "create_run.run_inserted")
    _insert_tasks(conn, run_id, plan.tasks, first_order=0, now=now)
    fault_point(conn, "create_run.tasks_inserted")
    payload = {
        "plan_id": plan.plan_id,
        "tasks": [t.id for t in plan.tasks],
        "queue": list(plan.queue),
        "baseline_sha": baseline_sha,
    }
    append_event_txn(conn, run_id, None, "run.created", payload, now=now)
    return get_run(conn, run_id)


def _insert_tasks(conn: Connection, run_id: str, new: Sequence[Task], *, first_order: int, now: datetime) -> None:
    for order, task in enumerate(new, start=first_order):
        conn.execute(
            tasks.insert().values(
                run_id=run_id,
                task_id=task.id,
                plan_order=order,
                title=task.title,
                tier=task.tier.value,
                status=TaskStatus.PENDING.value,
                state=INITIAL_STATE,
                ownership=task.ownership,
                contract=task.model_dump(mode="json"),
                retry_count=0,
                attempt=0,
                iteration_count=0,
                decision_log=list(task.decision_log),
                artifacts=[],
                known_risks=[],
                review_notes=None,
                commit_sha=None,
                duration_ms=None,
                workflow_context={},
                started_at=None,
                updated_at=now,
            )
        )


def add_tasks_txn(conn: Connection, run_id: str, new: Sequence[Task], *, reason: str, now: datetime) -> None:
    """Append tasks to a run (remediation tasks from the final release gate), after the existing ones."""
    require_run(conn, run_id)
    last = conn.execute(select(func.max(tasks.c.plan_order)).where(tasks.c.run_id == run_id)).scalar()
    _insert_tasks(conn, run_id, new, first_order=(last if last is not None else -1) + 1, now=now)
    append_event_txn(conn, run_id, None, "run.tasks_added", {"tasks": [t.id for t in new], "reason": reason}, now=now)


def update_run_txn(
    conn: Connection, run_id: str, fields: Mapping[str, Any], *, event: str, now: datetime
) -> RunRecord:
    """Change run fields (validated) and write `event` with the changed values."""
    current = get_run(conn, run_id)
    _, values = merge(current, fields, RUN_FIELDS, "run")
    if values:
        conn.execute(runs.update().where(runs.c.id == run_id).values(**values, updated_at=now))
    payload = json_payload(values, skip=_BULKY)
    if "status" in values:
        payload["from_status"] = current.status.value
    append_event_txn(conn, run_id, None, event, payload, now=now)
    return get_run(conn, run_id)


def update_task_txn(
    conn: Connection, run_id: str, task_id: str, fields: Mapping[str, Any], *, event: str, now: datetime
) -> TaskRecord:
    """Change task fields (validated; never `state`, see transition) and write `event`."""
    if "state" in fields:
        raise StoreError("a task's state changes only through transition(), which checks the old state")
    current = get_task(conn, run_id, task_id)
    _, values = merge(current, fields, TASK_FIELDS, "task")
    if values:
        conn.execute(
            tasks.update()
            .where(tasks.c.run_id == run_id, tasks.c.task_id == task_id)
            .values(**values, updated_at=now)
        )
    append_event_txn(conn, run_id, task_id, event, json_payload(values, skip=_BULKY), now=now)
    return get_task(conn, run_id, task_id)


def transition_txn(
    conn: Connection,
    run_id: str,
    task_id: str,
    *,
    from_state: str,
    to_state: str,
    reason: str,
    iteration: int,
    workflow_context: Mapping[str, Any],
    status: TaskStatus | None,
    fields: Mapping[str, Any],
    now: datetime,
) -> TaskRecord:
    """Compare-and-set the task's state from `from_state` to `to_state`.

    If the stored state is not `from_state`, raise StoreError (the caller's transaction then writes
    nothing). Otherwise update the task (state, workflow_context, status, `fields`), append the
    transitions row with the next seq, and a `task.transition` event.
    """
    from_state, to_state = str(db_value(from_state)), str(db_value(to_state))
    if "state" in fields:
        raise StoreError("pass the new state as to_state, not as a field")
    current = get_task(conn, run_id, task_id)
    if current.state != from_state:
        raise StoreError(
            f"task {task_id!r} of run {run_id!r} is in state {current.state.value!r}, not {from_state!r}:"
            f" transition to {to_state!r} refused"
        )
    changes = {**fields, "workflow_context": dict(workflow_context)}
    if status is not None:
        changes["status"] = status
    _, values = merge(current, changes, TASK_FIELDS, "task")
    result = conn.execute(
        tasks.update()
        .where(tasks.c.run_id == run_id, tasks.c.task_id == task_id, tasks.c.state == from_state)
        .values(**values, state=to_state, updated_at=now)
    )
    if result.rowcount != 1:  # the portable compare-and-set, should another writer slip in
        raise StoreError(f"task {task_id!r} of run {run_id!r} left state {from_state!r} concurrently")
    fault_point(conn, "transition.task_updated")
    last = conn.scalar(
        select(func.max(transitions.c.seq)).where(
            transitions.c.run_id == run_id, transitions.c.task_id == task_id
        )
    )
    seq = int(last or 0) + 1
    conn.execute(
        transitions.insert().values(
            run_id=run_id,
            task_id=task_id,
            seq=seq,
            from_state=from_state,
            to_state=to_state,
            reason=reason,
            iteration=iteration,
            created_at=now,
        )
    )
    fault_point(conn, "transition.recorded")
    payload = {"seq": seq, "from": from_state, "to": to_state, "reason": reason, "iteration": iteration}
    payload.update(json_payload({k: v for k, v in values.items() if k != "workflow_context"}, skip=_BULKY))
    append_event_txn(conn, run_id, task_id, "task.transition", payload, now=now)
    return get_task(conn, run_id, task_id)
