"""Seed 001 phases 3 and 4 inside the lifecycle: gates (RUNNING_TESTS), tier review, commit (CREATING_PR)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pm_agent.engine.delivery import (
    CHECKED_TREE,
    Refusal,
    deliver,
    describe_drift,
    is_high_blast_radius,
    rebase_after_conflict,
)
from pm_agent.engine.faults import fault_point
from pm_agent.engine.prompting import current_task, latest_report, task_base, task_branch_of
from pm_agent.errors import PmAgentError
from pm_agent.gates import (
    INTEGRITY_CHECKS,
    MINIMUM_GATES,
    GateId,
    GateResult,
    TestCounts,
    auto_escalate_tier,
    make_context,
    run_gates,
    sanity_check,
)
from pm_agent.gates.ward import allowed_env
from pm_agent.lifecycle import IssueState
from pm_agent.plan.models import EnvironmentContract, Tier
from pm_agent.reports.review import GateLine, ReviewArtifact, render_review, review_artifact_path
from pm_agent.store import Severity, TaskRecord
from pm_agent.vcs import ChangeSet, CheckedTree, Git, drift, snapshot

if TYPE_CHECKING:
    from pm_agent.engine.taskflow import TaskFlow

S = IssueState
CHECKED_TREE_EVENT = "gates.checked_tree"  # the tree a gate run checked; delivery commits exactly it
# Per gate pass: the tests that ran (the next pass compares) and lines a reviewer must look at (prompting reads).
OBSERVATIONS = "gate.observations"


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


def _snapshot(git: Git, base: str) -> tuple[CheckedTree | None, ChangeSet | None]:
    """The tree the gates will check and its change against `base`; (None, None) if git cannot say."""
    try:
        checked = snapshot(git)
        return checked, git.changes(base, checked.tree)
    except PmAgentError:  # each diff-based gate then fails with the error as its evidence
        return None, None


def _changed_during_gates(git: Git, checked: CheckedTree) -> GateResult | None:
    """A failed `checked-tree` result when the worktree or HEAD changed while the gate commands ran."""
    head = git.head_sha()
    paths = describe_drift(drift(git, checked))
    if not paths and head == checked.head:
        return None
    lines = ["the worktree changed while the gates ran; their results do not hold for these changes:"]
    lines += [f"  {p}" for p in paths]
    if head != checked.head:
        lines.append(f"  HEAD moved from {checked.head[:12]} to {head[:12]}")
    lines.append("whatever wrote them (a background process, a test writing into the tree) must stop; remove them")
    evidence = "\n".join(lines)
    return GateResult(gate=CHECKED_TREE, passed=False, evidence=evidence, details={"paths": list(paths)})


def latest_checked_tree(flow: TaskFlow) -> CheckedTree | None:
    """The tree the task's latest gate run checked (None before any)."""
    found = flow.events(CHECKED_TREE_EVENT)
    return CheckedTree.from_payload(found[-1]) if found else None


async def run_gates_step(flow: TaskFlow, rec: TaskRecord) -> None:
    """RUNNING_TESTS: the ward. pm-agent runs every gate itself; the agent's claims are only evidence."""
    rc = flow.rc
    task = current_task(rec)
    worktree = rc.worktree_path(rec.task_id)
    base = await asyncio.to_thread(task_base, rc, rec)
    git = Git(worktree)
    # Before any gate command runs: the tree they check is the tree delivery commits.
    checked, changes = await asyncio.to_thread(_snapshot, git, base)
    if checked is not None:
        payload = {"attempt": rec.attempt, "base": base, **checked.as_payload()}
        rc.store.append_event(rc.run_id, CHECKED_TREE_EVENT, payload, task_id=rec.task_id)
    ctx = make_context(
        task,
        worktree,
        base,
        await asyncio.to_thread(latest_report, flow),
        environment=environment(flow, rec),
        changes=changes,
        timeout_s=rc.config.environment.gate_timeout_s,
        env=allowed_env(rc.config.environment.pass_env),
        known_task_ids={t.task_id for t in rc.store.list_tasks(rc.run_id)},
        extra_allowed=[rc.config.review_artifacts_dir.rstrip("/") + "/"],
        env_baseline=rc.env_baseline,
        previous_counts=previous_test_counts(flow),
    )
    rc.emit("gate.running", f"task-{rec.task_id}: running {len(MINIMUM_GATES) + len(INTEGRITY_CHECKS)} gates")
    results = await asyncio.to_thread(run_gates, ctx, [*MINIMUM_GATES, *INTEGRITY_CHECKS])
    if checked is not None:
        moved = await asyncio.to_thread(_changed_during_gates, git, checked)
        results += [moved] if moved is not None else []
    changes = ctx.change_set()
    diff = git.diff_text(base, head=checked.tree if checked is not None else None)
    tier, reasons = auto_escalate_tier(changes.names(), diff, task.tier)
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
    rec = _observe(flow, rec, results)
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


