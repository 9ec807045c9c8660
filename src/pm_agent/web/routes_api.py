"""The JSON endpoints the pages use (and scripts may): runs, board, task, inbox, reports, answer."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Header, HTTPException

from pm_agent.engine.api import answer
from pm_agent.web import board as boards
from pm_agent.web.auth import CSRF_HEADER, matches
from pm_agent.web.context import WebContext, web_context
from pm_agent.web.models import AnswerIn, AnswerOut, Board, EscalationView, ReportsView, RunSummary, TaskView
from pm_agent.web.taskdata import reports_view, task_view

router = APIRouter(prefix="/api", tags=["api"])
Ctx = Annotated[WebContext, Depends(web_context)]


@router.get("/runs")
def runs(ctx: Ctx) -> list[RunSummary]:
    """Every run in the store, newest first."""
    return boards.run_summaries(ctx.store()) if ctx.has_store() else []


@router.get("/runs/{run_id}/board")
def board(run_id: str, ctx: Ctx) -> Board:
    """A run's board: its tasks grouped by lifecycle state, and the header counts."""
    return boards.board(ctx.store(), ctx.db, run_id)


@router.get("/runs/{run_id}/tasks/{task_id}")
def task(run_id: str, task_id: str, ctx: Ctx) -> TaskView:
    """One task: transitions, sessions, signals, gate runs, diff stat and review artifact."""
    return task_view(ctx.store(), ctx.repo, run_id, task_id.removeprefix("task-"))


@router.get("/runs/{run_id}/reports")
def reports(run_id: str, ctx: Ctx) -> ReportsView:
    """Progress reports, cost and tokens per role and per model, the release manifest and the handoff."""
    return reports_view(ctx.store(), ctx.repo, run_id)


@router.get("/escalations")
def escalations(ctx: Ctx) -> list[EscalationView]:
    """Open escalations of every run, in seed 001's format."""
    return boards.inbox(ctx.store()) if ctx.has_store() else []


@router.post("/escalations/{escalation_id}/answer")
def answer_escalation(
    escalation_id: int,
    body: AnswerIn,
    ctx: Ctx,
    csrf: Annotated[str | None, Header(alias=CSRF_HEADER)] = None,
) -> AnswerOut:
    """Answer an open escalation exactly as `pm-agent answer ID TEXT` does; needs the X-CSRF-Token header."""
    if not matches(csrf, ctx.csrf):
        raise HTTPException(403, "missing or wrong CSRF token")
    rec = answer(ctx.repo, escalation_id, body.answer)
    return AnswerOut(id=rec.id, status=rec.status.value, answer=rec.answer)
