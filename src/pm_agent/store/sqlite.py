"""SqliteStore: the Store protocol on a SQLite file, one transaction per public write.

Every public write opens one BEGIN IMMEDIATE transaction around its write function, so the change
and its event row commit together or not at all. Reads run in one snapshot each. The hot statements
(tasks, sessions, events, gate results) are plain sqlite3 (`_fast*`) on the store's own connections;
the colder ones are SQLAlchemy Core on its engine, and reach the same sqlite3 functions where they
need them (see `_fast.raw`).

`SqliteStore` holds runs, tasks, transitions and events here; sessions and signals come from
`_sqlite_sessions`, gate results, escalations, risks, commits and reports from `_sqlite_outcomes`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from pm_agent.plan.models import Plan, Task, TaskStatus
from pm_agent.statefile import STATE_DIR, STATE_FILE, default_store_path
from pm_agent.store import _fast_queries as fq
from pm_agent.store import _fast_writes as fw
from pm_agent.store import history as hist
from pm_agent.store import planedit as pe
from pm_agent.store import runs as rn
from pm_agent.store._sqlite_base import Clock, utc_now
from pm_agent.store._sqlite_outcomes import OutcomesMixin
from pm_agent.store._sqlite_sessions import SessionsMixin
from pm_agent.store.database import FaultHook, read_txn, sqlite_engine, write_txn
from pm_agent.store.migrations import migrate
from pm_agent.store.records import (
    EventRecord,
    HistoryEntry,
    RunRecord,
    RunStatus,
    TaskRecord,
    TaskRow,
    TaskRowChanges,
    TaskRowValues,
    TransitionRecord,
)


def open_store(path: Path | str, *, clock: Clock | None = None, fault: FaultHook | None = None) -> SqliteStore:
    """Open (creating and migrating as needed) the SQLite store at `path`."""
    engine = sqlite_engine(Path(path))
    store = SqliteStore(engine, clock=clock, fault=fault)
    try:
        migrate(engine, now=store.now())
    except BaseException:
        engine.dispose()
        raise
    return store


class SqliteStore(SessionsMixin, OutcomesMixin):
    """The durable state store (see the Store protocol in `pm_agent.store` for the method docs)."""

    # -- runs
    def create_run(
        self,
        plan: Plan,
        *,
        baseline_sha: str,
        working_branch: str,
        shared_context: Mapping[str, Any],
        config: Mapping[str, Any],
        run_id: str | None = None,
    ) -> RunRecord:
        with write_txn(self._writer) as conn:
            return rn.create_run_txn(
                conn,
                plan,
                baseline_sha=baseline_sha,
                working_branch=working_branch,
                shared_context=shared_context,
                config=config,
                now=self.now(),
                run_id=run_id,
            )

    def add_tasks(self, run_id: str, new: Sequence[Task], *, reason: str) -> None:
        with write_txn(self._writer) as conn:
            rn.add_tasks_txn(conn, run_id, new, reason=reason, now=self.now())

    def get_run(self, run_id: str) -> RunRecord:
        with read_txn(self.engine) as conn:
            return rn.get_run(conn, run_id)

    def list_runs(self) -> list[RunRecord]:
        with read_txn(self.engine) as conn:
            return rn.list_runs(conn)

    def latest_run(self) -> RunRecord | None:
        with read_txn(self.engine) as conn:
            return rn.latest_run(conn)

    def set_run_status(self, run_id: str, status: RunStatus) -> RunRecord:
        return self.update_run(run_id, event="run.status", status=status)

    def update_run(self, run_id: str, *, event: str = "run.updated", **fields: Any) -> RunRecord:
        with write_txn(self._writer) as conn:
            return rn.update_run_txn(conn, run_id, fields, event=event, now=self.now())

    # -- tasks
    def list_tasks(self, run_id: str) -> list[TaskRecord]:
        with read_txn(self.engine) as conn:
            return rn.list_tasks(conn, run_id)

    def task_rows(self, run_id: str) -> list[TaskRow]:
        with self._fast.read() as fast:
            return fq.task_rows(fast, run_id)

    def task_row_values(self, run_id: str) -> list[TaskRowValues]:
        with self._fast.read() as fast:
            return fq.task_row_values(fast, run_id)

    def task_row_changes(self, run_id: str, since: int | None, also: Collection[str] = ()) -> TaskRowChanges:
        with self._fast.read() as fast:
            return fq.task_row_changes(fast, run_id, since, also)

    def task_ids(self, run_id: str) -> list[str]:
        with self._fast.read() as fast:
            return fq.task_ids(fast, run_id)

    def update_task(self, run_id: str, task_id: str, *, event: str, **fields: Any) -> TaskRecord:
        with self._fast.write() as fast:
            return fw.update_task(fast, run_id, task_id, fields, event=event, now=self.now())

    def transition(
        self,
        run_id: str,
        task_id: str,
        *,
        from_state: str,
        to_state: str,
        reason: str,
        iteration: int,
        workflow_context: Mapping[str, Any],
        status: TaskStatus | None = None,
        events: Sequence[tuple[str, Mapping[str, Any]]] = (),
        consumed: int | None = None,
        **fields: Any,
    ) -> TaskRecord:
        with self._fast.write() as fast:
            return fw.transition(
                fast,
                run_id,
                task_id,
                from_state=from_state,
                to_state=to_state,
                reason=reason,
                iteration=iteration,
                workflow_context=workflow_context,
                status=status,
                fields=fields,
                now=self.now(),
                fault=self._fault,
                events=events,
                consumed=consumed,
            )

    def transitions(self, run_id: str, task_id: str) -> list[TransitionRecord]:
        with self._fast.read() as fast:
            return fq.list_transitions(fast, run_id, task_id)

    # -- events
    def append_event(self, run_id: str, kind: str, payload: Mapping[str, Any], *, task_id: str | None = None) -> int:
        with self._fast.write() as fast:
            return fw.append_event(fast, run_id, task_id, kind, dict(payload), self.now())

    def events(
        self,
        run_id: str,
        task_id: str | None = None,
        after_id: int = 0,
        limit: int | None = None,
        *,
        kind: str | None = None,
    ) -> list[EventRecord]:
        with self._fast.read() as fast:
            return fq.list_events(fast, run_id, task_id, after_id, limit, kind=kind)

    def task_history(self, run_id: str, task_id: str) -> list[HistoryEntry]:
        with read_txn(self.engine) as conn:
            return hist.task_history(conn, run_id, task_id)

    def events_of_kind(self, run_id: str, kinds: Sequence[str]) -> list[EventRecord]:
        with read_txn(self.engine) as conn:
            return pe.events_of_kind(conn, run_id, kinds)

    # -- plan edits
    def apply_plan_edit(
        self,
        run_id: str,
        *,
        added: Sequence[Task],
        updated: Sequence[Task],
        cancelled: Sequence[pe.Cancel],
        reason: str,
        event: str,
        payload: Mapping[str, Any],
    ) -> list[TaskRecord]:
        with write_txn(self._writer) as conn:
            return pe.apply_plan_edit_txn(
                conn,
                run_id,
                added=added,
                updated=updated,
                cancelled=cancelled,
                reason=reason,
                event=event,
                payload=payload,
                now=self.now(),
            )


__all__ = ["STATE_DIR", "STATE_FILE", "Clock", "SqliteStore", "default_store_path", "open_store", "utc_now"]
