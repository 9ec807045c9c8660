"""The states pm-agent works in itself, each a step `async (ctx, record, history) -> Decision`.

PLANNING_APPROACH (the PM plans; a task too large for one session is sliced by the planner), then
seed 001 phase 3: the gates (RUNNING_TESTS) and the tier review (REVIEWING_CODE). Delivery
(CREATING_PR) is in deliver_step.py. Each step does its work and returns the `Decision` that
follows; `TaskFlow` applies it and runs any session the decision asks for.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from functools import partial
from typing import Any

from pm_agent.engine.after_gates import gates_failed, gates_passed
from pm_agent.engine.decisions import Decision, EscalationRequest, NextSession
from pm_agent.engine.delivery import CHECKED_TREE, describe_drift
from pm_agent.engine.faults import fault_point
from pm_agent.engine.history import TaskHistory
from pm_agent.engine.prompt_builder import current_task
from pm_agent.engine.runctx import GateView, RunContext
from pm_agent.engine.slicing import parse_slices, slice_task
from pm_agent.engine.tester_guard import (
    OUT_OF_SCOPE,
    TESTER_TREE,
    check_tester_tests,
    restore_outside_tests,
    tester_tree,
)
from pm_agent.errors import PmAgentError
from pm_agent.gates import (
    INTEGRITY_CHECKS,
    MINIMUM_GATES,
    GateContext,
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
from pm_agent.reports.escalation import Escalation
from pm_agent.signals import CompleteSignal, signal_payload
from pm_agent.store import TaskRecord
from pm_agent.vcs import ChangeSet, CheckedTree, Git, KeptSnapshot, drift, kept_snapshot

S = IssueState
CHECKED_TREE_EVENT = "gates.checked_tree"  # the tree a gate run checked; delivery commits exactly it
# Per gate pass: the tests that ran (the next pass compares) and lines a reviewer must look at (prompt_builder reads).
OBSERVATIONS = "gate.observations"
SLICED = "task.sliced"  # the planner's slices, once per task


async def planning_step(rc: RunContext, rec: TaskRecord, history: TaskHistory) -> Decision:
    """A vague task goes to the analyst, a large one to the planner (once), any other to one developer."""
    task = rec.task()
    vague = not task.acceptance_criteria and not task.steps and not task.expected_files.all_paths()
    if vague and history.latest_report(("analyst",)) is None:
        return Decision(S.ANALYZING_REQUIREMENTS, "no criteria, steps or files: requirements need analysis")
    files = task.expected_files.all_paths()
    if len(files) > rc.config.patch_size_limit_files and not history.events(SLICED):
        return Decision(None, then=NextSession("planner", slices=True))
    return Decision(S.IMPLEMENTING, f"approach: one developer session for {len(files)} expected files")


def apply_slices(rc: RunContext, rec: TaskRecord, signal: CompleteSignal) -> Decision:
    """The planner's slices become subtasks that run first (the task keeps the last slice), or one developer
    works through them in order when they do not parse as slices."""
    task = rec.task()
    files = task.expected_files.all_paths()
    limit = rc.config.patch_size_limit_files
    rc.store.append_event(rc.run_id, SLICED, {"slices": signal.summary, "files": len(files)}, task_id=rec.task_id)
    pieces = parse_slices(signal.summary)
    if pieces is None:
        return Decision(S.IMPLEMENTING, f"{len(files)} files > {limit}: slices given to one developer", consume=True)
    subtasks, narrowed = slice_task(task, pieces)
    rc.store.add_tasks(rc.run_id, subtasks, reason=f"{task.ref} sliced by the planner")
    rc.store.update_task(
        rc.run_id,
        rec.task_id,
        event="task.narrowed",
        contract=narrowed.model_dump(mode="json"),
        decision_log=narrowed.decision_log,
    )
    message = (
        f"task-{rec.task_id}: {len(files)} files > {limit}; subtasks "
        + ", ".join(t.ref for t in subtasks)
        + " first, then this task keeps the last slice"
    )
    # The task waits in planning_approach for its subtasks (TaskFlow.drive checks its dependencies).
    return Decision(None, consume=True, note=(SLICED, message))


def environment(rc: RunContext, rec: TaskRecord) -> EnvironmentContract:
    """The task's environment contract over the configured one."""
    conf = rc.config.environment
    own = rec.task().environment
    return EnvironmentContract(
        lint_command=own.lint_command or conf.lint_command,
        typecheck_command=own.typecheck_command or conf.typecheck_command,
        format_command=own.format_command or conf.format_command,
        test_command=own.test_command or conf.test_command,
        build_command=own.build_command or conf.build_command,
    )


