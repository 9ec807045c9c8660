"""Seed 001 phases 3 and 4 inside the lifecycle: gates (RUNNING_TESTS), tier review, commit (CREATING_PR)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pm_agent.engine.delivery import deliver, is_high_blast_radius, rebase_after_conflict
from pm_agent.engine.faults import fault_point
from pm_agent.engine.prompting import current_task, latest_report, task_base, task_branch_of
from pm_agent.gates import (
    INTEGRITY_CHECKS,
    MINIMUM_GATES,
    GateResult,
    auto_escalate_tier,
    make_context,
    run_gates,
    sanity_check,
)
from pm_agent.lifecycle import IssueState
from pm_agent.plan.models import EnvironmentContract, Tier
from pm_agent.reports.review import GateLine, ReviewArtifact, render_review, review_artifact_path
from pm_agent.store import Severity, TaskRecord
from pm_agent.vcs import Git

if TYPE_CHECKING:
    from pm_agent.engine.taskflow import TaskFlow

S = IssueState


def environment(flow: TaskFlow, rec: TaskRecord) -> EnvironmentContract:
    """The task's environment contract over the configured one."""
    conf = flow.rc.config.environment
    own = rec.task().environment
    return EnvironmentContract(
        lint_command=own.lint_command or conf.lint_command,
        typecheck_command=own.typecheck_command or conf.typecheck_command,
        test_command=own.test_command or conf.test_command,
        build_command=own.build_command or conf.build_command,
    )


def _evidence(results: list[GateResult]) -> str:
    return "\n\n".join(f"[{r.gate}] FAILED\n{r.evidence}" for r in results if not r.passed)


async def run_gates_step(flow: TaskFlow, rec: TaskRecord) -> None:
    """RUNNING_TESTS: the ward. pm-agent runs every gate itself; the agent's claims are only evidence."""
    rc = flow.rc
    task = current_task(rec)
    worktree = rc.worktree_path(rec.task_id)
    base = await asyncio.to_thread(task_base, rc, rec)
    ctx = make_context(
        task,
        worktree,
        base,
        await asyncio.to_thread(latest_report, flow),
        environment=environment(flow, rec),
        timeout_s=rc.config.environment.gate_timeout_s,
        known_task_ids={t.task_id for t in rc.store.list_tasks(rc.run_id)},
        extra_allowed=[rc.config.review_artifacts_dir.rstrip("/") + "/"],
        env_baseline=rc.env_baseline,
    )
    rc.emit("gate.running", f"task-{rec.task_id}: running {len(MINIMUM_GATES) + len(INTEGRITY_CHECKS)} gates")
    results = await asyncio.to_thread(run_gates, ctx, [*MINIMUM_GATES, *INTEGRITY_CHECKS])
    changes = ctx.change_set()
    tier, reasons = auto_escalate_tier(changes.names(), Git(worktree).diff_text(base), task.tier)
    if tier is not task.tier:
        rec = rc.store.update_task(
            rc.run_id,
            rec.task_id,
            event="task.tier_escalated",
            tier=tier,
            decision_log=[*rec.decision_log, f"tier {task.tier.value} → {tier.value}: " + "; ".join(reasons)],
        )
        rc.emit("task.tier", f"task-{rec.task_id}: tier escalated to {tier.value} ({reasons[0]})")
    for result in results:
        rc.store.record_gate_result(
            rc.run_id,
            rec.task_id,
            attempt=rec.attempt,
            gate=str(result.gate),
            passed=result.passed,
            evidence=result.evidence,
        )
    fault_point("after-gates")
    failed = [r for r in results if not r.passed]
    summary = ", ".join(f"{r.gate}={'pass' if r.passed else 'FAIL'}" for r in results)
    rc.emit("gate.result", f"task-{rec.task_id}: {summary}")
    if not failed:
        rc.move(rec, S.REVIEWING_CODE, f"all {len(results)} gates passed")
        return
    broken = [r for r in failed if r.details.get("environment_failure")]
    if broken:
        # A tool that cannot run is not the agent's to fix: no fixer attempt is spent, a human is asked.
        flow.environment_escalation(rec, broken)
        return
    if any(r.gate == "vcs-tampering" for r in failed):
        # The agent committed or moved HEAD: undo that, keep its edits for the fixer, refuse the result.
        Git(worktree).run("reset", "--soft", base)
    names = ", ".join(str(r.gate) for r in failed)
    if rec.retry_count >= rc.config.retry_budget:
        flow.request_fix(rec, "gates", _evidence(results), {})
        flow._budget_escalation(rec, f"gates still failing after {rec.retry_count} fix attempts: {names}", None)
        return
    flow.request_fix(rec, f"gates failed: {names}", _evidence(results), {})
    rc.move(rec, S.FIXING_ISSUES, f"gates failed: {names}", retry_count=rec.retry_count + 1)


