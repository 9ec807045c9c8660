"""What `pm-agent status` and `pm-agent log` do and print, without Typer (see `fastpath.py`) or the store.

Both read the state file through `reports.state_reader` and write nothing; with no state yet, `status` says how to
start and `log` is a NotFoundError (exit 2). Errors are pm-agent errors for the caller to print.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from pm_agent.cli.basics import out, print_json, repo_root
from pm_agent.errors import NotFoundError
from pm_agent.reports.state_reader import (
    LogEntry,
    find_run,
    normalize_task_id,
    read_state,
    stored_reports,
    task_log,
)
from pm_agent.statefile import default_store_path


def _status_with_progress(path: Path, run: str | None) -> dict[str, Any]:
    """The run's status data and its progress report (seed 001: on request), in one read; nothing is stored."""
    from pm_agent.reports.progress import render_progress
    from pm_agent.reports.progress_data import file_progress_data
    from pm_agent.reports.status import status_data

    def read(con: sqlite3.Connection) -> dict[str, Any]:
        data = status_data(con, run)
        if data["run"] is not None:
            run_id, plan = data["run"]["id"], data["run"]["plan_id"]
            data["progress_report"] = render_progress(file_progress_data(con, run_id, plan, data["tasks"]))
        return data

    return read_state(path, read)


def show_status(run: str | None, repo: Path | None, as_json: bool, all_tasks: bool) -> None:
    """`pm-agent status [RUN] [-C REPO] [--json] [--all]`."""
    from pm_agent.engine.runlock import lock_holder
    from pm_agent.reports.status import render_status

    root = repo_root(repo)
    path = default_store_path(root)
    if not path.exists():
        if as_json:
            print_json({"run": None, "runs": []})
            return
        out.print(f"No pm-agent state in {path.parent} yet: start with `pm-agent run PLAN.md`.")
        return
    data = _status_with_progress(path, run)
    live = lock_holder(root)  # the process holding the run lock, if one is working now
    data["live"] = live
    if as_json:
        print_json(data)
        return
    if live is not None:
        out.print(f"pm-agent {live.get('command', 'run')} is working now (pid {live.get('pid', '?')})")
    out.print(render_status(data, all_tasks=all_tasks))
    if "progress_report" in data:
        out.print("\n" + data["progress_report"], highlight=False, markup=False)  # "[normal] risk" is no style


def show_reports(run: str | None, kind: str | None, repo: Path | None) -> None:
    """`pm-agent reports [--run RUN] [--kind KIND] [-C REPO]`: the stored reports, read without writing."""
    path = default_store_path(repo_root(repo))
    if not path.exists():  # never create the state: a read command writes nothing
        raise NotFoundError(f"no pm-agent state in {path.parent}: start with `pm-agent run PLAN.md`")

    def read(con: sqlite3.Connection) -> list[tuple[str, str, str]]:
        found = find_run(con, run)
        if found is None:
            raise NotFoundError(f"no run in {path}")
        return stored_reports(con, found["id"], kind)

    for what, at, text in read_state(path, read):
        out.print(f"--- {what} at {at[:19].replace('T', ' ')}\n{text}\n", highlight=False, markup=False)


def show_log(task: str, run: str | None, repo: Path | None) -> None:
    """`pm-agent log TASK [--run RUN] [-C REPO]`."""
    from pm_agent.reports.status import render_task_log

    path = default_store_path(repo_root(repo))
    if not path.exists():  # never create the state: a read command writes nothing
        raise NotFoundError(f"no pm-agent state in {path.parent}: start with `pm-agent run PLAN.md`")

    def read(con: sqlite3.Connection) -> list[LogEntry]:
        found = find_run(con, run)
        if found is None:
            raise NotFoundError(f"no run in {path}")
        return task_log(con, found["id"], normalize_task_id(task))

    out.print(render_task_log(read_state(path, read)), highlight=False, markup=False)  # payloads may hold "[...]"
