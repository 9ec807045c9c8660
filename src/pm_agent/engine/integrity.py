"""The run's integrity: pm-agent's own state is not the agents' to change.

Three checks, each named in what it records (`pm-agent log`) and in the escalation it opens:

- `store-watch`: pm-agent keeps, in memory, each task's state as it last wrote it (`StoreWatch`,
  fed by `RunContext.move`, the one place a task's state changes). A stored task that differs, a
  task that appeared in another state than `received`, or (at resume, when there is no memory yet)
  a state that disagrees with its own workflow context, was changed by someone else: an agent with
  a shell can open `.pm-agent/state.db` however the runner's rules deny it. A look reads the rows changed
  since the last one, from the store's journal that triggers on `tasks` keep for every writer (a shell's
  sqlite3 too; reading every row after each task made the checks quadratic in the plan's size); the loop
  looks at every row every RECHECK_S, and the final gate does, for a change kept out of the journal.
- `completion-check`: a task counts as completed only when the store says so AND the working
  branch has its `Refs: task-<id>` commit (triage's EXISTS tasks excepted, they have no commit).
  Checked once for each task that completed since the last check, for all of them at resume and
  in the final release gate.
- `checkout-guard` (the agent monitor's, see `vcs/checkout_guard.py`): a session that changed the
  main checkout or pm-agent's refs gets its result refused; its task is escalated.

A store or completion finding stops dispatching (the run stops, `pm-agent resume` continues it) and
is escalated; rows pm-agent knows the right values of are put back through a recorded transition.
Store and git reads happen on the event loop's thread, where every task transition also happens,
so a check never sees a transition half-made.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pm_agent.agents.session import SessionResult
from pm_agent.engine.runctx import RunContext
from pm_agent.engine.storewatch import STORE_WATCH, AnyRow, Finding, Mark, StoreWatch, row_id
from pm_agent.errors import PmAgentError
from pm_agent.lifecycle import IssueState, Workflow
from pm_agent.plan.models import Presence, TaskStatus
from pm_agent.reports.escalation import Escalation
from pm_agent.store import TaskRecord, TaskRow, TaskRowChanges

__all__ = [
    "CHECKOUT_GUARD",
    "COMPLETION_CHECK",
    "STORE_WATCH",
    "Finding",
    "Mark",
    "StoreWatch",
    "changed_rows",
    "check_run",
    "escape_escalation",
    "escape_problem",
    "handle_findings",
    "hold_state",
]

COMPLETION_CHECK = "completion-check"
CHECKOUT_GUARD = "checkout-guard"
S = IssueState


def _completion(rc: RunContext, records: Sequence[AnyRow]) -> list[Finding]:
    todo: list[tuple[TaskRecord, str]] = []
    for row in records:
        if isinstance(row, tuple):
            if row[1] != S.COMPLETED or row[0] in rc.watch.verified:
                continue
            row = TaskRow.of(row)
        if row.state is not S.COMPLETED or row.task_id in rc.watch.verified:
            continue
        rec = row if isinstance(row, TaskRecord) else rc.store.get_task(rc.run_id, row.task_id)
        task = rec.task()
        if task.presence is Presence.EXISTS and rec.commit_sha is None:
            rc.watch.verified.add(rec.task_id)  # triage found it done before the run: no commit of its own
            continue
        todo.append((rec, task.ref))
    if not todo:
        return []
    branch = rc.run.working_branch
    # One `git log` for every task to look for (the final gate looks for all of them), not one per task.
    landed_by_ref = rc.git.find_commits_by_trailers([ref for _, ref in todo], [branch])
    found = []
    for rec, ref in todo:
        landed = landed_by_ref.get(ref)
        if landed is None:
            problem = f"task-{rec.task_id} is completed in the store but {branch} has no `Refs: {ref}` commit"
        elif rec.commit_sha not in (None, landed) and not rc.git.is_ancestor(rec.commit_sha, branch):
            # The recorded commit is the one found on the branch in the usual case: no merge-base needed.
            problem = f"task-{rec.task_id}'s recorded commit {rec.commit_sha[:12]} is not on {branch}"
        else:
            rc.watch.verified.add(rec.task_id)
            continue
        found.append(Finding(COMPLETION_CHECK, rec.task_id, problem))
    return found


def changed_rows(rc: RunContext, *, full: bool = False) -> TaskRowChanges:
    """The rows changed since the watch's last look and those it left for this one; every row at the first look
    or when `full`. The watch moves on to the journal's end."""
    watch = rc.watch
    since = None if full or not watch.started else watch.seq
    changes = rc.store.task_row_changes(rc.run_id, since, watch.again)
    watch.seq = changes.seq
    return changes


