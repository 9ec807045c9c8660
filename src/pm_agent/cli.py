"""The pm-agent command line: parse arguments, call the library, print."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console

from pm_agent.errors import PmAgentError

app = typer.Typer(
    help=(
        "pm-agent: an autonomous project manager for AI coding agents.\n\n"
        "It reads a plan (and a design doc), turns it into a dependency-aware queue of tasks, "
        "drives coding agents (Claude Code) through a per-task state machine in parallel slots, "
        "checks every result with gates it runs itself, commits each accepted task, and escalates "
        "to a human only when it must. State lives in <repo>/.pm-agent/state.db."
    ),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
workflow_app = typer.Typer(help="Inspect and check the task lifecycle (the workflow table).", no_args_is_help=True)
app.add_typer(workflow_app, name="workflow")

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)
T = TypeVar("T")

RepoOption = Annotated[
    Path | None,
    typer.Option("--repo", "-C", help="Target repository (default: the git repository of the current folder)."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON instead of text.")]


def main() -> None:
    """Console-script entry point."""
    app()


@contextmanager
def _errors() -> Iterator[None]:
    """Turn pm-agent errors into one clear line and the error's exit code."""
    try:
        yield
    except PmAgentError as exc:
        err.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(exc.exit_code) from None


def _repo(repo: Path | None) -> Path:
    if repo is not None:
        return repo.resolve()
    try:
        top = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True, timeout=30
        ).stdout.strip()
        return Path(top)
    except (subprocess.CalledProcessError, OSError, subprocess.TimeoutExpired):
        return Path.cwd()


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")


def _call(fn: Callable[[], T]) -> T:
    with _errors():
        return fn()


# ---------------------------------------------------------------- plan


@app.command("plan")
def plan_cmd(
    plan: Annotated[Path, typer.Argument(help="The plan document (Markdown).")],
    design: Annotated[Path | None, typer.Option("--design", "-d", help="The design document.")] = None,
    repo: RepoOption = None,
    as_json: JsonOption = False,
) -> None:
    """Parse a plan and print every task, its tier and why, its dependencies and the execution queue.

    Writes nothing. Bad input (a cycle, an unknown or duplicate task, no tasks, an unreadable
    file) exits with code 2, naming the file and line.
    """
    from pm_agent.plan import load_plan
    from pm_agent.reports.plan_view import plan_data, render_plan

    loaded = _call(lambda: load_plan(plan, design, _repo(repo)))
    if as_json:
        _print_json(plan_data(loaded))
    else:
        out.print(render_plan(loaded))


# ---------------------------------------------------------------- workflow


@workflow_app.command("check")
def workflow_check(
    file: Annotated[Path | None, typer.Argument(help="A workflow YAML file (default: the shipped one).")] = None,
) -> None:
    """Prove every state reachable from RECEIVED, able to end, and owned by a known role."""
    from pm_agent.lifecycle import check_workflow, load_workflow

    wf = _call(lambda: load_workflow(file))
    violations = check_workflow(wf)
    name = str(file) if file else "default workflow"
    if not violations:
        out.print(f"{name}: OK — {len(wf.states)} states, {len(list(wf.edges()))} transitions, all checks pass")
        return
    for v in violations:
        where = f"{file}:{v.line}: " if file and v.line else ""
        err.print(f"{where}{v.state.value}: {v.kind}: {v.message}", highlight=False)
    err.print(f"{name}: {len(violations)} violation(s)")
    raise typer.Exit(1)


@workflow_app.command("show")
def workflow_show(
    file: Annotated[Path | None, typer.Argument(help="A workflow YAML file (default: the shipped one).")] = None,
) -> None:
    """Print the workflow: each state, the role that owns it, and where it may go next."""
    from pm_agent.lifecycle import describe_workflow, load_workflow

    out.print(describe_workflow(_call(lambda: load_workflow(file))), highlight=False)


# ---------------------------------------------------------------- store views


@app.command("status")
def status_cmd(
    run: Annotated[str | None, typer.Argument(help="Run id (default: the latest run).")] = None,
    repo: RepoOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show a run: tasks by state and status, open escalations, cost so far."""
    from pm_agent.reports.status import render_status, status_data
    from pm_agent.store import default_store_path, open_store

    path = default_store_path(_repo(repo))
    if not path.exists():
        if as_json:
            _print_json({"run": None, "runs": []})
            return
        out.print(f"No pm-agent state in {path.parent} yet: start with `pm-agent run PLAN.md`.")
        return
    store = _call(lambda: open_store(path))
    try:
        data = _call(lambda: status_data(store, run))
    finally:
        store.close()
    if as_json:
        _print_json(data)
    else:
        out.print(render_status(data))


@app.command("log")
def log_cmd(
    task: Annotated[str, typer.Argument(help="Task id, e.g. 3 or task-3.")],
    run: Annotated[str | None, typer.Option("--run", help="Run id (default: the latest run).")] = None,
    repo: RepoOption = None,
) -> None:
    """Print a task's history: transitions, sessions, signals, gates and events in order."""
    from pm_agent.errors import NotFoundError
    from pm_agent.plan import normalize_task_id
    from pm_agent.reports.status import render_task_log
    from pm_agent.store import default_store_path, open_store

    path = default_store_path(_repo(repo))
    store = _call(lambda: open_store(path))
    try:

        def history() -> Any:
            run_rec = store.get_run(run) if run else store.latest_run()
            if run_rec is None:
                raise NotFoundError(f"no run in {path}")
            return store.task_history(run_rec.id, normalize_task_id(task))

        out.print(render_task_log(_call(history)), highlight=False)
    finally:
        store.close()


# ---------------------------------------------------------------- init


@app.command("init")
def init_cmd(
    repo: RepoOption = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing pm-agent.yaml.")] = False,
) -> None:
    """Write pm-agent.yaml with defaults detected from the repository (test, lint, typecheck commands)."""
    from pm_agent.config import CONFIG_FILE, detect_defaults, render_config

    root = _repo(repo)
    target = root / CONFIG_FILE
    if target.exists() and not force:
        err.print(f"[bold red]error:[/] {target} exists; use --force to overwrite", highlight=False)
        raise typer.Exit(2)
    target.write_text(render_config(detect_defaults(root)), encoding="utf-8")
    out.print(f"wrote {target}")
