"""The whole command line, in the order `pm-agent --help` lists it."""

from __future__ import annotations

from pm_agent.cli import plan_edits, request, runs, setup, views, web, workflow
from pm_agent.cli.app import app

for name, command in (
    ("plan", views.plan_cmd),
    ("status", views.status_cmd),
    ("reports", views.reports_cmd),
    ("log", views.log_cmd),
    ("init", setup.init_cmd),
    ("new", request.new_cmd),
    ("run", runs.run_cmd),
    ("resume", runs.resume_cmd),
    ("escalations", runs.escalations_cmd),
    ("answer", runs.answer_cmd),
    ("reconcile", plan_edits.reconcile_cmd),
    ("demo", runs.demo_cmd),
    ("web", web.web_cmd),
):
    app.command(name)(command)
app.add_typer(workflow.workflow_app, name="workflow")

__all__ = ["app"]
