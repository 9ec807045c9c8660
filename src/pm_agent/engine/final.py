"""Seed 001 section 7: the final release gate, risk audit, completeness check, manifest and handoff.

A failing check is never a dead end: it opens remediation tasks and the loop runs again. Once the
checks pass, the final review (seed 004's Lawbringer, final_review.py) reviews the whole branch:
its findings open remediation tasks too, or join the release escalation (release_audit.py), where
a human accepts or mitigates them with the open risks of CRITICAL tasks. The manifest and the final
review document are committed on the working branch in one commit; pm-agent never merges into main.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from pm_agent.engine import final_review, integrity
from pm_agent.engine.baseline import setup_worktree
from pm_agent.engine.reconcile import cancelled_ids, plan_path
from pm_agent.engine.release_audit import free_id, plan_changes_held, remediation, risk_audit
from pm_agent.engine.runctx import RunContext
from pm_agent.engine.startup import base_branch
from pm_agent.errors import SetupError, VcsError
from pm_agent.gates import CommandResult, Verdict, gate_no_orphan_todos, judge, run_command
from pm_agent.gates.environment import KEEP_OUTPUT_BYTES
from pm_agent.gates.ward import allowed_env
from pm_agent.internal_tasks import is_pm_internal
from pm_agent.plan.checkoff import released_plan
from pm_agent.plan.models import Task, Tier
from pm_agent.reports.escalation import Escalation
from pm_agent.reports.manifest import (
    EnvironmentCheck,
    ManifestRisk,
    ManifestTask,
    ReleaseManifest,
    manifest_path,
    render_handoff,
    render_manifest,
)
from pm_agent.reports.review import review_artifact_path
from pm_agent.store import RiskStatus, TaskRecord
from pm_agent.vcs import Git


@dataclass(frozen=True)
class Check:
    """One final-gate check, judged against the baseline like the gates (ratchet or strict)."""

    name: str
    command: str | None
    result: CommandResult | None
    verdict: Verdict | None = None
    baseline: str = "not run"  # the baseline run's summary

    @property
    def passed(self) -> bool:
        """Not configured counts as passed (and is said so in the evidence)."""
        if self.result is None:
            return True
        return self.verdict.passed if self.verdict is not None else self.result.ok

    @property
    def clean(self) -> bool:
        """Exit 0 (or not configured): what the manifest's `*_clean` fields say, findings of the baseline or not."""
        return self.result is None or self.result.ok


@dataclass
class FinalResult:
    """How the final release gate ended."""

    passed: bool
    reentered: bool = False  # remediation tasks were opened: run the loop again
    waiting: bool = False  # an escalation waits for a human
    checks: list[Check] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    manifest_file: str | None = None
    handoff: str | None = None


def _checks(rc: RunContext, git: Git) -> list[Check]:
    env = rc.config.environment
    worktree = git.path
    try:
        setup_worktree(rc.config, git)
    except SetupError as exc:  # the environment's to fix, not a remediation task's: the caller says so
        return [
            Check(
                "setup",
                env.setup_command,
                None,
                Verdict(passed=False, rule="environment", environment_failure=str(exc)),
            )
        ]
    wanted = [
        ("full test suite", env.test_command),
        ("lint", env.lint_command),
        ("typecheck", env.typecheck_command),
        ("format", env.format_command),
        ("build", env.build_command),
        ("migration dry-run", env.migration_dry_run_command),
        ("migration rollback", env.migration_rollback_command),
    ]
    out = []
    for name, command in wanted:
        if not command:
            out.append(Check(name, command, None))
            rc.emit("final.check", f"{name}: not configured")
            continue
        result = run_command(
            command,
            worktree,
            timeout_s=env.gate_timeout_s,
            env=allowed_env(env.pass_env),
            keep_output_bytes=KEEP_OUTPUT_BYTES,
        )
        before = rc.env_baseline.for_command(command) if rc.env_baseline is not None else None
        verdict = judge(result, before, mode=env.baseline, timeout_s=env.gate_timeout_s)
        check = Check(name, command, result, verdict, before.summary() if before is not None else "not run")
        out.append(check)
        rc.emit(
            "final.check",
            f"{name}: baseline {check.baseline}; final exit {result.exit_code} "
            f"({'pass' if check.passed else 'FAIL'}, rule: {verdict.rule})",
        )
    return out


