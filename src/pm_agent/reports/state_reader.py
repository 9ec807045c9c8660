"""Read-only queries over a run's state file for `pm-agent status` and `log`, with the stdlib's sqlite3.

Why not the Store: importing `pm_agent.store` costs about a second (SQLAlchemy, pydantic, the plan models,
detect-secrets) and `list_tasks` validates every task's contract through pydantic, while `status` on a run of
1,000 tasks and 100,000 events has 300 ms. So this module imports nothing heavier than sqlite3 and json, reads only
the columns it shows, counts and sums in SQL, and reads one task's events through the (run_id, task_id) index.
Its results are the Store's: the same JSON as the records' `model_dump(mode="json")` and the same history lines
(tests/reports/test_state_reader.py compares them on one file).

It never writes, not even SQLite's side files. A read-only connection to a WAL database creates `-wal` and `-shm`
and cannot remove them, so when no `-wal` exists (no connection has the file open) the file is read as
`immutable` and the read is kept only if the file is the same after it (same inode, size and mtime; still no
`-wal`), else read again; whenever a run has the file open (a `-wal` exists), a `mode=ro` connection reads one
snapshot through the WAL (and only SQLite's shared-memory read marks in `-shm` change).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from pm_agent.errors import NotFoundError, StoreError
from pm_agent.statefile import (
    HISTORY_RANK,
    MIRRORED_EVENTS,
    event_summary,
    gate_summary,
    session_summary,
    signal_summary,
    transition_summary,
)

T = TypeVar("T")

# TaskStatus values (pm_agent.plan.models, not imported: pydantic), in its order; a test keeps them equal.
TASK_STATUSES = ("pending", "ready", "in_progress", "completed", "failed", "escalated")
TASK_COLUMNS = ("task_id", "title", "tier", "status", "state", "attempt", "retry_count", "commit_sha")
RUN_COLUMNS = (
    "id", "plan_id", "plan_doc", "design_doc", "baseline_sha", "current_sha", "working_branch", "shared_context",
    "config", "status", "checkpoint_tags", "created_at", "updated_at",
)  # fmt: skip
ESCALATION_COLUMNS = (
    "id", "run_id", "task_id", "source", "problem", "impact", "options", "recommended", "blocking", "status",
    "answer", "session_id", "created_at", "answered_at",
)  # fmt: skip
_RUN_JSON = ("shared_context", "config", "checkpoint_tags")
_LIVE_SESSIONS = ("starting", "running")
_IMMUTABLE_TRIES = 3  # immutable reads spoiled by a writer before settling for a mode=ro connection


@dataclass(frozen=True)
class LogEntry:
    """One line of `pm-agent log TASK` (the fields `render_task_log` reads from a store HistoryEntry)."""

    at: datetime
    source: str
    kind: str
    summary: str


def normalize_task_id(raw: str) -> str:
    """A task id as stored: `task-07` -> `07` (plan.fields.normalize_task_id, whose package is slow to import)."""
    return re.sub(r"^task[\s_-]*", "", raw.strip(), flags=re.IGNORECASE)


def _utc(text: str | None) -> datetime | None:
    """A stored timestamp (naive UTC text, as SQLAlchemy writes it on SQLite) as an aware datetime."""
    return None if text is None else datetime.fromisoformat(text).replace(tzinfo=UTC)


def iso(text: str | None) -> str | None:
    """A stored timestamp as the records' JSON shows it (pydantic: ISO 8601, `Z` for UTC)."""
    at = _utc(text)
    return None if at is None else at.isoformat().replace("+00:00", "Z")


def _stamp(path: Path) -> tuple[int, int, int, bool]:
    """What changes when anyone writes the file: its inode, size and mtime, and whether a `-wal` exists."""
    st = path.stat()
    return st.st_ino, st.st_size, st.st_mtime_ns, path.with_name(path.name + "-wal").exists()


def _connect(path: Path, mode: str) -> sqlite3.Connection:
    con = sqlite3.connect(f"file:{quote(str(path.resolve()))}?{mode}", uri=True, isolation_level=None)
    con.row_factory = sqlite3.Row
    return con


def read_state(path: Path, read: Callable[[sqlite3.Connection], T]) -> T:
    """`read(connection)` on the state file at `path`, which must exist; writes nothing (see the module doc).

    Database errors become StoreError naming the file.
    """
    try:
        for _ in range(_IMMUTABLE_TRIES):
            before = _stamp(path)
            if before[3]:  # a -wal: a writer has (or a crashed one had) the file open
                break
            try:
                with closing(_connect(path, "mode=ro&immutable=1")) as con:
                    result = read(con)
            except Exception:
                if _stamp(path) == before:  # the file did not change: the error is the file's, not a torn read
                    raise
                continue
            if _stamp(path) == before:  # nobody wrote meanwhile: what was read is one consistent state
                return result
        with closing(_connect(path, "mode=ro")) as con:
            con.execute("BEGIN")  # one snapshot for every query of `read`
            try:
                return read(con)
            finally:
                con.execute("ROLLBACK")
    except sqlite3.Error as exc:
        raise StoreError(f"cannot read {path}: {exc}") from exc


