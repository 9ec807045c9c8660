"""The HTML pages: runs, a run's board, a task, the inbox (with its answer form), a run's reports."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, HTTPException
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.templating import Jinja2Templates

from pm_agent.engine.api import answer
from pm_agent.web import board as boards
from pm_agent.web.auth import matches
from pm_agent.web.chart import bar_chart
from pm_agent.web.context import WebContext, web_context
from pm_agent.web.taskdata import reports_view, task_view

router = APIRouter(include_in_schema=False)
Ctx = Annotated[WebContext, Depends(web_context)]
# autoescape on for every template: agent output, titles and answers are always text, never markup.
_env = Environment(
    loader=FileSystemLoader(Path(__file__).parent / "templates"), autoescape=True, undefined=StrictUndefined
)
_env.filters["duration"] = lambda s: "" if s is None else f"{int(s) // 60}m{int(s) % 60:02d}s"
_env.filters["usd"] = lambda v: f"${v:.4f}"
templates = Jinja2Templates(env=_env)


def _page(request: Request, ctx: WebContext, name: str, **values: Any) -> Response:
    inbox = len(boards.inbox(ctx.store())) if ctx.has_store() else 0
    return templates.TemplateResponse(request, name, {"csrf": ctx.csrf, "inbox_count": inbox, **values})


@router.get("/")
def runs_page(request: Request, ctx: Ctx) -> Response:
    """Every run; the newest first."""
    runs = boards.run_summaries(ctx.store()) if ctx.has_store() else []
    return _page(request, ctx, "runs.html", runs=runs, repo=str(ctx.repo))


@router.get("/runs/{run_id}")
def board_page(run_id: str, request: Request, ctx: Ctx) -> Response:
    """A run's board, kept current by the page's event stream."""
    return _page(request, ctx, "board.html", board=boards.board(ctx.store(), ctx.db, run_id))


@router.get("/runs/{run_id}/tasks/{task_id}")
def task_page(run_id: str, task_id: str, request: Request, ctx: Ctx) -> Response:
    """One task's evidence."""
    view = task_view(ctx.store(), ctx.repo, run_id, task_id.removeprefix("task-"))
    return _page(request, ctx, "task.html", task=view)


@router.get("/runs/{run_id}/reports")
def reports_page(run_id: str, request: Request, ctx: Ctx) -> Response:
    """Progress reports, cost charts, manifest and handoff."""
    view = reports_view(ctx.store(), ctx.repo, run_id)
    charts = {"role": bar_chart(view.by_role), "model": bar_chart(view.by_model)}
    return _page(request, ctx, "reports.html", reports=view, charts=charts)


@router.get("/inbox")
def inbox_page(request: Request, ctx: Ctx) -> Response:
    """Open escalations of every run, each with an answer form."""
    escalations = boards.inbox(ctx.store()) if ctx.has_store() else []
    return _page(request, ctx, "inbox.html", escalations=escalations, answered=request.query_params.get("answered"))


@router.post("/inbox/{escalation_id}/answer")
def answer_form(
    escalation_id: int,
    ctx: Ctx,
    answer_text: Annotated[str, Form(alias="answer")] = "",
    csrf: Annotated[str, Form(alias="csrf_token")] = "",
) -> Response:
    """The inbox form: the same answer `pm-agent answer ID TEXT` stores, then back to the inbox."""
    if not matches(csrf, ctx.csrf):
        raise HTTPException(403, "missing or wrong CSRF token")
    answer(ctx.repo, escalation_id, answer_text)
    return RedirectResponse(f"/inbox?answered={escalation_id}", status_code=303)