def _environment_lines(checks: list[Check]) -> list[EnvironmentCheck]:
    """Baseline vs final for each configured command, for the manifest."""
    lines = []
    for check in checks:
        if check.result is None or check.command is None or check.verdict is None:
            continue
        lines.append(
            EnvironmentCheck(
                name=check.name,
                command=check.command,
                baseline=check.baseline,
                final=f"exit {check.result.exit_code}",
                rule=check.verdict.rule,
                new_findings=check.verdict.new,
                preexisting_findings=check.verdict.preexisting,
            )
        )
    return lines


def _check_evidence(check: Check) -> str:
    lines = list(check.verdict.lines) if check.verdict is not None else []
    tail = check.result.output_tail[-3000:] if check.result is not None else ""
    return "\n".join([*lines, tail])


def _remediation(rc: RunContext, failures: list[str], evidence: dict[str, str], tier: Tier) -> list[Task]:
    existing = {t.task_id for t in rc.store.list_tasks(rc.run_id)}
    tasks = []
    for name in failures:
        task_id = free_id(existing)
        tasks.append(
            Task(
                id=task_id,
                title=f"Remediate the final release gate: {name}",
                description=f"The final release gate failed: {name}.\n\nEvidence:\n{evidence.get(name, '')}",
                body=f"Make `{name}` pass on the working branch.\n\nEvidence:\n{evidence.get(name, '')}",
                tier=tier,
                tier_reason=f"{tier.value.upper()}: remediation of a failed final gate check",
                acceptance_criteria=[f"{name} passes on the working branch"],
                decision_log=[f"opened by the final release gate: {name} failed"],
            )
        )
    return tasks


def _relative(rc: RunContext, path: str | None) -> str:
    if not path:
        return ""
    try:
        return str(Path(path).resolve().relative_to(rc.repo.resolve()))
    except ValueError:
        return path


def build_manifest(rc: RunContext, records: list[TaskRecord], checks: list[Check]) -> ReleaseManifest:
    """The release manifest, every field from the store and the checks just run."""
    tests = next(c for c in checks if c.name == "full test suite")
    counts = tests.result.test_counts if tests.result is not None else None
    by_name = {c.name: c for c in checks}
    tasks = []
    breaking, migrations, rollback = [], [], []
    for rec in records:
        task = rec.task()
        if rec.commit_sha is None:
            continue
        tasks.append(
            ManifestTask(
                task_id=task.ref,
                commit_sha=rec.commit_sha,
                review_artifact=review_artifact_path(rc.config.review_artifacts_dir, task.ref),
                tier=rec.tier.value,
                breaking_change=task.io_contract.breaking_change,
            )
        )
        if task.io_contract.breaking_change:
            breaking.append(f"{task.ref}: {task.title}")
        if task.security_flags.touches_schema:
            migrations.append(f"{task.ref}: {task.title}")
        note = rec.review_notes if isinstance(rec.review_notes, dict) else {}
        rollback.append(
            f"{task.ref} ({rec.ownership or 'core'}): {note.get('rollback') or 'git revert ' + rec.commit_sha}"
        )
    if rc.config.environment.migration_dry_run_command:
        migrations.append(f"run `{rc.config.environment.migration_dry_run_command}`")
    risks = [
        ManifestRisk(id=r.id, status=r.status.value, description=r.description)
        for r in rc.store.list_risks(rc.run_id)
        if r.status is not RiskStatus.OPEN
    ]
    return ReleaseManifest(
        plan_id=rc.run.plan_id,
        plan_doc=_relative(rc, rc.run.plan_doc),
        design_doc=_relative(rc, rc.run.design_doc),
        completed_at=datetime.now(UTC),
        tasks=tasks,
        tests_run=(counts.passed + counts.failed + counts.errors) if counts else 0,
        tests_passed=counts.passed if counts else 0,
        lint_clean=by_name["lint"].clean,
        typecheck_clean=by_name["typecheck"].clean,
        build_clean=by_name["build"].clean,
        risks=risks,
        breaking_changes=breaking,
        migration_steps=migrations,
        rollback_plan="\n".join(rollback),
        recommended_next=[
            f"review the working branch {rc.run.working_branch}, then merge it into "
            f"{base_branch(rc.git, rc.run.working_branch)} yourself",
            "read the review artifacts of the CRITICAL tasks first",
        ],
        environment=_environment_lines(checks),
        final_review=final_review.review_path(rc) if final_review.rounds(rc) else "",
    )


