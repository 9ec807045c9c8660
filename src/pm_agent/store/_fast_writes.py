"""The store's per-step writes in plain `sqlite3` (see `_fast`): events, task updates and transitions,
sessions, consumed signals, gate results.

Each runs inside the caller's one write transaction: `SqliteStore`'s `Connections.write()`, or a
SQLAlchemy write transaction through `_fast.raw` (a plan edit's transitions, `events.append_event_txn`).
`_event` is the one function that writes an event row.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pm_agent.errors import StoreError
from pm_agent.plan.enums import TaskStatus
from pm_agent.redaction import redact
from pm_agent.store._connect import FaultHook
from pm_agent.store._fast import Columns, db_json, db_time, insert, require_run, require_task
from pm_agent.store._fast_queries import GATES, SESSIONS, SIGNALS, TASKS, get_session, get_signal, get_task
from pm_agent.store._outbox_hooks import rows_after_event_sqlite
from pm_agent.store._sql import BULKY, SESSION_FIELDS, TASK_FIELDS, db_value, json_payload, merge
from pm_agent.store.records import (
    CommitRecord,
    GateResultRecord,
    SessionRecord,
    SessionStatus,
    SignalRecord,
    TaskRecord,
)


def _event(conn: sqlite3.Connection, run_id: str, task_id: str | None, kind: str, payload: Any, now: datetime) -> int:
    """An event row inside the caller's transaction (its run or task is known to exist), secrets redacted."""
    stored = redact(payload)
    values = {"run_id": run_id, "task_id": task_id, "kind": kind, "payload": db_json(stored),
              "created_at": db_time(now)}  # fmt: skip
    event_id = insert(conn, "events", values)
    rows_after_event_sqlite(conn, event_id, run_id, task_id, kind, stored, now)  # the outbox, in this transaction
    return event_id


def append_event(
    conn: sqlite3.Connection, run_id: str, task_id: str | None, kind: str, payload: dict[str, Any], now: datetime
) -> int:
    """Append one event (secrets redacted) after checking its run or task exists; its id."""
    if task_id is None:
        require_run(conn, run_id)
    else:
        require_task(conn, run_id, task_id)
    return _event(conn, run_id, task_id, kind, payload, now)


def _update(
    conn: sqlite3.Connection, cols: Columns, values: Mapping[str, Any], where: str, params: tuple[Any, ...]
) -> int:
    encoded = cols.encode(values)
    sets = ", ".join(f"{name} = ?" for name in encoded)
    cursor = conn.execute(f"UPDATE {cols.table} SET {sets} WHERE {where}", (*encoded.values(), *params))
    return cursor.rowcount


def transition(
    conn: sqlite3.Connection,
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
    fault: FaultHook | None,
    events: Sequence[tuple[str, Mapping[str, Any]]] = (),
    consumed: int | None = None,
) -> TaskRecord:
    """Compare-and-set the task's state, with its transitions row and `task.transition` event; first, in the same
    transaction, the task's `events` and the signal it `consumed` (a decision's writes, all or none)."""
    from_state, to_state = str(db_value(from_state)), str(db_value(to_state))
    if "state" in fields:
        raise StoreError("pass the new state as to_state, not as a field")
    for kind, payload in events:
        append_event(conn, run_id, task_id, kind, dict(payload), now)
    if consumed is not None:
        mark_signal_consumed(conn, consumed, now=now)
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
    where = "run_id = ? AND task_id = ? AND state = ?"
    count = _update(conn, TASKS, {**values, "state": to_state, "updated_at": now}, where, (run_id, task_id, from_state))
    if count != 1:
        raise StoreError(f"task {task_id!r} of run {run_id!r} left state {from_state!r} concurrently")
    if fault is not None:
        fault("transition.task_updated")
    last = conn.execute(
        "SELECT max(seq) FROM transitions WHERE run_id = ? AND task_id = ?", (run_id, task_id)
    ).fetchone()[0]
    seq = int(last or 0) + 1
    row = {
        "run_id": run_id,
        "task_id": task_id,
        "seq": seq,
        "from_state": from_state,
        "to_state": to_state,
        "reason": reason,
        "iteration": iteration,
        "created_at": db_time(now),
    }
    insert(conn, "transitions", row)
    if fault is not None:
        fault("transition.recorded")
    payload = {"seq": seq, "from": from_state, "to": to_state, "reason": reason, "iteration": iteration}
    payload.update(json_payload({k: v for k, v in values.items() if k != "workflow_context"}, skip=BULKY))
    _event(conn, run_id, task_id, "task.transition", payload, now)
    return get_task(conn, run_id, task_id)


def update_task(
    conn: sqlite3.Connection, run_id: str, task_id: str, fields: Mapping[str, Any], *, event: str, now: datetime
) -> TaskRecord:
    """Change task fields (validated; never `state`) and write `event`."""
    if "state" in fields:
        raise StoreError("a task's state changes only through transition(), which checks the old state")
    current = get_task(conn, run_id, task_id)
    _, values = merge(current, fields, TASK_FIELDS, "task")
    if values:
        _update(conn, TASKS, {**values, "updated_at": now}, "run_id = ? AND task_id = ?", (run_id, task_id))
    _event(conn, run_id, task_id, event, json_payload(values, skip=BULKY), now)
    return get_task(conn, run_id, task_id)