# ---- runs --------------------------------------------------------------------------------------


def _run_json(row: sqlite3.Row) -> dict[str, Any]:
    data = {name: row[name] for name in RUN_COLUMNS}
    for name in _RUN_JSON:
        data[name] = json.loads(data[name])
    data["created_at"], data["updated_at"] = iso(row["created_at"]), iso(row["updated_at"])
    return data


def find_run(con: sqlite3.Connection, run_id: str | None) -> dict[str, Any] | None:
    """The run `run_id` (NotFoundError if unknown) or, with None, the newest run (None if there is none)."""
    columns = ", ".join(RUN_COLUMNS)
    if run_id is None:
        row = con.execute(f"SELECT {columns} FROM runs ORDER BY created_at DESC, id DESC LIMIT 1").fetchone()
        return None if row is None else _run_json(row)
    row = con.execute(f"SELECT {columns} FROM runs WHERE id = ?", (run_id,)).fetchone()
    if row is None:
        raise NotFoundError(f"unknown run {run_id!r}")
    return _run_json(row)


def run_summaries(con: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every run, newest first: id, plan_id, status, created_at, updated_at."""
    rows = con.execute("SELECT id, plan_id, status, created_at, updated_at FROM runs ORDER BY created_at DESC, id DESC")
    return [{**dict(row), "created_at": iso(row["created_at"]), "updated_at": iso(row["updated_at"])} for row in rows]


def stored_reports(con: sqlite3.Connection, run_id: str, kind: str | None = None) -> list[tuple[str, str, str]]:
    """(kind, created_at as ISO text, text) of the run's stored reports, oldest first; `kind` filters."""
    sql = "SELECT kind, created_at, text FROM reports WHERE run_id = ?" + (" AND kind = ?" if kind else "")
    rows = con.execute(sql + " ORDER BY id", (run_id, kind) if kind else (run_id,))
    return [(row["kind"], iso(row["created_at"]) or "", row["text"]) for row in rows]


# ---- tasks -------------------------------------------------------------------------------------


def task_rows(con: sqlite3.Connection, run_id: str) -> list[dict[str, Any]]:
    """Every task of the run in plan order, with only the TASK_COLUMNS (no contract, no JSON to parse)."""
    sql = f"SELECT {', '.join(TASK_COLUMNS)} FROM tasks WHERE run_id = ? ORDER BY plan_order"
    return [dict(row) for row in con.execute(sql, (run_id,))]


def task_lines_rows(con: sqlite3.Connection, run_id: str) -> list[tuple[str, str, str, str, str]]:
    """(task_id, title, tier, status, state) of every task in plan order, as plain tuples: the progress report's."""
    cursor = con.cursor()
    cursor.row_factory = None  # tuples, not Rows turned into dicts: the engine reports every third task
    sql = "SELECT task_id, title, tier, status, state FROM tasks WHERE run_id = ? ORDER BY plan_order"
    return cursor.execute(sql, (run_id,)).fetchall()


def count_by(con: sqlite3.Connection, run_id: str, column: str) -> dict[str, int]:
    """How many tasks of the run have each value of `column` (status or state), counted by SQL."""
    if column not in ("status", "state", "tier"):
        raise ValueError(f"cannot count tasks by {column!r}")
    sql = f"SELECT {column}, COUNT(*) FROM tasks WHERE run_id = ? GROUP BY {column} ORDER BY {column}"
    return {str(value): int(n) for value, n in con.execute(sql, (run_id,))}


def waiting_on(con: sqlite3.Connection, run_id: str) -> dict[str, list[str]]:
    """The dependency ids of each task still in state `received`, from its stored contract."""
    sql = "SELECT task_id, contract FROM tasks WHERE run_id = ? AND state = 'received' ORDER BY plan_order"
    return {
        task_id: [d["task_id"] for d in json.loads(contract).get("depends_on", [])]
        for task_id, contract in con.execute(sql, (run_id,))
    }


# ---- sessions, escalations, risks --------------------------------------------------------------


def cost(con: sqlite3.Connection, run_id: str) -> dict[str, Any]:
    """Cost, tokens and sessions of the run, summed by SQL: the keys of `status --json`'s `cost`."""
    live = ", ".join(f"'{s}'" for s in _LIVE_SESSIONS)
    row = con.execute(
        "SELECT TOTAL(cost_usd), TOTAL(input_tokens), TOTAL(output_tokens), COUNT(*),"
        f" TOTAL(status IN ({live})) FROM sessions WHERE run_id = ?",
        (run_id,),
    ).fetchone()
    usd, tokens_in, tokens_out, sessions, live_sessions = row
    return {
        "usd": round(usd, 6),
        "input_tokens": int(tokens_in),
        "output_tokens": int(tokens_out),
        "sessions": sessions,
        "live_sessions": int(live_sessions),
    }


def open_escalations(con: sqlite3.Connection, run_id: str) -> list[dict[str, Any]]:
    """The run's open escalations, oldest first, as EscalationRecord's JSON."""
    sql = f"SELECT {', '.join(ESCALATION_COLUMNS)} FROM escalations WHERE run_id = ? AND status = 'open' ORDER BY id"
    found = []
    for row in con.execute(sql, (run_id,)):
        data = dict(row)
        data["options"] = json.loads(data["options"])
        data["blocking"] = bool(data["blocking"])
        data["created_at"], data["answered_at"] = iso(data["created_at"]), iso(data["answered_at"])
        found.append(data)
    return found


def open_risks(con: sqlite3.Connection, run_id: str) -> list[tuple[str, str, str]]:
    """(id, description, severity) of the run's open risks, in the order added."""
    sql = "SELECT id, description, severity FROM risks WHERE run_id = ? AND status = 'open' ORDER BY created_at, id"
    return [(r[0], r[1], r[2]) for r in con.execute(sql, (run_id,))]


def github_backlog(con: sqlite3.Connection, run_id: str) -> dict[str, Any] | None:
    """The GitHub bridge's unsent outbox rows and the newest error among them; None when the run has no outbox."""
    if con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'outbox'").fetchone() is None:
        return None  # a state file from before the bridge
    total, pending = con.execute(
        "SELECT COUNT(*), TOTAL(sent_at IS NULL) FROM outbox WHERE run_id = ?", (run_id,)
    ).fetchone()
    if not total:
        return None
    error = con.execute(
        "SELECT last_error FROM outbox WHERE run_id = ? AND sent_at IS NULL AND last_error IS NOT NULL"
        " ORDER BY id DESC LIMIT 1",
        (run_id,),
    ).fetchone()
    return {"pending": int(pending), "last_error": error[0] if error else None}


# ---- one task's history ------------------------------------------------------------------------


def _history_rows(con: sqlite3.Connection, run_id: str, task_id: str) -> Iterator[tuple[int, LogEntry]]:
    """(tie-break id, entry) from each table, each read through its (run, task) index."""
    key = (run_id, task_id)
    for r in con.execute(
        "SELECT seq, from_state, to_state, reason, iteration, created_at FROM transitions"
        " WHERE run_id = ? AND task_id = ? ORDER BY seq",
        key,
    ):
        summary = transition_summary(r["from_state"], r["to_state"], r["reason"], r["iteration"])
        yield r["seq"], LogEntry(_at(r), "transition", "transition", summary)
    for r in con.execute(
        "SELECT id, role, attempt, runner, resumed_from, started_at AS created_at FROM sessions"
        " WHERE run_id = ? AND task_id = ? ORDER BY id",
        key,
    ):
        summary = session_summary(r["id"], r["role"], r["attempt"], r["runner"], r["resumed_from"])
        yield r["id"], LogEntry(_at(r), "session", "session.started", summary)
    for r in con.execute(
        "SELECT id, kind, session_id, attempt, seq, accepted, reason, created_at FROM signals"
        " WHERE run_id = ? AND task_id = ? ORDER BY id",
        key,
    ):
        summary = signal_summary(r["kind"], r["session_id"], r["attempt"], r["seq"], bool(r["accepted"]), r["reason"])
        yield r["id"], LogEntry(_at(r), "signal", f"signal.{r['kind']}", summary)
    for r in con.execute(
        "SELECT id, gate, passed, attempt, created_at FROM gate_results WHERE run_id = ? AND task_id = ? ORDER BY id",
        key,
    ):
        summary = gate_summary(r["gate"], bool(r["passed"]), r["attempt"])
        yield r["id"], LogEntry(_at(r), "gate", "gate", summary)
    mirrored = ", ".join(f"'{kind}'" for kind in sorted(MIRRORED_EVENTS))
    for r in con.execute(
        "SELECT id, kind, payload, created_at FROM events"
        f" WHERE run_id = ? AND task_id = ? AND kind NOT IN ({mirrored}) ORDER BY id",
        key,
    ):
        summary = event_summary(json.loads(r["payload"]))
        yield r["id"], LogEntry(_at(r), "event", r["kind"], summary)


def _at(row: sqlite3.Row) -> datetime:
    return datetime.fromisoformat(row["created_at"]).replace(tzinfo=UTC)  # NOT NULL in every history table


def task_log(con: sqlite3.Connection, run_id: str, task_id: str) -> list[LogEntry]:
    """What `Store.task_history` returns, as LogEntry: oldest first, ties by source then id.

    NotFoundError naming the run or the task if either is unknown.
    """
    if con.execute("SELECT 1 FROM tasks WHERE run_id = ? AND task_id = ?", (run_id, task_id)).fetchone() is None:
        find_run(con, run_id)
        raise NotFoundError(f"unknown task {task_id!r} in run {run_id!r}")
    keyed = sorted(_history_rows(con, run_id, task_id), key=lambda k: (k[1].at, HISTORY_RANK[k[1].source], k[0]))
    return [entry for _, entry in keyed]