def _review_failed(problem: str) -> Escalation:
    return Escalation(
        problem=problem,
        impact="the release waits: the final review of the whole branch has not been read",
        options=["`pm-agent resume` to run the final review again", "set final_review.enabled: false, then resume"],
        recommended="read the reviewer session's log (`pm-agent log task-final-review`), then resume",
        blocking=False,
    )


def _checked_off(rc: RunContext, records: list[TaskRecord], release: Path) -> dict[str, str]:
    """The plan's files with the completed tasks' checklist items checked (plan/checkoff.py), to commit with the
    manifest; the working branch is checked out at `release`."""
    done = {r.task_id for r in records if r.state == "completed"}
    files, said = released_plan(rc.repo, plan_path(rc.repo, rc.run), release, [r.task() for r in records], done)
    for line in said:
        rc.emit("final.plan", line)
    return files


def _commit_manifest(rc: RunContext, worktree: Git, files: dict[str, str]) -> str:
    """The manifest, the final review document and the checked-off plan, in one commit (a restart finds all or
    none)."""
    for rel_path, text in files.items():
        target = worktree.path / rel_path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    ref = f"release-{rc.run.plan_id}"
    message = f"chore(release): release manifest for {rc.run.plan_id}\n\nRefs: {ref}\n"
    try:
        return worktree.commit_all(message)
    except VcsError:
        return worktree.head_sha()  # same manifest as already committed


