"""The store's hot reads in plain `sqlite3` (see `_fast`): tasks, sessions, signals, gate results, events;
and the two writes with no event (a session's heartbeat and its transcript lines).

The SQLAlchemy modules call these too (on `_fast.raw(conn)`), so each read has one implementation.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from pm_agent.errors import NotFoundError
from pm_agent.redaction import redact
from pm_agent.store._fast import Columns, db_time, insert, require_run, require_task
from pm_agent.store._json import dump_json
from pm_agent.store.records import (
    EventRecord,
    GateResultRecord,
    SessionRecord,
    SignalRecord,
    TaskRecord,
    TaskRow,
    TaskRowChanges,
    TaskRowValues,
    TransitionRecord,
)

TASKS = Columns("tasks")
SESSIONS = Columns("sessions")
SIGNALS = Columns("signals")
EVENTS = Columns("events")
TRANSITIONS = Columns("transitions")
GATES = Columns("gate_results")


# (run id, task id) -> the row last read and its record. A record is a function of its row alone, and it is frozen,
# so a row read unchanged gives back the record already built: the loop reads each task in flight a few dozen times
# a task, mostly unchanged, and building one (decoding its JSON, validating) costs ~30 us against ~2 us to compare.
_TASK_CACHE: dict[tuple[str, str], tuple[tuple[Any, ...], TaskRecord]] = {}
TASK_CACHE_MAX = 512  # a run has at most a few slots' worth of hot tasks; past this the cache starts over


def get_task(conn: sqlite3.Connection, run_id: str, task_id: str) -> TaskRecord:
    """The task; NotFoundError naming the run or the task if either is unknown."""
    row = conn.execute(f"{TASKS.select} WHERE run_id = ? AND task_id = ?", (run_id, task_id)).fetchone()
    if row is None:
        require_run(conn, run_id)
        raise NotFoundError(f"unknown task {task_id!r} in run {run_id!r}")
    key = (run_id, task_id)
    cached = _TASK_CACHE.get(key)
    if cached is not None and cached[0] == row:
        return cached[1]
    record = TASKS.record(row, TaskRecord)
    if len(_TASK_CACHE) >= TASK_CACHE_MAX:
        _TASK_CACHE.clear()
    _TASK_CACHE[key] = (tuple(row), record)
    return record


_ROW = "task_id, state, status, commit_sha, iteration_count, retry_count, workflow_context"


def task_row_values(conn: sqlite3.Connection, run_id: str) -> list[TaskRowValues]:
    """Every task's moving fields in plan order, as stored; NotFoundError if the run is unknown."""
    require_run(conn, run_id)
    return conn.execute(f"SELECT {_ROW} FROM tasks WHERE run_id = ? ORDER BY plan_order", (run_id,)).fetchall()


# The journal's triggers (migration 006): without all three it may miss a change, so nothing is read from it.
_TRIGGERS = "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name IN ({})".format(
    ", ".join(f"'task_changes_{name}'" for name in ("insert", "update", "delete"))
)


def task_row_changes(
    conn: sqlite3.Connection, run_id: str, since: int | None, also: Collection[str] = ()
) -> TaskRowChanges:
    """The rows of the run's tasks changed after the journal's `since` and those of `also`, in plan order, and the
    ids of tasks deleted since; every row when `since` is None or the journal's triggers are missing."""
    seq = conn.execute("SELECT coalesce(max(seq), 0) FROM task_changes").fetchone()[0]
    if since is None or conn.execute(_TRIGGERS).fetchone()[0] != 3:
        return TaskRowChanges(task_row_values(conn, run_id), None, seq)
    require_run(conn, run_id)
    also = list(also)
    sql = (
        f"SELECT {_ROW}, t.plan_order FROM task_changes c JOIN tasks t USING (run_id, task_id)"
        " WHERE c.run_id = ? AND c.seq > ?"
    )
    if also:
        marks = ", ".join("?" * len(also))
        sql += f" UNION SELECT {_ROW}, plan_order FROM tasks WHERE run_id = ? AND task_id IN ({marks})"
    found = conn.execute(f"{sql} ORDER BY plan_order", (run_id, since, run_id, *also) if also else (run_id, since))
    rows: list[TaskRowValues] = [row[:-1] for row in found.fetchall()]
    gone_sql = (
        "SELECT task_id FROM task_changes c WHERE run_id = ? AND seq > ?"
        " AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.run_id = c.run_id AND t.task_id = c.task_id) ORDER BY seq"
    )
    gone = [row[0] for row in conn.execute(gone_sql, (run_id, since)).fetchall()]
    return TaskRowChanges(rows, gone, seq)


def task_rows(conn: sqlite3.Connection, run_id: str) -> list[TaskRow]:
    """Every task's moving fields in plan order; NotFoundError if the run is unknown."""
    return [TaskRow.of(values) for values in task_row_values(conn, run_id)]


def task_ids(conn: sqlite3.Connection, run_id: str) -> list[str]:
    """The run's task ids in plan order; NotFoundError if the run is unknown."""
    require_run(conn, run_id)
    return [r[0] for r in conn.execute("SELECT task_id FROM tasks WHERE run_id = ? ORDER BY plan_order", (run_id,))]


