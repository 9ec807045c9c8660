"""`pm-agent workflow check|show`: the task lifecycle table, proved and printed."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pm_agent.cli.app import call, err, out

workflow_app = typer.Typer(help="Inspect and check the task lifecycle (the workflow table).", no_args_is_help=True)

WorkflowFile = Annotated[Path | None, typer.Argument(help="A workflow YAML file (default: the shipped one).")]


def workflow_check(file: WorkflowFile = None) -> None:
    """Prove every state reachable from RECEIVED, able to end, and owned by a known role."""
    from pm_agent.lifecycle import check_workflow, load_workflow

    wf = call(lambda: load_workflow(file))
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


def workflow_show(file: WorkflowFile = None) -> None:
    """Print the workflow: each state, the role that owns it, and where it may go next."""
    from pm_agent.lifecycle import describe_workflow, load_workflow

    out.print(describe_workflow(call(lambda: load_workflow(file))), highlight=False)


workflow_app.command("check")(workflow_check)
workflow_app.command("show")(workflow_show)