def previous_test_counts(flow: TaskFlow) -> TestCounts | None:
    """The tests the task's previous gate pass ran (tests-weakened compares the count)."""
    observed = flow.events(OBSERVATIONS)
    counts = observed[-1].get("test_counts") if observed else None
    return TestCounts.model_validate(counts) if counts else None


def _observe(flow: TaskFlow, rec: TaskRecord, results: list[GateResult]) -> TaskRecord:
    """Record this pass's test counts and suspicious lines; a LOW task with suspicious lines gets a reviewer."""
    rc = flow.rc
    weakened = next((r for r in results if r.gate == GateId.TESTS_WEAKENED), None)
    suspicious = [str(line) for r in results for line in r.details.get("suspicious", [])]
    payload = {
        "attempt": rec.attempt,
        "test_counts": weakened.details.get("test_counts") if weakened is not None else None,
        "suspicious": suspicious,
    }
    rc.store.append_event(rc.run_id, OBSERVATIONS, payload, task_id=rec.task_id)
    if suspicious and all(r.passed for r in results) and rec.tier is Tier.LOW:
        why = f"pm-agent cannot tell whether {len(suspicious)} test line(s) can fail"
        rec = rc.store.update_task(
            rc.run_id,
            rec.task_id,
            event="task.tier_escalated",
            tier=Tier.NORMAL,
            decision_log=[*rec.decision_log, f"LOW → NORMAL for review: {why}"],
        )
        rc.emit("task.tier", f"task-{rec.task_id}: reviewer needed ({why})")
    return rec


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
    checked = latest_checked_tree(flow)
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
            checked=checked,
        )
        if rc.host.checkout_guard is not None:  # pm-agent's own moves, not an agent's (checkout guard)
            rc.host.checkout_guard.accept_refs(rc.run.working_branch, done.tag)
    if done.refused is not None:
        _refuse(flow, rec, done.refused)
        return
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


def _refuse(flow: TaskFlow, rec: TaskRecord, refusal: Refusal) -> None:
    """Nothing was committed: record the integrity failure by name, then the fixer gets it, or a human."""
    rc = flow.rc
    evidence = refusal.evidence()
    rc.store.record_gate_result(
        rc.run_id, rec.task_id, attempt=rec.attempt, gate=CHECKED_TREE, passed=False, evidence=evidence
    )
    what = refusal.reason + (" " + ", ".join(refusal.paths) if refusal.paths else "")
    rc.emit("integrity.refused", f"task-{rec.task_id}: {CHECKED_TREE}: nothing committed; {what}")
    if rec.retry_count >= rc.config.retry_budget:
        flow.request_fix(rec, CHECKED_TREE, evidence, {})
        flow._budget_escalation(rec, f"{CHECKED_TREE}: nothing committed; {what}", None)
        return
    flow.request_fix(rec, f"integrity failure ({CHECKED_TREE}) at delivery", evidence, {})
    rc.move(rec, S.FIXING_ISSUES, f"{CHECKED_TREE}: nothing committed; {what}"[:120], retry_count=rec.retry_count + 1)


def _cleanup(repo: Git, worktree: Any, branch: str, keep_branch: bool) -> None:
    """Remove a finished task's worktree; its branch too unless it is held for staged integration."""
    try:
        repo.worktree_remove(worktree, force=True)
        if not keep_branch:
            repo.run("branch", "-D", branch)
    except Exception:  # cleanup is best effort; a leftover worktree is harmless and listed by git
        return