async def final_release_gate(rc: RunContext) -> FinalResult:
    """Run the final checks on the working branch; open remediation tasks or write the manifest."""
    rc.emit("final.started", f"final release gate on {rc.run.working_branch}")
    every = rc.store.list_tasks(rc.run_id)
    rc.watch.verified.clear()  # every completed task's commit is looked for again
    findings = integrity.check_run(rc, every)  # all rows: store-watch would take a missing one for deleted
    if findings:  # never a release with a task missing or changed outside pm-agent
        integrity.handle_findings(rc, findings)
        return FinalResult(passed=False, problems=[f"{f.caught_by}: {f.problem}" for f in findings])
    held = plan_changes_held(rc)
    if held:  # a plan edit to work already done waits for the human: no release on the old contract
        rc.emit("final.held", "release held: " + "; ".join(held) + "; answer with `pm-agent answer`")
        return FinalResult(passed=False, waiting=True, problems=held)
    records = [r for r in every if not is_pm_internal(r.task_id)]  # the plan's tasks and remediations
    path = rc.state_dir / "worktrees" / rc.run_id / "_release"
    if path.exists():
        await asyncio.to_thread(rc.git.worktree_remove, path, True)
    worktree = await asyncio.to_thread(rc.git.worktree_add, path, rc.run.working_branch)
    try:
        checks = await asyncio.to_thread(_checks, rc, worktree)
        broken = [
            f"{c.name}: `{c.command}` cannot run: {c.verdict.environment_failure}"
            for c in checks
            if c.verdict is not None and c.verdict.environment_failure
        ]
        if broken:
            # Not something a remediation task (an agent) can fix: the human fixes the environment, then resumes.
            rc.emit("final.environment", "; ".join(broken) + " — fix the environment, then `pm-agent resume`")
            return FinalResult(passed=False, checks=checks, problems=broken)
        failed = [c.name for c in checks if not c.passed]
        todo = await asyncio.to_thread(gate_no_orphan_todos, path, rc.run.baseline_sha)
        problems = [f"{name} failed" for name in failed]
        if not todo.passed:
            failed.append("orphan TODO/FIXME")
            problems.append(todo.evidence)
        cancelled = cancelled_ids(rc.store, rc.run_id)  # removed from the plan mid-run: nothing to release
        incomplete = [r.task_id for r in records if r.state != "completed" and r.task_id not in cancelled]
        problems += [f"task-{t} is not completed" for t in incomplete]
        if failed:
            evidence = {c.name: _check_evidence(c) for c in checks if c.result is not None}
            evidence["orphan TODO/FIXME"] = todo.evidence
            tier = Tier.CRITICAL if any("migration" in f for f in failed) else Tier.NORMAL
            new = _remediation(rc, failed, evidence, tier)
            rc.store.add_tasks(rc.run_id, new, reason="final release gate failed: " + ", ".join(failed))
            rc.emit(
                "final.failed", f"{', '.join(failed)} failed: opened {', '.join(t.ref for t in new)}; back to the loop"
            )
            return FinalResult(passed=False, reentered=True, checks=checks, problems=problems)
        if incomplete:
            return FinalResult(passed=False, checks=checks, problems=problems)
        review = await final_review.run_review(rc)
        if review.status == "failed":  # not a finding: the review itself could not be had
            rc.open_escalation(None, "final-review", _review_failed(review.problem))
            rc.emit("final.review", review.problem + " — `pm-agent resume` runs the final review again")
            return FinalResult(passed=False, checks=checks, problems=[review.problem])
        if review.to_fix and review.round is not None:
            existing = {t.task_id for t in rc.store.list_tasks(rc.run_id)}
            new = remediation(rc, review.round.number, review.to_fix, existing)
            rc.store.add_tasks(rc.run_id, new, reason=f"final review round {review.round.number}: findings to fix")
            for finding, task in zip(review.to_fix, new, strict=True):
                final_review.resolve(rc, review.round.number, [finding], f"remediated by {task.ref}")
            opened = ", ".join(t.ref for t in new)
            rc.emit("final.failed", f"final review findings: opened {opened}; back to the loop")
            problems = [f.describe() for f in review.to_fix]
            return FinalResult(passed=False, reentered=True, checks=checks, problems=problems)
        audit, open_risks = await risk_audit(rc, records, review)
        if audit == "remediated":
            return FinalResult(passed=False, reentered=True, checks=checks, problems=open_risks)
        if audit == "held":
            rc.emit("final.held", "release held: open risks on CRITICAL tasks wait for a human decision")
            return FinalResult(passed=False, waiting=not rc.aborted, checks=checks, problems=open_risks)
        manifest = build_manifest(rc, records, checks)
        rel = manifest_path(rc.config.release_manifest_dir, rc.run.plan_id)
        files = {rel: render_manifest(manifest)}
        if manifest.final_review:
            files[manifest.final_review] = final_review.render_review(rc)
        files.update(await asyncio.to_thread(_checked_off, rc, records, path))
        async with rc.integrate_lock:
            sha = await asyncio.to_thread(_commit_manifest, rc, worktree, files)
            if rc.host.checkout_guard is not None:
                rc.host.checkout_guard.accept_refs(rc.run.working_branch)
        rc.run = rc.store.update_run(rc.run_id, current_sha=sha)
        handoff = render_handoff(
            manifest,
            plan_name=rc.run.plan_id,
            total_tasks=len(records),
            open_risks=[],
            manifest_file=rel,
            reviews_dir=rc.config.review_artifacts_dir,
        )
        rc.store.add_report(rc.run_id, "handoff", handoff)
        rc.emit("final.passed", handoff)
        return FinalResult(passed=True, checks=checks, manifest_file=rel, handoff=handoff)
    finally:
        await asyncio.to_thread(rc.git.worktree_remove, path, True)
