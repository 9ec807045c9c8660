"""The progress report from the store (seed 001 format, plus cost and tokens)."""

from __future__ import annotations

from pm_agent.lifecycle.states import IssueState
from pm_agent.reports.progress import ProgressData, RiskLine, TaskLine, render_progress
from pm_agent.store import RiskStatus, Store

_BLOCKED: dict[IssueState, str] = {
    IssueState.WAITING_FOR_HUMAN_INPUT: "waiting for a human answer",
    IssueState.WAITING_FOR_REQUIREMENTS_CLARIFICATION: "waiting for requirements clarification",
    IssueState.REQUIRES_HUMAN_INTERVENTION: "requires human intervention",
    IssueState.FAILED: "failed",
}


def progress_data(store: Store, run_id: str, plan_name: str) -> ProgressData:
    """Everything the report shows, read from the store."""
    tasks = store.list_tasks(run_id)
    done = {t.task_id for t in tasks if t.state is IssueState.COMPLETED}
    lines = []
    for t in tasks:
        reason = _BLOCKED.get(t.state, "")
        if not reason and t.state is IssueState.RECEIVED:
            waiting_on = [d for d in t.task().dependency_ids() if d not in done]
            stuck = [
                d
                for d in waiting_on
                if next((x for x in tasks if x.task_id == d), None) is not None
                and next(x for x in tasks if x.task_id == d).state in _BLOCKED
            ]
            if stuck:
                reason = "depends on blocked " + ", ".join(f"task-{d}" for d in stuck)
        lines.append(TaskLine(t.task_id, t.title, t.tier, t.status, t.state, reason))
    risks = [
        RiskLine(r.id, r.description, r.severity.value) for r in store.list_risks(run_id) if r.status is RiskStatus.OPEN
    ]
    sessions = store.list_sessions(run_id)
    return ProgressData(
        plan_name=plan_name,
        tasks=lines,
        risks=risks,
        cost_usd=sum(s.cost_usd for s in sessions),
        input_tokens=sum(s.input_tokens for s in sessions),
        output_tokens=sum(s.output_tokens for s in sessions),
    )


def progress_text(store: Store, run_id: str, plan_name: str) -> str:
    """The rendered report."""
    return render_progress(progress_data(store, run_id, plan_name))