def _evidence(results: list[GateResult]) -> str:
    return "\n\n".join(f"[{r.gate}] FAILED\n{r.evidence}" for r in results if not r.passed)


def _snapshot(git: Git, base: str) -> tuple[CheckedTree | None, ChangeSet | None, str, KeptSnapshot | None]:
    """The tree the gates will check (its snapshot's index kept for the check after them), its change against
    `base` and that diff's text; (None, None, "", None) if git cannot say. The tree never changes: its change
    set and diff are asked of git once per gate run."""
    kept = None
    try:
        checked, kept = kept_snapshot(git)
        changes, text = git.changes_and_text(base, checked.tree)
        return checked, changes, text, kept
    except PmAgentError:  # each diff-based gate then fails with the error as its evidence
        if kept is not None:
            kept.close()
        return None, None, "", None


def _changed_during_gates(git: Git, checked: CheckedTree, kept: KeptSnapshot | None = None) -> GateResult | None:
    """A failed `checked-tree` result when the worktree or HEAD changed while the gate commands ran."""
    head = git.head_sha()
    paths = describe_drift(drift(git, checked, kept=kept))
    if not paths and head == checked.head:
        return None
    lines = ["the worktree changed while the gates ran; their results do not hold for these changes:"]
    lines += [f"  {p}" for p in paths]
    if head != checked.head:
        lines.append(f"  HEAD moved from {checked.head[:12]} to {head[:12]}")
    lines.append("whatever wrote them (a background process, a test writing into the tree) must stop; remove them")
    evidence = "\n".join(lines)
    return GateResult(gate=CHECKED_TREE, passed=False, evidence=evidence, details={"paths": list(paths)})


def latest_checked_tree(history: TaskHistory) -> CheckedTree | None:
    """The tree the task's latest gate run checked (None before any)."""
    found = history.events(CHECKED_TREE_EVENT)
    return CheckedTree.from_payload(found[-1]) if found else None


