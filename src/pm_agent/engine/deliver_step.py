"""Seed 001 phase 4 inside the lifecycle: CREATING_PR commits the checked tree, integrates, tags, records.

`deliver_step` does the delivery (delivery.py) and returns the `Decision` that follows: COMPLETED with
the commit, or the fixer (an integration conflict, a worktree that is not what the gates checked).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from pm_agent.engine.decisions import Decision, FixRequest, WorktreeCleanup
from pm_agent.engine.delivery import (
    CHECKED_TREE,
    Delivery,
    Refusal,
    TaskCommit,
    commit_task,
    is_high_blast_radius,
    land,
    rebase_after_conflict,
)
from pm_agent.engine.faults import fault_point
from pm_agent.engine.history import TaskHistory
from pm_agent.engine.prompt_builder import current_task
from pm_agent.engine.routing import fix_or_escalate, to_fixer
from pm_agent.engine.runctx import RunContext
from pm_agent.engine.steps import latest_checked_tree
from pm_agent.lifecycle import IssueState
from pm_agent.plan.models import Tier
from pm_agent.reports.review import GateLine, ReviewArtifact, render_review, review_artifact_path
from pm_agent.signals import CompleteSignal
from pm_agent.store import Severity, TaskRecord
from pm_agent.vcs import CheckedTree, Git

S = IssueState


async def deliver_step(rc: RunContext, rec: TaskRecord, history: TaskHistory) -> Decision:
    """CREATING_PR: commit with the review artifact, integrate into the working branch, tag, record."""
    task = current_task(rec)
    worktree = Git(rc.worktree_path(rec.task_id))
    artifact_path = review_artifact_path(rc.config.review_artifacts_dir, task.ref)
    artifact = _artifact(rc, rec, history)
    note = artifact_note(history.latest_report())
    tag = task.tier is Tier.CRITICAL and rc.config.checkpoint_tags
    branch = rc.task_branch_of(rec)
    checked = latest_checked_tree(history)
    kept = rc.kept_snapshots.pop(rec.task_id, None)
    first = rec.task_id in rc.first_deliveries
    rc.first_deliveries.discard(rec.task_id)  # a second try (after a conflict) searches, as after a restart
    # The task's own commit first, beside the other slots; only landing it on the working branch takes the lock.
    try:
        made = await asyncio.to_thread(
            commit_task,
            rc.git,
            worktree,
            task=task,
            working_branch=rc.run.working_branch,
            artifact_path=artifact_path,
            artifact_text=render_review(artifact),
            checked=checked,
            kept=kept,
            since=rc.run.baseline_sha,
            search=not first,
        )
    finally:  # its index now holds the commit's tree, not the checked one
        if kept is not None:
            kept.close()
    async with rc.integrate_lock:
        if isinstance(made, Delivery):
            done = made
        else:
            done = await asyncio.to_thread(
                land,
                rc.git,
                made,
                task=task,
                plan_id=rc.run.plan_id,
                task_branch=branch,
                working_branch=rc.run.working_branch,
                tag_checkpoint=tag,
                ancestor=rc.fork_points.known_ancestor,
            )
        if done.integration is not None and done.integration.ok:
            rc.fork_points.landed(done.integration.before, done.integration.after)
        if rc.host.checkout_guard is not None:  # pm-agent's own moves, not an agent's (checkout guard)
            rc.host.checkout_guard.accept_refs(rc.run.working_branch, done.tag)
    if done.refused is not None:
        return _refuse(rc, rec, done.refused)
    if done.conflict or done.commit_sha is None:
        conflicts = done.integration.conflicts if done.integration else []
        onto = rc.git.rev_parse(rc.run.working_branch)
        await asyncio.to_thread(rebase_after_conflict, worktree, done.task_commit, onto)
        evidence = "integration conflict with the working branch in: " + ", ".join(conflicts)
        return to_fixer(FixRequest("integration conflict", evidence), evidence[:120], rec.retry_count)
    paths = rc.checked_paths.pop(rec.task_id, None)
    known = known_record(made, done, checked, paths, artifact_path)
    subject, files = await rc.write(
        rec.task_id, _record, rc, rec.task_id, done.commit_sha, artifact.risks, task.tier, known
    )
    if done.tag and done.tag not in rc.run.checkpoint_tags:
        rc.run = rc.store.update_run(rc.run_id, checkpoint_tags=[*rc.run.checkpoint_tags, done.tag])
    started = rec.started_at or datetime.now(UTC)
    duration = int((datetime.now(UTC) - started.replace(tzinfo=started.tzinfo or UTC)).total_seconds() * 1000)
    return Decision(
        rc.workflow.on_complete(S.CREATING_PR) or S.COMPLETED,
        f"committed {done.commit_sha[:12]} on {rc.run.working_branch}" + (f", tagged {done.tag}" if done.tag else ""),
        {
            "commit_sha": done.commit_sha,
            "artifacts": files,
            "review_notes": note or {"summary": artifact.summary},
            "duration_ms": duration,
            "known_risks": list(artifact.risks),
        },
        note=("commit.done", f"task-{rec.task_id}: {subject} ({done.commit_sha[:12]})"),
        # A kept branch landed as one merge commit: the GitHub bridge opens its pull request (github/rows.py).
        events=(("task.staged", _staged(done, branch, rc.run.working_branch, artifact_path)),)
        if is_high_blast_radius(task)
        else (),
        # Removed once the move is stored (TaskFlow.apply). The commit's record and the move are each written with
        # the store watch told (RunContext.write), and nothing awaits between the two, so no look sees one alone.
        cleanup=WorktreeCleanup(rc.worktree_path(rec.task_id), branch, keep_branch=is_high_blast_radius(task)),
    )


def known_record(
    made: TaskCommit | Delivery,
    done: Delivery,
    checked: CheckedTree | None,
    paths: tuple[str, str, tuple[str, ...]] | None,
    artifact_path: str,
) -> tuple[str, list[str]] | None:
    """The landed commit's subject and files, when this delivery made the commit and git need not be asked.

    That is when the commit was made just now on the checked HEAD, landed as the working branch's new tip by a
    fast-forward or an in-memory pick of that one commit (its change unchanged), and the latest gate run's paths
    (`RunContext.checked_paths`) are the change from that HEAD to the checked tree: the files are those paths and
    the review artifact, in git's order. Where git would say less: a renamed file counts with both its paths
    (`--name-only` lists the new one), and a pick keeps a path the working branch had already changed alike."""
    integration = done.integration
    if (
        not isinstance(made, TaskCommit)
        or made.message is None  # set only on a commit made just now
        or integration is None
        or integration.status not in ("fast-forward", "cherry-picked")
        or integration.commits != [made.sha]
        or done.commit_sha != integration.after
        or checked is None
        or paths is None
        or paths[:2] != (checked.head, checked.tree)
    ):
        return None
    first = made.message.split("\n\n", 1)[0]
    subject = " ".join(line.strip() for line in first.splitlines()).strip()  # git's `%s`: the first paragraph
    return subject, sorted({*paths[2], artifact_path})  # code point order is UTF-8's byte order, git's


def _record(
    rc: RunContext,
    task_id: str,
    sha: str,
    risks: Sequence[str],
    tier: Tier,
    known: tuple[str, list[str]] | None = None,
) -> tuple[str, list[str]]:
    """Store the landed commit and the report's new risks; the commit's subject and its files.

    `known`: the subject and files when this delivery can tell them (`known_record`); else git is asked."""
    if known is not None:
        subject, files = known
    else:
        first, _, names = rc.git.run("show", "--name-only", "--format=%s", sha).partition("\n")
        subject, files = first.strip(), [name for name in names.splitlines() if name]
    rc.store.record_commit(rc.run_id, task_id, sha=sha, branch=rc.run.working_branch, message=subject)
    rc.watch.verified.add(task_id)  # its commit is on the working branch: seen just now (completion-check)
    fault_point("after-commit-recorded")
    for risk in risks:
        listed = {r.description for r in rc.store.list_risks(rc.run_id)}
        if risk not in listed:
            rc.store.add_risk(rc.run_id, description=risk, severity=Severity(tier.value), source_task=task_id)
    return subject, files


def _staged(done: Delivery, branch: str, working_branch: str, artifact_path: str) -> dict[str, Any]:
    """The `task.staged` event's payload: the kept branch, where it landed, its review artifact."""
    merge = done.integration.after if done.integration is not None else None
    return {"branch": branch, "working_branch": working_branch, "merge": merge, "review_artifact": artifact_path}


