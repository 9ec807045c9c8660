"""`pm-agent status` and `pm-agent log TASK`: a run's state file as data and as text.

`status_data` builds a JSON-serializable dict (what `status --json` prints) from a read-only connection
(`state_reader.read_state`); `render_status` turns that dict (not the file) into a Rich renderable, so the JSON and
the screen always agree. Neither imports the store: see `state_reader` for why.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from rich.console import Group, RenderableType
from rich.text import Text

from pm_agent.internal_tasks import is_pm_internal
from pm_agent.reports import state_reader as sr

TASK_COLUMNS = sr.TASK_COLUMNS
_STATUS_STYLE = {
    "completed": "green",
    "in_progress": "cyan",
    "ready": "blue",
    "failed": "red",
    "escalated": "magenta",
    "pending": "dim",
}


class LogLine(Protocol):
    """What `render_task_log` reads of a history entry (a store HistoryEntry or a state_reader LogEntry)."""

    @property
    def at(self) -> datetime: ...
    @property
    def source(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def summary(self) -> str: ...


def status_data(con: sqlite3.Connection, run_id: str | None = None) -> dict[str, Any]:
    """The status of `run_id` (default: the latest run) as plain JSON-ready data.

    Keys: `run` (the run, or None when there is none), `runs` (all runs, newest first), `tasks` (every task of the
    plan and its remediations, plan order; pm-internal rows left out), `by_status` / `by_state` (task ids grouped),
    `counts`, `open_escalations`, `cost` (summed over every agent session of the run), `open_risks`, and `github`
    (pending outbox rows, last error) for a run with the GitHub bridge. NotFoundError if `run_id` is given and unknown.
    """
    run = sr.find_run(con, run_id)
    data: dict[str, Any] = {
        "run": run,
        "runs": sr.run_summaries(con),
        "tasks": [],
        "by_status": {},
        "by_state": {},
        "counts": {"total": 0, "done": 0, "status": dict.fromkeys(sr.TASK_STATUSES, 0), "state": {}},
        "open_escalations": [],
        "cost": {"usd": 0.0, "input_tokens": 0, "output_tokens": 0, "sessions": 0, "live_sessions": 0},
        "open_risks": 0,
    }
    if run is None:
        return data
    # The plan's tasks only: a pm-internal row (the final review's record) is not work to count.
    tasks = [t for t in sr.task_rows(con, run["id"]) if not is_pm_internal(t["task_id"])]
    data["tasks"] = tasks
    for task in tasks:
        data["by_status"].setdefault(task["status"], []).append(task["task_id"])
        data["by_state"].setdefault(task["state"], []).append(task["task_id"])
    counts = data["counts"]
    counts["status"].update(Counter(t["status"] for t in tasks))
    counts["state"] = dict(sorted(Counter(t["state"] for t in tasks).items()))
    counts["total"] = len(tasks)
    counts["done"] = counts["status"]["completed"]
    data["open_escalations"] = sr.open_escalations(con, run["id"])
    data["cost"] = sr.cost(con, run["id"])
    data["open_risks"] = len(sr.open_risks(con, run["id"]))
    backlog = sr.github_backlog(con, run["id"])
    if backlog is not None:  # only runs with the GitHub bridge have the key
        data["github"] = backlog
    return data


def render_status(data: dict[str, Any], *, all_tasks: bool = False) -> RenderableType:
    """A Rich view of `status_data(...)`: run header, counts, the unfinished tasks (`all_tasks`: every task),
    escalations, cost."""
    run = data["run"]
    if run is None:
        return Text("No runs yet. Start one with `pm-agent run`.")
    counts = data["counts"]
    header = Text.assemble(
        (f"Run {run['id']}", "bold"),
        f"  plan {run['plan_id']}  [{run['status']}]  branch {run['working_branch']}",
        f"  at {run['current_sha'][:12]}",
    )
    tally = ", ".join(f"{n} {status}" for status, n in counts["status"].items() if n)
    summary = Text(f"Completed {counts['done']}/{counts['total']} tasks" + (f" ({tally})" if tally else ""))
    states = sorted(counts["state"].items(), key=lambda item: (-item[1], item[0]))
    by_state = Text("By state: " + (", ".join(f"{n} {state}" for state, n in states) or "none"))
    shown = data["tasks"] if all_tasks else [t for t in data["tasks"] if t["status"] != "completed"]
    parts: list[RenderableType] = [header, summary, by_state]
    if not all_tasks:
        hidden = len(data["tasks"]) - len(shown)
        parts.append(
            Text(f"Unfinished tasks: {len(shown)}" + (f" ({hidden} completed not shown: --all)" if hidden else ""))
        )
    if shown:
        parts.append(_task_table(shown))
    escalations = data["open_escalations"]
    if escalations:
        parts.append(Text(f"Open escalations ({len(escalations)}):", style="bold magenta"))
        for esc in escalations:
            where = f"task {esc['task_id']}" if esc["task_id"] else "run"
            blocking = "blocking" if esc["blocking"] else "not blocking"
            parts.append(Text(f"  #{esc['id']} [{where}, {blocking}] {esc['problem']}"))
    github = data.get("github")
    if github is not None:
        error = f", last error: {github['last_error']}" if github["last_error"] else ""
        parts.append(Text(f"GitHub: {github['pending']} pending{error}"))
    cost = data["cost"]
    parts.append(
        Text(
            f"Cost so far: ${cost['usd']:.4f} over {cost['sessions']} sessions "
            f"({cost['input_tokens']} in / {cost['output_tokens']} out tokens); "
            f"{cost['live_sessions']} live; {data['open_risks']} open risks"
        )
    )
    return Group(*parts)


_TABLE_COLUMNS = (("task", "task_id"), ("title", "title"), ("tier", "tier"), ("status", "status"),
                  ("state", "state"), ("attempt", "attempt"))  # fmt: skip


def _task_table(tasks: Sequence[dict[str, Any]]) -> Text:
    """The tasks as aligned columns in one Text: a Rich Table measures every cell and takes ~0.7 s for 1,000 rows."""
    widths = {key: max(len(head), *(len(str(t[key])) for t in tasks)) for head, key in _TABLE_COLUMNS}
    last = _TABLE_COLUMNS[-1][1]
    text = Text()
    text.append("  ".join(head.ljust(widths[key]) for head, key in _TABLE_COLUMNS).rstrip() + "\n", style="bold")
    for task in tasks:
        for _, key in _TABLE_COLUMNS:
            cell = str(task[key]) if key == last else str(task[key]).ljust(widths[key]) + "  "
            text.append(cell, style=_STATUS_STYLE.get(task["status"], "") if key == "status" else "")
        text.append("\n")
    text.rstrip()
    return text


def render_task_log(history: Sequence[LogLine]) -> str:
    """`pm-agent log TASK`: one line per history entry, oldest first."""
    if not history:
        return "(no history)"
    width = max(len(entry.kind) for entry in history)
    lines = []
    for entry in history:
        when = entry.at.strftime("%Y-%m-%d %H:%M:%S")
        lines.append(f"{when}  {entry.source:<10}  {entry.kind:<{width}}  {entry.summary}".rstrip())
    return "\n".join(lines)
