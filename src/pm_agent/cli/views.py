"""Read-only commands: `plan` (writes nothing), and `status`, `reports`, `log` over the store."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from pm_agent.cli.app import (
    DesignOption,
    JsonOption,
    PlanArgument,
    RepoOption,
    RunOption,
    call,
    out,
    print_json,
    repo_root,
)

if TYPE_CHECKING:
    import sqlite3

    from pm_agent.reports.state_reader import LogEntry

T = TypeVar("T")


def plan_cmd(
    plan: PlanArgument,
    design: DesignOption = None,
    repo: RepoOption = None,
    as_json: JsonOption = False,
) -> None:
    """Parse a plan and print every task, its tier and why, its dependencies and the execution queue.

    Writes nothing. Bad input (a cycle, an unknown or duplicate task, no tasks, an unreadable
    file) exits with code 2, naming the file and line.
    """
    from pm_agent.plan import load_plan
    from pm_agent.reports.plan_view import plan_data, render_plan

    loaded = call(lambda: load_plan(plan, design, repo_root(repo)))
    if as_json:
        print_json(plan_data(loaded))
    else:
        out.print(render_plan(loaded))


def _status_with_progress(path: Path, run: str | None) -> dict[str, Any]:
    """The run's status data and its progress report (seed 001: on request), in one read; nothing is stored."""
    from pm_agent.reports.progress import render_progress
    from pm_agent.reports.progress_data import file_progress_data
    from pm_agent.reports.state_reader import read_state
    from pm_agent.reports.status import status_data

    def read(con: sqlite3.Connection) -> dict[str, Any]:
        data = status_data(con, run)
        if data["run"] is not None:
            data["progress_report"] = render_progress(
                file_progress_data(con, data["run"]["id"], data["run"]["plan_id"])
            )
        return data

    return read_state(path, read)


def status_cmd(
    run: Annotated[str | None, typer.Argument(help="Run id (default: the latest run).")] = None,
    repo: RepoOption = None,
    as_json: JsonOption = False,
    all_tasks: Annotated[bool, typer.Option("--all", help="List every task, not only the unfinished ones.")] = False,
) -> None:
    """Show a run: counts by status and state, the unfinished tasks, open escalations, cost so far. Writes nothing.

    `--json` always carries every task.
    """
    from pm_agent.engine.runlock import lock_holder
    from pm_agent.reports.status import render_status
    from pm_agent.statefile import default_store_path

    root = repo_root(repo)
    path = default_store_path(root)
    if not path.exists():
        if as_json:
            print_json({"run": None, "runs": []})
            return
        out.print(f"No pm-agent state in {path.parent} yet: start with `pm-agent run PLAN.md`.")
        return
    data = call(lambda: _status_with_progress(path, run))
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


def _read_run(repo: Path | None, run: str | None, read: Callable[[Any, str], T]) -> T:
    """Open the store read-side, find the run (default: the latest) and apply `read(store, run_id)`.

    Never creates a store: with no state yet it is a NotFoundError (exit 2).
    """
    from pm_agent.errors import NotFoundError
    from pm_agent.store import default_store_path, open_store

    path = default_store_path(repo_root(repo))
    if not path.exists():
        raise NotFoundError(f"no pm-agent state in {path.parent}: start with `pm-agent run PLAN.md`")
    store = open_store(path)
    try:
        run_rec = store.get_run(run) if run else store.latest_run()
        if run_rec is None:
            raise NotFoundError(f"no run in {path}")
        return read(store, run_rec.id)
    finally:
        store.close()


def reports_cmd(
    run: RunOption = None,
    kind: Annotated[str | None, typer.Option("--kind", help="progress or handoff (default: all).")] = None,
    repo: RepoOption = None,
) -> None:
    """Print the stored progress reports and handoff summaries of a run, oldest first."""
    for report in call(lambda: _read_run(repo, run, lambda store, run_id: store.list_reports(run_id, kind))):
        out.print(f"--- {report.kind} at {report.created_at:%Y-%m-%d %H:%M:%S}\n{report.text}\n", highlight=False)


def log_cmd(
    task: Annotated[str, typer.Argument(help="Task id, e.g. 3 or task-3.")],
    run: RunOption = None,
    repo: RepoOption = None,
) -> None:
    """Print a task's history: transitions, sessions, signals, gates and events in order. Writes nothing."""
    from pm_agent.errors import NotFoundError
    from pm_agent.reports.state_reader import find_run, normalize_task_id, read_state, task_log
    from pm_agent.reports.status import render_task_log
    from pm_agent.statefile import default_store_path

    path = default_store_path(repo_root(repo))

    def read(con: sqlite3.Connection) -> list[LogEntry]:
        found = find_run(con, run)
        if found is None:
            raise NotFoundError(f"no run in {path}")
        return task_log(con, found["id"], normalize_task_id(task))

    def history() -> list[LogEntry]:
        if not path.exists():  # never create the state: a read command writes nothing
            raise NotFoundError(f"no pm-agent state in {path.parent}: start with `pm-agent run PLAN.md`")
        return read_state(path, read)

    out.print(render_task_log(call(history)), highlight=False, markup=False)  # payloads may hold "[...]"