def artifact_note(report: CompleteSignal | None) -> dict[str, Any]:
    """The report's reviewNote as stored with the task ({} without one)."""
    if report is None or report.review_note is None:
        return {}
    return report.review_note.model_dump(mode="json", by_alias=True)


def _artifact(rc: RunContext, rec: TaskRecord, history: TaskHistory) -> ReviewArtifact:
    """Seed 001's review artifact from the latest work report, the reviewer's report and the gate results."""
    task = current_task(rec)
    report = history.latest_report()
    reviewer = history.latest_report(("reviewer",))
    gates = rc.store.gate_results(rc.run_id, rec.task_id)
    latest_attempt = max((g.attempt for g in gates), default=0)
    note = report.review_note if report is not None else None
    reviewed = reviewer.review_note.summary if reviewer is not None and reviewer.review_note is not None else ""
    return ReviewArtifact(
        task_ref=task.ref,
        title=task.title,
        tier=rec.task().tier.value,
        review_tier=task.tier.value,
        summary=(note.summary if note is not None else "") or (report.summary if report is not None else ""),
        criteria=[(m.criterion, m.location) for m in (report.criteria_mapping if report is not None else [])],
        gates=[GateLine(g.gate, g.passed, g.evidence) for g in gates if g.attempt == latest_attempt],
        risks=[*(note.risks if note is not None else []), *(report.risks if report is not None else [])],
        rollback=note.rollback if note is not None else "",
        attempts=rec.retry_count + 1,
        reviewer=reviewed or (reviewer.summary if reviewer is not None else ""),
        breaking_change=task.io_contract.breaking_change,
    )


def _refuse(rc: RunContext, rec: TaskRecord, refusal: Refusal) -> Decision:
    """Nothing was committed: record the integrity failure by name, then the fixer gets it, or a human."""
    evidence = refusal.evidence()
    rc.store.record_gate_result(
        rc.run_id, rec.task_id, attempt=rec.attempt, gate=CHECKED_TREE, passed=False, evidence=evidence
    )
    what = refusal.reason + (" " + ", ".join(refusal.paths) if refusal.paths else "")
    rc.emit("integrity.refused", f"task-{rec.task_id}: {CHECKED_TREE}: nothing committed; {what}")
    return fix_or_escalate(
        rec.task_id,
        rec.retry_count,
        rc.config,
        fix=FixRequest(f"integrity failure ({CHECKED_TREE}) at delivery", evidence),
        reason=f"{CHECKED_TREE}: nothing committed; {what}"[:120],
        exhausted=FixRequest(CHECKED_TREE, evidence),
        why=f"{CHECKED_TREE}: nothing committed; {what}",
    )