def create_session(
    conn: sqlite3.Connection,
    *,
    run_id: str,
    task_id: str,
    role: str,
    attempt: int,
    token: str,
    runner: str,
    workdir: str,
    resumed_from: int | None,
    now: datetime,
) -> SessionRecord:
    """Insert a `starting` session and a `session.created` event."""
    require_task(conn, run_id, task_id)
    if resumed_from is not None:
        get_session(conn, resumed_from)
    row = {
        "run_id": run_id,
        "task_id": task_id,
        "role": role,
        "attempt": attempt,
        "token": token,
        "runner": runner,
        "agent_session_id": None,
        "resumed_from": resumed_from,
        "status": SessionStatus.STARTING.value,
        "pid": None,
        "exit_code": None,
        "workdir": workdir,
        "started_at": now,
        "last_output_at": None,
        "ended_at": None,
        "cost_usd": 0.0,
        "input_tokens": 0,
        "output_tokens": 0,
        "last_lines": "",
    }
    session_id = insert(conn, "sessions", SESSIONS.encode(row))
    payload = {"session_id": session_id, "role": role, "attempt": attempt, "runner": runner,
               "resumed_from": resumed_from}  # fmt: skip
    _event(conn, run_id, task_id, "session.created", payload, now)
    return get_session(conn, session_id)


def update_session(
    conn: sqlite3.Connection, session_id: int, fields: Mapping[str, Any], *, now: datetime
) -> SessionRecord:
    """Change session fields (validated) and write a `session.updated` event."""
    current = get_session(conn, session_id)
    if isinstance(fields.get("last_lines"), str):
        fields = {**fields, "last_lines": redact(fields["last_lines"])}
    _, values = merge(current, fields, SESSION_FIELDS, "session")
    if values:
        _update(conn, SESSIONS, values, "id = ?", (session_id,))
    payload = {"session_id": session_id, **json_payload(values, skip=("last_lines",))}
    _event(conn, current.run_id, current.task_id, "session.updated", payload, now)
    return get_session(conn, session_id)


def mark_signal_consumed(conn: sqlite3.Connection, signal_id: int, *, now: datetime) -> SignalRecord:
    """Mark a signal acted on, with a `signal.consumed` event; a no-op if it already was."""
    signal = get_signal(conn, signal_id)
    if signal.consumed:
        return signal
    _update(conn, SIGNALS, {"consumed": True}, "id = ?", (signal_id,))
    _event(conn, signal.run_id, signal.task_id, "signal.consumed", {"signal_id": signal_id, "kind": signal.kind}, now)
    return get_signal(conn, signal_id)


def record_gate_results(
    conn: sqlite3.Connection,
    run_id: str,
    task_id: str,
    *,
    attempt: int,
    results: Sequence[tuple[str, bool, str]],
    now: datetime,
    events: Sequence[tuple[str, dict[str, Any]]] = (),
) -> list[GateResultRecord]:
    """A whole gate run's verdicts, each with its `gate.recorded` event, then `events` (kind, payload) of the
    task, in the caller's one transaction."""
    require_task(conn, run_id, task_id)
    ids = []
    for gate, passed, evidence in results:
        row = {"run_id": run_id, "task_id": task_id, "attempt": attempt, "gate": gate, "passed": passed,
               "evidence": redact(evidence), "created_at": now}  # fmt: skip
        gate_id = insert(conn, "gate_results", GATES.encode(row))
        payload = {"gate_result_id": gate_id, "gate": gate, "attempt": attempt, "passed": passed}
        _event(conn, run_id, task_id, "gate.recorded", payload, now)
        ids.append(gate_id)
    for kind, payload in events:
        _event(conn, run_id, task_id, kind, payload, now)
    marks = ", ".join("?" * len(ids))
    rows = conn.execute(f"{GATES.select} WHERE id IN ({marks}) ORDER BY id", ids) if ids else []
    return [GATES.record(r, GateResultRecord) for r in rows]


COMMITS = Columns("commits")


def record_commit(
    conn: sqlite3.Connection,
    run_id: str,
    task_id: str,
    *,
    sha: str,
    branch: str,
    message: str,
    now: datetime,
    fault: FaultHook | None,
) -> CommitRecord:
    """Record a task's commit, set task.commit_sha and run.current_sha, with a `commit.recorded` event.

    Idempotent on (run, task): the same sha again returns the stored record and writes nothing; a
    different sha is a StoreError (a task is committed once).
    """
    where = f"{COMMITS.select} WHERE run_id = ? AND task_id = ?"
    row = conn.execute(where, (run_id, task_id)).fetchone()
    if row is not None:
        existing = COMMITS.record(row, CommitRecord)
        if existing.sha != sha:
            raise StoreError(f"task {task_id!r} of run {run_id!r} is already committed as {existing.sha}")
        return existing
    require_task(conn, run_id, task_id)
    at = db_time(now)
    values = {"run_id": run_id, "task_id": task_id, "sha": sha, "branch": branch, "message": message, "created_at": at}
    insert(conn, "commits", values)
    if fault is not None:
        fault("commit.inserted")
    params = (sha, at, run_id, task_id)
    conn.execute("UPDATE tasks SET commit_sha = ?, updated_at = ? WHERE run_id = ? AND task_id = ?", params)
    conn.execute("UPDATE runs SET current_sha = ?, updated_at = ? WHERE id = ?", (sha, at, run_id))
    _event(conn, run_id, task_id, "commit.recorded", {"sha": sha, "branch": branch}, now)
    return COMMITS.record(conn.execute(where, (run_id, task_id)).fetchone(), CommitRecord)
