"""Read-only commands: `plan` (writes nothing), and `status`, `reports`, `log` over the store."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

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


def status_cmd(
    run: Annotated[str | None, typer.Argument(help="Run id (default: the latest run).")] = None,
    repo: RepoOption = None,
    as_json: JsonOption = False,
    all_tasks: Annotated[bool, typer.Option("--all", help="List every task, not only the unfinished ones.")] = False,
) -> None:
    """Show a run: counts by status and state, the unfinished tasks, open escalations, cost so far. Writes nothing.

    `--json` always carries every task.
    """
    from pm_agent.cli.reading import show_status

    call(lambda: show_status(run, repo, as_json, all_tasks))


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
    from pm_agent.cli.reading import show_log

    call(lambda: show_log(task, run, repo))