def list_transitions(conn: sqlite3.Connection, run_id: str, task_id: str) -> list[TransitionRecord]:
    """A task's transitions in order; NotFoundError naming the run or the task if either is unknown."""
    rows = conn.execute(
        f"{TRANSITIONS.select} WHERE run_id = ? AND task_id = ? ORDER BY seq", (run_id, task_id)
    ).fetchall()
    if not rows:  # no transition yet, or no such task: only then is it worth a look
        require_task(conn, run_id, task_id)
    return [TRANSITIONS.record(r, TransitionRecord) for r in rows]


def _require_session(conn: sqlite3.Connection, session_id: int) -> None:
    if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
        raise NotFoundError(f"unknown session {session_id!r}")


def get_session(conn: sqlite3.Connection, session_id: int) -> SessionRecord:
    """The session; NotFoundError if unknown."""
    row = conn.execute(f"{SESSIONS.select} WHERE id = ?", (session_id,)).fetchone()
    if row is None:
        raise NotFoundError(f"unknown session {session_id!r}")
    return SESSIONS.record(row, SessionRecord)


def list_sessions(conn: sqlite3.Connection, run_id: str, task_id: str | None = None) -> list[SessionRecord]:
    """Sessions of a run (or task), oldest first."""
    require_run(conn, run_id)
    if task_id is None:
        rows = conn.execute(f"{SESSIONS.select} WHERE run_id = ? ORDER BY id", (run_id,))
    else:
        rows = conn.execute(f"{SESSIONS.select} WHERE run_id = ? AND task_id = ? ORDER BY id", (run_id, task_id))
    return [SESSIONS.record(r, SessionRecord) for r in rows]


def sessions_cost(conn: sqlite3.Connection, run_id: str) -> float:
    """What every agent session of the run cost."""
    require_run(conn, run_id)
    row = conn.execute("SELECT coalesce(sum(cost_usd), 0.0) FROM sessions WHERE run_id = ?", (run_id,)).fetchone()
    return float(row[0])


def signals_for_session(conn: sqlite3.Connection, session_id: int) -> list[SignalRecord]:
    """Signals a session sent, by seq; NotFoundError if the session is unknown."""
    _require_session(conn, session_id)
    rows = conn.execute(f"{SIGNALS.select} WHERE session_id = ? ORDER BY seq", (session_id,))
    return [SIGNALS.record(r, SignalRecord) for r in rows]


def get_signal(conn: sqlite3.Connection, signal_id: int) -> SignalRecord:
    """The signal; NotFoundError if unknown."""
    row = conn.execute(f"{SIGNALS.select} WHERE id = ?", (signal_id,)).fetchone()
    if row is None:
        raise NotFoundError(f"unknown signal {signal_id!r}")
    return SIGNALS.record(row, SignalRecord)


def gate_results_of(
    conn: sqlite3.Connection, run_id: str, task_id: str, attempt: int | None = None
) -> list[GateResultRecord]:
    """Gate verdicts for a task (one attempt, or all), oldest first."""
    require_task(conn, run_id, task_id)
    sql = f"{GATES.select} WHERE run_id = ? AND task_id = ?"
    params: tuple[Any, ...] = (run_id, task_id)
    if attempt is not None:
        sql, params = sql + " AND attempt = ?", (*params, attempt)
    return [GATES.record(r, GateResultRecord) for r in conn.execute(sql + " ORDER BY id", params)]


def list_events(
    conn: sqlite3.Connection,
    run_id: str,
    task_id: str | None = None,
    after_id: int = 0,
    limit: int | None = None,
    *,
    kind: str | None = None,
) -> list[EventRecord]:
    """Events of a run (or of one task; of one kind), oldest first, with id > after_id; NotFoundError if the run
    is unknown."""
    require_run(conn, run_id)
    sql = f"{EVENTS.select} WHERE run_id = ? AND id > ?"
    params: tuple[Any, ...] = (run_id, after_id)
    if task_id is not None:
        sql, params = sql + " AND task_id = ?", (*params, task_id)
    if kind is not None:  # the other kinds' payloads are not decoded
        sql, params = sql + " AND kind = ?", (*params, kind)
    sql += " ORDER BY id"
    if limit is not None:
        sql, params = sql + " LIMIT ?", (*params, limit)
    return [EVENTS.record(r, EventRecord) for r in conn.execute(sql, params)]


def touch_session(conn: sqlite3.Connection, session_id: int, at: datetime) -> None:
    """Set last_output_at only."""
    cursor = conn.execute("UPDATE sessions SET last_output_at = ? WHERE id = ?", (db_time(at), session_id))
    if cursor.rowcount != 1:
        raise NotFoundError(f"unknown session {session_id!r}")


def record_session_events(
    conn: sqlite3.Connection, session_id: int, lines: Sequence[tuple[int, str, Any]], now: datetime
) -> int:
    """Store printed lines, (seq, kind, payload) each, secrets redacted; a (session, seq) already there is
    skipped. The number stored."""
    _require_session(conn, session_id)
    stored = 0
    for seq, kind, payload in lines:
        found = conn.execute("SELECT id FROM session_events WHERE session_id = ? AND seq = ?", (session_id, seq))
        if found.fetchone() is not None:
            continue
        cleaned = redact(payload)
        text = cleaned if isinstance(cleaned, str) else dump_json(cleaned)
        values = {"session_id": session_id, "seq": seq, "kind": kind, "payload": text, "created_at": db_time(now)}
        insert(conn, "session_events", values)
        stored += 1
    return stored
