"""Read-only commands: `plan`, and `status`, `reports`, `log` over the state file; none of them writes anything."""

from __future__ import annotations

from typing import Annotated

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
    from pm_agent.plan.github_source import is_github_source
    from pm_agent.reports.plan_view import plan_data, render_plan

    if is_github_source(plan):  # github:owner/name?label=ready: the labelled issues (github/issues_plan.py)
        from pm_agent.github.issues_plan import load_issue_plan

        loaded = call(lambda: load_issue_plan(plan, design, repo_root(repo)))
    else:
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


def reports_cmd(
    run: RunOption = None,
    kind: Annotated[str | None, typer.Option("--kind", help="progress or handoff (default: all).")] = None,
    repo: RepoOption = None,
) -> None:
    """Print the stored progress reports and handoff summaries of a run, oldest first. Writes nothing."""
    from pm_agent.cli.reading import show_reports

    call(lambda: show_reports(run, kind, repo))


def log_cmd(
    task: Annotated[str, typer.Argument(help="Task id, e.g. 3 or task-3.")],
    run: RunOption = None,
    repo: RepoOption = None,
) -> None:
    """Print a task's history: transitions, sessions, signals, gates and events in order. Writes nothing."""
    from pm_agent.cli.reading import show_log

    call(lambda: show_log(task, run, repo))