async def run_gates_step(rc: RunContext, rec: TaskRecord, history: TaskHistory) -> Decision:
    """RUNNING_TESTS: the ward. pm-agent runs every gate itself; the agent's claims are only evidence."""
    task = current_task(rec)
    worktree = rc.worktree_path(rec.task_id)
    git = Git(worktree)
    previous = rc.context_of(rec).previous_states
    after_tester = bool(previous) and previous[-1] is S.VALIDATING_SOLUTION
    # After the tester's round its tests are checked against the tree it left (tester_guard.py).
    tester = tester_tree(history) if S.VALIDATING_SOLUTION in previous and not after_tester else None
    before_tester = latest_checked_tree(history) if after_tester else None
    if before_tester is not None:
        restored = await asyncio.to_thread(restore_outside_tests, worktree, before_tester.tree)
        if restored:
            rc.store.append_event(rc.run_id, OUT_OF_SCOPE, {"restored": restored}, task_id=rec.task_id)
            rc.emit("tester.out_of_scope", f"task-{rec.task_id}: the tester may only add tests; put back {restored}")
    # Before any gate command runs: the tree they check is the tree delivery commits.
    start = await asyncio.to_thread(_gate_start, rc, rec, history, git, after_tester)
    base, checked, changes, checked_diff, kept = start.base, start.checked, start.changes, start.diff, start.kept
    try:
        ctx = make_context(
            task,
            worktree,
            base,
            start.report,
            environment=environment(rc, rec),
            changes=changes,
            timeout_s=rc.config.environment.gate_timeout_s,
            env=allowed_env(rc.config.environment.pass_env),
            known_task_ids=start.task_ids,
            extra_allowed=[rc.config.review_artifacts_dir.rstrip("/") + "/"],
            env_baseline=rc.env_baseline,
            previous_counts=start.counts,
        )
        rc.emit("gate.running", f"task-{rec.task_id}: running {len(MINIMUM_GATES) + len(INTEGRITY_CHECKS)} gates")
        results = await asyncio.to_thread(_gates, ctx, git, checked, kept)
        if checked is not None and tester is not None:
            results.append(await asyncio.to_thread(check_tester_tests, task, worktree, tester, checked.tree))
    finally:  # the snapshot's index served the check after the gates; delivery may ask it again
        rc.keep_snapshot(rec.task_id, kept)
    changes = ctx.change_set()
    diff = checked_diff if checked is not None else git.diff_text(base)
    if checked is not None:
        rc.gate_views[rec.task_id] = GateView(base, checked.tree, changes, diff)
        rc.checked_paths[rec.task_id] = (base, checked.tree, tuple(changes.names()))
    else:
        rc.checked_paths.pop(rec.task_id, None)
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
    verdicts = [(str(r.gate), r.passed, r.evidence) for r in results]
    observed = _observations(rec, results)
    await asyncio.to_thread(
        rc.store.record_gate_results,
        rc.run_id,
        rec.task_id,
        attempt=rec.attempt,
        results=verdicts,
        events=[(OBSERVATIONS, observed)],
    )
    if observed["suspicious"] and all(r.passed for r in results) and rec.tier is Tier.LOW:
        why = f"pm-agent cannot tell whether {len(observed['suspicious'])} test line(s) can fail"
        rec = _needs_reviewer(rc, rec, why)  # a LOW task with lines it cannot judge gets a reviewer
    fault_point("after-gates")
    failed = [r for r in results if not r.passed]
    summary = ", ".join(f"{r.gate}={'pass' if r.passed else 'FAIL'}" for r in results)
    rc.emit("gate.result", f"task-{rec.task_id}: {summary}")
    if not failed:
        return gates_passed(tier, previous, rc.config, rc.workflow, len(results))
    broken = [r for r in failed if r.details.get("environment_failure")]
    if broken:
        # A tool that cannot run is not the agent's to fix: no fixer attempt is spent, a human is asked.
        return environment_escalation(rec, broken)
    if any(r.gate == "vcs-tampering" for r in failed):
        # The agent committed or moved HEAD: undo that, keep its edits for the fixer, refuse the result.
        Git(worktree).run("reset", "--soft", base)
    names = [str(r.gate) for r in failed]
    return gates_failed(rec.task_id, rec.retry_count, rc.config, previous, names, _evidence(results))


@dataclass(frozen=True)
class _GateStart:
    """What a gate run reads before its commands run (`_gate_start`)."""

    base: str
    checked: CheckedTree | None
    changes: ChangeSet | None
    diff: str
    kept: KeptSnapshot | None
    report: dict[str, Any]
    task_ids: set[str]
    counts: TestCounts | None


def _gate_start(rc: RunContext, rec: TaskRecord, history: TaskHistory, git: Git, after_tester: bool) -> _GateStart:
    """The task's base, the snapshot the gates check (`_snapshot`) with its events stored, and what the gates read
    of the store: one trip off the loop's thread (whose fsyncs would hold it ~5 ms), not one per read."""
    base = rc.task_base(rec)
    checked, changes, diff, kept = _snapshot(git, base)
    try:
        if checked is not None:
            event = partial(rc.store.append_event, rc.run_id, task_id=rec.task_id)
            event(CHECKED_TREE_EVENT, {"attempt": rec.attempt, "base": base, **checked.as_payload()})
            if after_tester:
                event(TESTER_TREE, {"tree": checked.tree})
        report = _report_payload(history)
        task_ids = set(rc.store.task_ids(rc.run_id))
        counts = previous_test_counts(history)
    except BaseException:
        if kept is not None:
            kept.close()
        raise
    return _GateStart(base, checked, changes, diff, kept, report, task_ids, counts)


def _gates(ctx: GateContext, git: Git, checked: CheckedTree | None, kept: KeptSnapshot | None) -> list[GateResult]:
    """Every gate, then (when the tree was recorded) the check that nothing changed while they ran."""
    results = run_gates(ctx, [*MINIMUM_GATES, *INTEGRITY_CHECKS])
    moved = _changed_during_gates(git, checked, kept) if checked is not None else None
    return [*results, moved] if moved is not None else results