def check_run(
    rc: RunContext, records: Sequence[AnyRow] | None = None, gone: Sequence[str] | None = None
) -> list[Finding]:
    """Store-watch and completion-check findings for `records` (every task's row, or with `gone` the rows
    `changed_rows` read); by default for the rows changed since the last look."""
    if records is None:
        records, gone = changed_rows(rc)[:2]
    found = rc.watch.compare(records, gone)
    flagged = {f.task_id for f in found} | rc.watch.writing
    try:
        found += _completion(rc, [rec for rec in records if row_id(rec) not in flagged] if flagged else records)
    except PmAgentError as exc:  # the working branch itself is gone or unreadable
        found.append(Finding(COMPLETION_CHECK, None, f"the working branch cannot be read: {exc}"))
    # Read again next time, changed or not: rows skipped while pm-agent writes them, rows with a finding, and
    # completed ones whose commit was not found yet (each look looks for it again, as when every row was read).
    verified = rc.watch.verified
    rc.watch.again = {
        task_id
        for rec in records
        if (task_id := row_id(rec)) in flagged or (_state(rec) == S.COMPLETED and task_id not in verified)
    }
    return found


def _state(rec: AnyRow) -> str:
    return rec[1] if isinstance(rec, tuple) else rec.state


def _repair(rc: RunContext, finding: Finding) -> str | None:
    """Put back what pm-agent last wrote, as a recorded transition; a sentence saying so, or None."""
    expected = finding.expected
    if expected is None or finding.task_id is None:
        return None
    current = rc.store.get_task(rc.run_id, finding.task_id)
    new = rc.store.transition(
        rc.run_id,
        finding.task_id,
        from_state=current.state,
        to_state=expected.state,
        reason=f"{finding.caught_by}: put back the state pm-agent had recorded",
        iteration=expected.iteration_count,
        workflow_context=json.loads(expected.workflow_context),
        status=TaskStatus(expected.status),
        commit_sha=expected.commit_sha,
        iteration_count=expected.iteration_count,
        retry_count=expected.retry_count,
    )
    rc.watch.saw(new)
    return f"task-{finding.task_id} put back to {expected.state}"


def handle_findings(rc: RunContext, findings: list[Finding]) -> None:
    """Record each finding on its task, repair what pm-agent knows, stop dispatching, escalate once."""
    repaired = []
    rc.watch.incidents += 1
    for finding in findings:
        fixed = _repair(rc, finding)
        if fixed:
            repaired.append(fixed)
        payload: dict[str, Any] = {"caught_by": finding.caught_by, "problem": finding.problem}
        if fixed:
            payload["repaired"] = fixed
        rc.store.append_event(rc.run_id, "integrity.store", payload, task_id=finding.task_id)
    rc.aborted = True  # stop dispatching: sessions already running end their current step
    checks = list(dict.fromkeys(f.caught_by for f in findings))  # store-watch first: it runs first
    body = Escalation(
        problem=f"{', '.join(checks)}: pm-agent's state was changed from outside pm-agent: "
        + "; ".join(f.problem for f in findings[:5])
        + (f"; repaired: {'; '.join(repaired)}" if repaired else ""),
        impact="the run stopped dispatching; no release is made while this stands",
        options=[
            "inspect `pm-agent log` of the tasks named, then `pm-agent resume`",
            "abort the run",
        ],
        recommended="find which session changed the store (the tasks' logs list every session), then resume",
        blocking=False,
    )
    rc.open_escalation(None, checks[0], body)
    rc.emit("integrity.failed", body.problem)


def escape_problem(result: SessionResult) -> str | None:
    """What a session changed outside its worktree (the checkout guard's findings), as one paragraph."""
    escapes = result.outcome.escapes
    if not escapes:
        return None
    text = "; ".join(escapes[:5])
    if result.outcome.unrestored:
        text += "; NOT restored: " + "; ".join(result.outcome.unrestored[:5])
    elif result.checkout is not None and result.checkout.restored:
        text += "; restored: " + "; ".join(result.checkout.restored[:5])
    return text


def escape_escalation(task_id: str, role: str, session_id: int, escaped: str) -> Escalation:
    """The escalation of a session whose result the checkout guard refused."""
    what = f"the {role} session {session_id} of task-{task_id} changed things outside its worktree"
    return Escalation(
        problem=f"{CHECKOUT_GUARD}: {what}: {escaped}",
        impact=f"its result is refused; task-{task_id} and the tasks that depend on it wait",
        options=["retry: <guidance for the fixer>", "skip the task", "abort the run"],
        recommended=f"check the main checkout and `pm-agent log {task_id}`, then retry or skip",
    )


def hold_state(workflow: Workflow, state: IssueState) -> IssueState:
    """Where a task whose result was refused waits for a human."""
    if workflow.is_valid(state, S.WAITING_FOR_HUMAN_INPUT):
        return S.WAITING_FOR_HUMAN_INPUT
    return S.REQUIRES_HUMAN_INTERVENTION
