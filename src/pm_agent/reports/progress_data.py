"""The progress report's data (seed 001 format, plus cost and tokens), read from the state file.

The engine's periodic report and `pm-agent status` both read the file with `state_reader` (no SQLAlchemy, no
pydantic: validating every task's contract for each report cost the loop O(tasks) per report), build their lines
with `task_lines`, so a task is "blocked" by one rule, and leave the pm-internal rows out
(`internal_tasks.is_pm_internal`): the report counts the plan's tasks.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pm_agent.internal_tasks import is_pm_internal
from pm_agent.reports import state_reader as sr
from pm_agent.reports.progress import ProgressData, RiskLine, TaskLine, render_progress

# IssueState values (not imported: the lifecycle package is slow to import) a task waits in; a test keeps them valid.
BLOCKED_STATES: dict[str, str] = {
    "waiting_for_human_input": "waiting for a human answer",
    "waiting_for_requirements_clarification": "waiting for requirements clarification",
    "requires_human_intervention": "requires human intervention",
    "failed": "failed",
}
TaskRow = tuple[str, str, str, str, str]  # task_id, title, tier, status, state (plan order)
# The run-level events of a plan edited during the run (engine/reconcile.py writes them).
PLAN_RECONCILED = "plan.reconciled"
PLAN_REFUSED = "plan.refused"


def plan_edit_line(edits: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """`Plan edits: 2 applied, 1 refused (last: ...)` from (kind, payload) in order; "" when the plan never changed."""
    if not edits:
        return ""
    applied = sum(1 for kind, _ in edits if kind == PLAN_RECONCILED)
    refused = len(edits) - applied
    kind, payload = edits[-1]
    if kind == PLAN_REFUSED:
        last = f"refused: {payload.get('error', '')}"
    else:
        counts = payload.get("counts") or {}
        last = ", ".join(f"{n} {what}" for what, n in counts.items() if n and what != "unchanged") or "no task changed"
    return f"Plan edits: {applied} applied, {refused} refused (last {last})"


def task_lines(rows: Iterable[TaskRow], waiting_on: Mapping[str, Sequence[str]]) -> list[TaskLine]:
    """Each task's report line; a `received` task whose dependency (from `waiting_on`) is blocked says which."""
    rows = list(rows)
    state_of = {task_id: state for task_id, _, _, _, state in rows} if waiting_on else {}
    lines = []
    for task_id, title, tier, status, state in rows:
        reason = BLOCKED_STATES.get(state, "")
        if not reason and waiting_on and state == "received":
            stuck = [d for d in waiting_on.get(task_id, ()) if state_of.get(d) in BLOCKED_STATES]
            if stuck:
                reason = "depends on blocked " + ", ".join(f"task-{d}" for d in stuck)
        lines.append(TaskLine(task_id, title, tier, status, state, reason))
    return lines


def progress_text(db_path: Path, run_id: str, plan_name: str) -> str:
    """The rendered report, read from the state file (the engine's periodic report and `status` read alike)."""
    return sr.read_state(db_path, lambda con: render_progress(file_progress_data(con, run_id, plan_name)))


def file_progress_data(
    con: sqlite3.Connection, run_id: str, plan_name: str, tasks: Sequence[Mapping[str, Any]] | None = None
) -> ProgressData:
    """What `progress_data` gives, read from a state file connection (`state_reader.read_state`).

    `tasks`: the run's `state_reader.task_rows` when the caller has them already.
    """
    if tasks is None:
        rows = sr.task_lines_rows(con, run_id)
    else:
        rows = [(t["task_id"], t["title"], t["tier"], t["status"], t["state"]) for t in tasks]
    rows = [row for row in rows if not is_pm_internal(row[0])]
    cost = sr.cost(con, run_id)
    return ProgressData(
        plan_name=plan_name,
        # Only a blocked task can make another wait on it: with none, the contracts need not be read at all.
        tasks=task_lines(rows, sr.waiting_on(con, run_id) if any(r[4] in BLOCKED_STATES for r in rows) else {}),
        risks=[RiskLine(*risk) for risk in sr.open_risks(con, run_id)],
        cost_usd=cost["usd"],
        input_tokens=cost["input_tokens"],
        output_tokens=cost["output_tokens"],
        plan_edits=plan_edit_line(_file_plan_edits(con, run_id)),
    )


def _file_plan_edits(con: sqlite3.Connection, run_id: str) -> list[tuple[str, Mapping[str, Any]]]:
    """The plan-edit events from the state file; run-level only (task_id NULL), so the (run, task) index serves."""
    sql = "SELECT kind, payload FROM events WHERE run_id = ? AND task_id IS NULL AND kind IN (?, ?) ORDER BY id"
    rows = con.execute(sql, (run_id, PLAN_RECONCILED, PLAN_REFUSED)).fetchall()
    return [(kind, json.loads(payload) if payload else {}) for kind, payload in rows]