async def review_step(flow: TaskFlow, rec: TaskRecord) -> None:
    """REVIEWING_CODE: LOW gets pm-agent's diff sanity check; NORMAL and CRITICAL a reviewer agent."""
    rc = flow.rc
    task = current_task(rec)
    if task.tier is Tier.LOW:
        worktree = rc.worktree_path(rec.task_id)
        base = await asyncio.to_thread(task_base, rc, rec)
        git = Git(worktree)
        sanity = await asyncio.to_thread(lambda: sanity_check(task, git.changes(base).names(), git.diff_text(base)))
        uncertain = str(latest_report(flow).get("selfAssessment", "confident")) != "confident"
        if sanity.ok and not uncertain:
            rc.move(rec, S.CREATING_PR, "LOW: PM read the diff; it matches the task's scope")
            return
        why = "; ".join(sanity.reasons or sanity.out_of_scope) or "the agent was not confident"
        rec = rc.store.update_task(
            rc.run_id,
            rec.task_id,
            event="task.tier_escalated",
            tier=Tier.NORMAL,
            decision_log=[*rec.decision_log, f"LOW → NORMAL for review: {why}"],
        )
        rc.emit("task.tier", f"task-{rec.task_id}: reviewer needed ({why})")
    await flow.agent_state(rec, S.REVIEWING_CODE)


async def deliver_step(flow: TaskFlow, rec: TaskRecord) -> None:
    """CREATING_PR: commit with the review artifact, integrate into the working branch, tag, record."""
    rc = flow.rc
    task = current_task(rec)
    worktree = Git(rc.worktree_path(rec.task_id))
    report = latest_report(flow)
    reviewer = latest_report(flow, ("reviewer",))
    artifact_path = review_artifact_path(rc.config.review_artifacts_dir, task.ref)
    gates = rc.store.gate_results(rc.run_id, rec.task_id)
    latest_attempt = max((g.attempt for g in gates), default=0)
    note = report.get("reviewNote") or {}
    artifact = ReviewArtifact(
        task_ref=task.ref,
        title=task.title,
        tier=rec.task().tier.value,
        review_tier=task.tier.value,
        summary=str(note.get("summary") or report.get("summary", "")),
        criteria=[(str(m.get("criterion", "")), str(m.get("location", ""))) for m in report.get("criteriaMapping", [])],
        gates=[GateLine(g.gate, g.passed, g.evidence) for g in gates if g.attempt == latest_attempt],
        risks=[str(r) for r in [*note.get("risks", []), *report.get("risks", [])]],
        rollback=str(note.get("rollback", "")),
        attempts=rec.retry_count + 1,
        reviewer=str((reviewer.get("reviewNote") or {}).get("summary") or reviewer.get("summary", "")),
        breaking_change=task.io_contract.breaking_change,
    )
    tag = task.tier is Tier.CRITICAL and rc.config.checkpoint_tags
    branch = task_branch_of(rc, rec)
    async with rc.integrate_lock:
        done = await asyncio.to_thread(
            deliver,
            rc.git,
            worktree,
            task=task,
            plan_id=rc.run.plan_id,
            task_branch=branch,
            working_branch=rc.run.working_branch,
            artifact_path=artifact_path,
            artifact_text=render_review(artifact),
            tag_checkpoint=tag,
        )
        if rc.host.checkout_guard is not None:  # pm-agent's own moves, not an agent's (checkout guard)
            rc.host.checkout_guard.accept_refs(rc.run.working_branch, done.tag)
    if done.conflict or done.commit_sha is None:
        conflicts = done.integration.conflicts if done.integration else []
        onto = rc.git.rev_parse(rc.run.working_branch)
        await asyncio.to_thread(rebase_after_conflict, worktree, done.task_commit, onto)
        evidence = "integration conflict with the working branch in: " + ", ".join(conflicts)
        flow.request_fix(rec, "integration conflict", evidence, {})
        rc.move(rec, S.FIXING_ISSUES, evidence[:120], retry_count=rec.retry_count + 1)
        return
    subject = rc.git.run("log", "-1", "--format=%s", done.commit_sha).strip()
    rc.store.record_commit(rc.run_id, rec.task_id, sha=done.commit_sha, branch=rc.run.working_branch, message=subject)
    fault_point("after-commit-recorded")
    for risk in artifact.risks:
        known = {r.description for r in rc.store.list_risks(rc.run_id)}
        if risk not in known:
            rc.store.add_risk(rc.run_id, description=risk, severity=Severity(task.tier.value), source_task=rec.task_id)
    if done.tag and done.tag not in rc.run.checkpoint_tags:
        rc.run = rc.store.update_run(rc.run_id, checkpoint_tags=[*rc.run.checkpoint_tags, done.tag])
    files = rc.git.run("show", "--name-only", "--format=", done.commit_sha).split()
    started = rec.started_at or datetime.now(UTC)
    duration = int((datetime.now(UTC) - started.replace(tzinfo=started.tzinfo or UTC)).total_seconds() * 1000)
    rc.move(
        rec,
        S.COMPLETED,
        f"committed {done.commit_sha[:12]} on {rc.run.working_branch}" + (f", tagged {done.tag}" if done.tag else ""),
        commit_sha=done.commit_sha,
        artifacts=files,
        review_notes=note or {"summary": artifact.summary},
        duration_ms=duration,
        known_risks=list(artifact.risks),
    )
    rc.emit("commit.done", f"task-{rec.task_id}: {subject} ({done.commit_sha[:12]})")
    await asyncio.to_thread(_cleanup, rc.git, rc.worktree_path(rec.task_id), branch, is_high_blast_radius(task))


def _cleanup(repo: Git, worktree: Any, branch: str, keep_branch: bool) -> None:
    """Remove a finished task's worktree; its branch too unless it is held for staged integration."""
    try:
        repo.worktree_remove(worktree, force=True)
        if not keep_branch:
            repo.run("branch", "-D", branch)
    except Exception:  # cleanup is best effort; a leftover worktree is harmless and listed by git
        return
