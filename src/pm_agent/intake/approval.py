"""The human's approval of a request's plan: `approve`, `edit` (then re-read) or `abort`.

Through escalations, so every channel answers it (the terminal, `pm-agent answer`, the demo's
scripted user). `edit` opens a second escalation that waits while the human edits the files;
its answer makes pm-agent re-read (and re-parse) them and ask for approval again. Each answer is
acted on from the store, so a restart in between repeats nothing twice.
"""

from __future__ import annotations

from collections.abc import Callable

from pm_agent.intake.agents import Phase
from pm_agent.intake.context import PLAN, IntakeCtx
from pm_agent.intake.docs import PlanCheck
from pm_agent.lifecycle import IssueState
from pm_agent.plan.models import TaskStatus
from pm_agent.reports.escalation import Escalation
from pm_agent.store import EscalationRecord, EscalationStatus

__all__ = ["APPROVED", "approval", "plan_summary"]

APPROVED = "intake.approved"
APPROVE_WORDS = frozenset({"approve", "approved", "yes", "y", "ok"})
ASK, EDIT = "intake-approval", "intake-edit"
SHOWN_TASKS = 20


def plan_summary(check: PlanCheck) -> str:
    """The plan's tasks as the human reads them in the approval escalation."""
    if check.plan is None:
        return "(the plan does not parse)"
    lines = []
    for task in check.plan.tasks[:SHOWN_TASKS]:
        deps = ", ".join(f"task-{d}" for d in task.dependency_ids()) or "none"
        files = ", ".join(task.expected_files.all_paths()[:4])
        lines.append(f"  task-{task.id}: {task.title} [{task.tier.value}; after: {deps}; files: {files}]")
    more = len(check.plan.tasks) - SHOWN_TASKS
    return "\n".join(lines + ([f"  ... and {more} more"] if more > 0 else []))


def _ask(ic: IntakeCtx, check: PlanCheck, note: str) -> EscalationRecord:
    problems = f"\npm-agent's check of the plan found:\n{check.message()}" if check.problems else ""
    body = Escalation(
        problem=(f"{note}\n" if note else "")
        + f"approve the plan for the request {ic.info.request.splitlines()[0][:100]!r}:\n{plan_summary(check)}\n"
        f"Requirements: {ic.info.design_file}\nPlan: {ic.info.plan_file}{problems}",
        impact="nothing is committed or run until the plan is approved",
        options=[
            "approve: commit the requirements and the plan on the working branch, then run the plan",
            "edit: change the files yourself first; pm-agent waits, then reads them again",
            "abort: stop here; nothing is committed",
        ],
        recommended="edit" if check.problems else "approve",
    )
    return ic.open_escalation(PLAN, ASK, body)


def _wait_for_edit(ic: IntakeCtx) -> EscalationRecord:
    body = Escalation(
        problem=f"edit the plan ({ic.info.plan_file}) and, if you must, the requirements "
        f"({ic.info.design_file}); answer `done` when they are saved",
        impact="pm-agent waits; then it re-reads both files and asks for approval again",
        options=["done: the files are saved", "abort: stop here; nothing is committed"],
        recommended="done, once saved",
    )
    return ic.open_escalation(PLAN, EDIT, body)


def _abort(ic: IntakeCtx, esc: EscalationRecord) -> Phase:
    ic.record("intake.aborted", {"escalation": esc.id}, PLAN)
    ic.move(PLAN, IssueState.FAILED, f"aborted by the human (escalation #{esc.id})", TaskStatus.FAILED)
    return Phase.FAILED


async def approval(ic: IntakeCtx, recheck: Callable[[], PlanCheck]) -> Phase:
    """Ask until the plan is approved (DONE), the human aborts (FAILED) or nobody is there (WAITING).

    `recheck` re-reads the files (the requirements' lock included) and parses the plan again."""
    if ic.events(APPROVED, PLAN):
        return Phase.DONE
    if ic.info.yes:
        ic.record(APPROVED, {"by": "--yes"}, PLAN)
        return Phase.DONE
    while True:
        asked = sorted([*ic.escalations(PLAN, ASK), *ic.escalations(PLAN, EDIT)], key=lambda e: e.id)
        esc = asked[-1] if asked else None
        if esc is None:
            ic.move(PLAN, IssueState.WAITING_FOR_HUMAN_INPUT, "plan ready for approval", TaskStatus.ESCALATED)
            esc = _ask(ic, recheck(), "")
        esc = await ic.await_answer(esc)
        if esc.status is EscalationStatus.OPEN:
            return Phase.WAITING
        if esc.status is EscalationStatus.ANSWERED:
            ic.store.mark_escalation_applied(esc.id)
        answer = (esc.answer or "").strip()
        word = answer.split(maxsplit=1)[0].lower().strip(".:,!") if answer else ""
        if word == "abort":
            return _abort(ic, esc)
        if esc.source == EDIT:
            ic.emit("intake.edited", f"re-reading {ic.info.plan_file} after the human's edit")
            _ask(ic, recheck(), "after your edit:")
        elif word in APPROVE_WORDS:
            check = recheck()
            if check.ok and check.plan is not None:
                ic.record(APPROVED, {"by": f"escalation #{esc.id}", "tasks": len(check.plan.tasks)}, PLAN)
                return Phase.DONE
            _ask(ic, check, "the plan no longer passes pm-agent's check:")
        elif word == "edit":
            _wait_for_edit(ic)
        else:
            _ask(ic, recheck(), f"answer {answer[:60]!r} not understood; answer approve, edit or abort:")
