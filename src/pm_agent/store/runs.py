"""Runs and tasks: creating runs and their tasks, run updates, reads of runs and transitions.

Each write is a `*_txn(conn, ...)` function that runs inside the caller's write transaction and
writes its event row there too; `SqliteStore` wraps each in one BEGIN IMMEDIATE transaction. A task's
reads, updates and transitions are the plain-sqlite3 ones of `_fast_queries` and `_fast_writes`.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, func, select

from pm_agent.errors import NotFoundError
from pm_agent.plan.models import Plan, Task, TaskStatus
from pm_agent.store import _fast
from pm_agent.store import _fast_queries as fq
from pm_agent.store._fast import raw
from pm_agent.store._sql import BULKY, RUN_FIELDS, fetch_all, fetch_one, json_payload, merge
from pm_agent.store.database import fault_point
from pm_agent.store.events import append_event_txn
from pm_agent.store.records import INITIAL_STATE, RunRecord, RunStatus, TaskRecord, TransitionRecord
from pm_agent.store.schema import runs, tasks


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
    _fast.require_run(raw(conn), run_id)


_NEWEST_FIRST = (runs.c.created_at.desc(), runs.c.id.desc())


def list_runs(conn: Connection) -> list[RunRecord]:
    """Every run, newest first."""
    return fetch_all(conn, select(runs).order_by(*_NEWEST_FIRST), RunRecord)


def latest_run(conn: Connection) -> RunRecord | None:
    """The newest run, or None."""
    return fetch_one(conn, select(runs).order_by(*_NEWEST_FIRST).limit(1), RunRecord)


def get_task(conn: Connection, run_id: str, task_id: str) -> TaskRecord:
    """The task; NotFoundError naming the run or the task if either is unknown."""
    return fq.get_task(raw(conn), run_id, task_id)


def list_tasks(conn: Connection, run_id: str) -> list[TaskRecord]:
    """Tasks of a run in plan order; NotFoundError if the run is unknown."""
    require_run(conn, run_id)
    stmt = select(tasks).where(tasks.c.run_id == run_id).order_by(tasks.c.plan_order)
    return fetch_all(conn, stmt, TaskRecord)


def list_transitions(conn: Connection, run_id: str, task_id: str) -> list[TransitionRecord]:
    """A task's transitions in order."""
    return fq.list_transitions(raw(conn), run_id, task_id)


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


def update_run_txn(conn: Connection, run_id: str, fields: Mapping[str, Any], *, event: str, now: datetime) -> RunRecord:
    """Change run fields (validated) and write `event` with the changed values."""
    current = get_run(conn, run_id)
    _, values = merge(current, fields, RUN_FIELDS, "run")
    if values:
        conn.execute(runs.update().where(runs.c.id == run_id).values(**values, updated_at=now))
    payload = json_payload(values, skip=BULKY)
    if "status" in values:
        payload["from_status"] = current.status.value
    append_event_txn(conn, run_id, None, event, payload, now=now)
    return get_run(conn, run_id)
