"""`pm-agent status` and `pm-agent log TASK`: the store's view of a run, as data and as text.

`status_data` builds a JSON-serializable dict (what `status --json` prints); `render_status` turns
that dict (not the store) into a Rich renderable, so the JSON and the screen always agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from pm_agent.plan.models import TaskStatus
from pm_agent.store import EscalationStatus, HistoryEntry, RiskStatus, RunRecord, SessionStatus, Store

TASK_COLUMNS = ("task_id", "title", "tier", "status", "state", "attempt", "retry_count", "commit_sha")
_LIVE = frozenset({SessionStatus.STARTING, SessionStatus.RUNNING})
_STATUS_STYLE = {
    "completed": "green",
    "in_progress": "cyan",
    "ready": "blue",
    "failed": "red",
    "escalated": "magenta",
    "pending": "dim",
}


def _run_summary(run: RunRecord) -> dict[str, Any]:
    return run.model_dump(mode="json", include={"id", "plan_id", "status", "created_at", "updated_at"})


def status_data(store: Store, run_id: str | None = None) -> dict[str, Any]:
    """The status of `run_id` (default: the latest run) as plain JSON-ready data.

    Keys: `run` (the run, or None when there is none), `runs` (all runs, newest first), `tasks`
    (plan order), `by_status` / `by_state` (task ids grouped), `counts`, `open_escalations`,
    `cost` (summed over every agent session of the run), `open_risks`.
    NotFoundError if `run_id` is given and unknown.
    """
    runs = [_run_summary(r) for r in store.list_runs()]
    run = store.get_run(run_id) if run_id is not None else store.latest_run()
    data: dict[str, Any] = {
        "run": None,
        "runs": runs,
        "tasks": [],
        "by_status": {},
        "by_state": {},
        "counts": {"total": 0, "done": 0, "status": {s.value: 0 for s in TaskStatus}, "state": {}},
        "open_escalations": [],
        "cost": {"usd": 0.0, "input_tokens": 0, "output_tokens": 0, "sessions": 0, "live_sessions": 0},
        "open_risks": 0,
    }
    if run is None:
        return data
    data["run"] = run.model_dump(mode="json")
    tasks = store.list_tasks(run.id)
    data["tasks"] = [t.model_dump(mode="json", include=set(TASK_COLUMNS)) for t in tasks]
    counts = data["counts"]
    counts["total"] = len(tasks)
    for task in tasks:
        data["by_status"].setdefault(task.status.value, []).append(task.task_id)
        data["by_state"].setdefault(task.state.value, []).append(task.task_id)
        counts["status"][task.status.value] += 1
        counts["state"][task.state.value] = counts["state"].get(task.state.value, 0) + 1
    counts["done"] = counts["status"][TaskStatus.COMPLETED.value]
    data["open_escalations"] = [
        e.model_dump(mode="json") for e in store.list_escalations(run.id, EscalationStatus.OPEN)
    ]
    sessions = store.list_sessions(run.id)
    data["cost"] = {
        "usd": round(sum(s.cost_usd for s in sessions), 6),
        "input_tokens": sum(s.input_tokens for s in sessions),
        "output_tokens": sum(s.output_tokens for s in sessions),
        "sessions": len(sessions),
        "live_sessions": sum(1 for s in sessions if s.status in _LIVE),
    }
    data["open_risks"] = sum(1 for r in store.list_risks(run.id) if r.status is RiskStatus.OPEN)
    return data


def render_status(data: dict[str, Any]) -> RenderableType:
    """A Rich view of `status_data(...)`: run header, task table, escalations, cost."""
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
    table = Table(show_header=True, header_style="bold", expand=False)
    for column in ("task", "title", "tier", "status", "state", "attempt"):
        table.add_column(column)
    for task in data["tasks"]:
        style = _STATUS_STYLE.get(task["status"], "")
        table.add_row(
            task["task_id"],
            task["title"],
            task["tier"],
            Text(task["status"], style=style),
            task["state"],
            str(task["attempt"]),
        )
    parts: list[RenderableType] = [header, summary, table]
    escalations = data["open_escalations"]
    if escalations:
        parts.append(Text(f"Open escalations ({len(escalations)}):", style="bold magenta"))
        for esc in escalations:
            where = f"task {esc['task_id']}" if esc["task_id"] else "run"
            blocking = "blocking" if esc["blocking"] else "not blocking"
            parts.append(Text(f"  #{esc['id']} [{where}, {blocking}] {esc['problem']}"))
    cost = data["cost"]
    parts.append(
        Text(
            f"Cost so far: ${cost['usd']:.4f} over {cost['sessions']} sessions "
            f"({cost['input_tokens']} in / {cost['output_tokens']} out tokens); "
            f"{cost['live_sessions']} live; {data['open_risks']} open risks"
        )
    )
    return Group(*parts)


def render_task_log(history: Sequence[HistoryEntry]) -> str:
    """`pm-agent log TASK`: one line per history entry, oldest first."""
    if not history:
        return "(no history)"
    width = max(len(entry.kind) for entry in history)
    lines = []
    for entry in history:
        when = entry.at.strftime("%Y-%m-%d %H:%M:%S")
        lines.append(f"{when}  {entry.source:<10}  {entry.kind:<{width}}  {entry.summary}".rstrip())
    return "\n".join(lines)
