"""A plan edited during a run, applied in one transaction: tasks added, contracts replaced, tasks cancelled.

The engine decides (engine/plandiff.py, engine/reconcile.py); this writes it all or nothing, with the
summary event, so a crash half-way never leaves a run on half of an edit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, select

from pm_agent.plan.models import Task, TaskStatus
from pm_agent.store import _fast_writes as fw
from pm_agent.store._fast import raw
from pm_agent.store._sql import fetch_all
from pm_agent.store.database import fault_hook
from pm_agent.store.events import append_event_txn
from pm_agent.store.records import EventRecord, TaskRecord
from pm_agent.store.runs import add_tasks_txn, get_task, require_run
from pm_agent.store.schema import events

__all__ = ["Cancel", "apply_plan_edit_txn", "events_of_kind"]


@dataclass(frozen=True)
class Cancel:
    """A queued task moved to a terminal state; the engine validated the move with its workflow."""

    task_id: str
    from_state: str
    to_state: str
    reason: str
    iteration: int
    workflow_context: Mapping[str, Any]


def events_of_kind(conn: Connection, run_id: str, kinds: Sequence[str]) -> list[EventRecord]:
    """A run's events of these kinds, oldest first; NotFoundError if the run is unknown."""
    require_run(conn, run_id)
    stmt = select(events).where(events.c.run_id == run_id, events.c.kind.in_(list(kinds))).order_by(events.c.id)
    return fetch_all(conn, stmt, EventRecord)


def apply_plan_edit_txn(
    conn: Connection,
    run_id: str,
    *,
    added: Sequence[Task],
    updated: Sequence[Task],
    cancelled: Sequence[Cancel],
    reason: str,
    event: str,
    payload: Mapping[str, Any],
    now: datetime,
) -> list[TaskRecord]:
    """Add, update and cancel, then write `event` with `payload`; returns the cancelled tasks as stored."""
    require_run(conn, run_id)
    if added:
        add_tasks_txn(conn, run_id, added, reason=reason, now=now)
    for task in updated:
        get_task(conn, run_id, task.id)
        fields = {
            "title": task.title,
            "tier": task.tier,
            "ownership": task.ownership,
            "contract": task.model_dump(mode="json"),
            "decision_log": [*task.decision_log, f"contract replaced: {reason}"],
        }
        fw.update_task(raw(conn), run_id, task.id, fields, event="task.contract_replaced", now=now)
    stored = []
    for cancel in cancelled:
        stored.append(
            fw.transition(
                raw(conn),
                run_id,
                cancel.task_id,
                from_state=cancel.from_state,
                to_state=cancel.to_state,
                reason=cancel.reason,
                iteration=cancel.iteration,
                workflow_context=cancel.workflow_context,
                status=TaskStatus.FAILED,
                fields={"iteration_count": cancel.iteration},
                now=now,
                fault=fault_hook(conn),
            )
        )
    append_event_txn(conn, run_id, None, event, dict(payload), now=now)
    return stored