def _report_payload(history: TaskHistory) -> dict[str, Any]:
    """The latest work report as the gates read it (its wire fields; empty before any)."""
    report = history.latest_report()
    return signal_payload(report) if report is not None else {}


def environment_escalation(rec: TaskRecord, broken: list[GateResult]) -> Decision:
    """A gate command that cannot run (not installed, time-out): ask a human at once, spend no fix attempt."""
    what = "; ".join(f"{r.gate}: {r.details['environment_failure']}" for r in broken)
    body = Escalation(
        problem=f"task-{rec.task_id}: a gate command cannot run in this environment: {what}",
        impact=f"task-{rec.task_id} cannot be checked; the fixer is not asked (it is not the agent's doing)",
        options=[
            "retry: re-run the gates once the environment is fixed (install the tool, raise gate_timeout_s)",
            "skip the task",
            "abort the run",
        ],
        recommended="fix the environment (see the evidence in `pm-agent log " + rec.task_id + "`), then retry",
    )
    context = "\n".join(r.evidence for r in broken)[:2000]
    escalation = EscalationRequest("environment", body, context=context)
    return Decision(S.WAITING_FOR_HUMAN_INPUT, f"environment failure: {what[:100]}", escalation=escalation)


def previous_test_counts(history: TaskHistory) -> TestCounts | None:
    """The tests the task's previous gate pass ran (tests-weakened compares the count)."""
    observed = history.events(OBSERVATIONS)
    counts = observed[-1].get("test_counts") if observed else None
    return TestCounts.model_validate(counts) if counts else None


def _observations(rec: TaskRecord, results: list[GateResult]) -> dict[str, Any]:
    """This pass's test counts and suspicious lines (the OBSERVATIONS event, recorded with the verdicts)."""
    weakened = next((r for r in results if r.gate == GateId.TESTS_WEAKENED), None)
    return {
        "attempt": rec.attempt,
        "test_counts": weakened.details.get("test_counts") if weakened is not None else None,
        "suspicious": [str(line) for r in results for line in r.details.get("suspicious", [])],
    }


def _needs_reviewer(rc: RunContext, rec: TaskRecord, why: str) -> TaskRecord:
    """A LOW task goes to a reviewer agent after all (NORMAL for review), with the reason logged."""
    rec = rc.store.update_task(
        rc.run_id,
        rec.task_id,
        event="task.tier_escalated",
        tier=Tier.NORMAL,
        decision_log=[*rec.decision_log, f"LOW → NORMAL for review: {why}"],
    )
    rc.emit("task.tier", f"task-{rec.task_id}: reviewer needed ({why})")
    return rec


async def review_step(rc: RunContext, rec: TaskRecord, history: TaskHistory) -> Decision:
    """REVIEWING_CODE: LOW gets pm-agent's diff sanity check; NORMAL and CRITICAL a reviewer agent."""
    task = current_task(rec)
    view = rc.gate_views.pop(rec.task_id, None)  # popped whatever the tier: only this step reads it
    if task.tier is Tier.LOW:
        checked = latest_checked_tree(history) if view is not None else None
        if view is not None and checked is not None and view.tree == checked.tree:
            # The gates' own view of the change: delivery commits exactly that tree (or refuses).
            sanity = sanity_check(task, view.changes.names(), view.diff)
        else:
            worktree = rc.worktree_path(rec.task_id)
            base = await asyncio.to_thread(rc.task_base, rec)
            git = Git(worktree)
            sanity = await asyncio.to_thread(lambda: sanity_check(task, git.changes(base).names(), git.diff_text(base)))
        report = history.latest_report()
        uncertain = report is not None and report.self_assessment != "confident"
        if sanity.ok and not uncertain:
            done = rc.workflow.on_complete(S.REVIEWING_CODE) or S.CREATING_PR
            return Decision(done, "LOW: PM read the diff; it matches the task's scope")
        _needs_reviewer(rc, rec, "; ".join(sanity.reasons or sanity.out_of_scope) or "the agent was not confident")
    return Decision(None, then=NextSession(rc.workflow.owner(S.REVIEWING_CODE) or "reviewer"))
