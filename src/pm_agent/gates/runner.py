"""Run the gates for one task: the six minimum gates, the integrity checks, or a chosen few (fix loop).

The change set is computed once, before any command runs, so files that test runs create (caches) do
not leak into the diff-based gates. A gate that raises is recorded as failed with the error as evidence:
one broken gate never hides the others' results. Gates see the results of the gates before them in the
same pass (`GateContext.results`): tests-weakened reads the test counts of gate 3's run.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pm_agent.errors import PmAgentError
from pm_agent.gates.alignment import gate_plan_alignment
from pm_agent.gates.commands import DEFAULT_TIMEOUT_S, gate_lint_typecheck, gate_tests_added, gate_tests_run
from pm_agent.gates.environment import Baseline
from pm_agent.gates.integrity import check_scope, check_vcs_tampering
from pm_agent.gates.models import INTEGRITY_CHECKS, MINIMUM_GATES, AgentReport, GateId, GateResult, Payload
from pm_agent.gates.review import gate_review_note
from pm_agent.gates.secret_scan import check_secrets
from pm_agent.gates.todos import gate_no_orphan_todos
from pm_agent.gates.ward import TestCounts, parse_pytest_summary
from pm_agent.gates.weakened import gate_checks_weakened, gate_tests_weakened
from pm_agent.plan.models import EnvironmentContract, Task
from pm_agent.vcs import ChangeSet, Git, SessionBaseline


@dataclass
class GateContext:
    """Everything the gates read for one task attempt."""

    task: Task
    worktree: Path
    base: str
    report: AgentReport = field(default_factory=AgentReport)
    environment: EnvironmentContract | None = None  # None: the task's own environment contract
    changes: ChangeSet | None = None  # None: computed from the worktree on first use
    timeout_s: float = DEFAULT_TIMEOUT_S
    env: Mapping[str, str] | None = None  # extra environment variables for commands
    known_task_ids: Collection[str] | None = None
    baseline: SessionBaseline | None = None  # None: tampering checked against `base`
    extra_allowed: Sequence[str] = ()
    env_baseline: Baseline | None = None  # the environment commands on the run's baseline commit (ratchet)
    previous_counts: TestCounts | None = None  # the tests the task's previous gate pass ran
    results: dict[str, GateResult] = field(default_factory=dict)  # this pass's results so far, by gate id

    def change_set(self) -> ChangeSet:
        """The change against `base`, computed once."""
        if self.changes is None:
            self.changes = Git(self.worktree).changes(self.base)
        return self.changes

    def contract(self) -> EnvironmentContract:
        """The environment contract the gates use."""
        return self.environment or self.task.environment

    def test_counts(self) -> TestCounts | None:
        """The counts of this pass's run of `test_command` (gate 3), None when it did not run or print them."""
        command = self.contract().test_command
        result = self.results.get(GateId.TESTS_RUN)
        for run in result.details.get("commands", []) if result is not None else []:
            if run.get("cmd") == command and run.get("test_counts") is not None:
                return TestCounts.model_validate(run["test_counts"])
        return None

    def baseline_counts(self) -> TestCounts | None:
        """The counts of the baseline's run of the same `test_command`, None when there is none."""
        command = self.contract().test_command
        entry = self.env_baseline.for_command(command) if self.env_baseline is not None and command else None
        return parse_pytest_summary(entry.output or entry.output_tail) if entry is not None else None

    def lint_commands(self) -> list[str]:
        """The configured lint, typecheck and format-check commands."""
        contract = self.contract()
        return [c for c in (contract.lint_command, contract.typecheck_command, contract.format_command) if c]


GATES: dict[GateId, Callable[[GateContext], GateResult]] = {
    GateId.PLAN_ALIGNMENT: lambda c: gate_plan_alignment(c.task, c.worktree, c.base, c.report, changes=c.changes),
    GateId.TESTS_ADDED: lambda c: gate_tests_added(
        c.task,
        c.worktree,
        c.base,
        environment=c.environment,
        changes=c.changes,
        timeout_s=c.timeout_s,
        env=c.env,
    ),
    GateId.TESTS_RUN: lambda c: gate_tests_run(
        c.task,
        c.worktree,
        c.report,
        environment=c.environment,
        timeout_s=c.timeout_s,
        env=c.env,
        baseline=c.env_baseline,
    ),
    GateId.LINT_TYPECHECK: lambda c: gate_lint_typecheck(
        c.task, c.worktree, environment=c.environment, timeout_s=c.timeout_s, env=c.env, baseline=c.env_baseline
    ),
    GateId.NO_ORPHAN_TODOS: lambda c: gate_no_orphan_todos(
        c.worktree, c.base, changes=c.changes, known_task_ids=c.known_task_ids
    ),
    GateId.REVIEW_NOTE: lambda c: gate_review_note(c.report),
    GateId.SCOPE: lambda c: check_scope(c.task, c.worktree, c.base, changes=c.changes, extra_allowed=c.extra_allowed),
    GateId.TESTS_WEAKENED: lambda c: gate_tests_weakened(
        c.task,
        c.worktree,
        c.base,
        c.report,
        changes=c.changes,
        counts=c.test_counts(),
        references=[("baseline run", c.baseline_counts()), ("previous gate run", c.previous_counts)]
        if GateId.TESTS_RUN in c.results
        else [],
    ),
    GateId.CHECKS_WEAKENED: lambda c: gate_checks_weakened(
        c.task,
        c.worktree,
        c.base,
        c.report,
        changes=c.changes,
        commands=c.lint_commands(),
        timeout_s=c.timeout_s,
        env=c.env,
    ),
    GateId.VCS_TAMPERING: lambda c: check_vcs_tampering(c.worktree, c.baseline, expected_head=c.base),
    GateId.SECRETS: lambda c: check_secrets(c.worktree, c.base, changes=c.changes),
}


def run_gates(ctx: GateContext, gates: Iterable[GateId | str]) -> list[GateResult]:
    """Run the named gates in order (e.g. only the failed ones on a fix attempt)."""
    with contextlib.suppress(PmAgentError):  # else each diff-based gate fails with the error as evidence
        ctx.change_set()
    results: list[GateResult] = []
    for gate in gates:
        gate_id = GateId(gate)
        try:
            result = GATES[gate_id](ctx)
        except (PmAgentError, OSError, ValueError) as exc:
            result = GateResult(
                gate=gate_id,
                passed=False,
                evidence=f"gate could not run: {type(exc).__name__}: {exc}",
                details={"error": str(exc)},
            )
        ctx.results[gate_id] = result
        results.append(result)
    return results


def make_context(
    task: Task,
    worktree: Path | str,
    base: str,
    payload: Payload = None,
    **options: Any,
) -> GateContext:
    """A `GateContext` from plain inputs; `options` are GateContext fields."""
    return GateContext(
        task=task, worktree=Path(worktree), base=base, report=AgentReport.from_payload(payload), **options
    )


def run_minimum_gates(
    task: Task,
    worktree: Path | str,
    base: str,
    payload: Payload,
    *,
    environment: EnvironmentContract | None = None,
    changes: ChangeSet | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    env: Mapping[str, str] | None = None,
    known_task_ids: Collection[str] | None = None,
) -> list[GateResult]:
    """Seed 001's six minimum gates, in order: all tiers, no exceptions."""
    ctx = make_context(
        task,
        worktree,
        base,
        payload,
        environment=environment,
        changes=changes,
        timeout_s=timeout_s,
        env=env,
        known_task_ids=known_task_ids,
    )
    return run_gates(ctx, MINIMUM_GATES)


def run_integrity_checks(
    task: Task,
    worktree: Path | str,
    base: str,
    *,
    baseline: SessionBaseline | None = None,
    changes: ChangeSet | None = None,
    extra_allowed: Sequence[str] = (),
    payload: Payload = None,
) -> list[GateResult]:
    """Scope, weakened tests and checks, version-control tampering and secrets; `payload` may justify
    suppressions (see gates/justify.py)."""
    ctx = make_context(task, worktree, base, payload, baseline=baseline, changes=changes, extra_allowed=extra_allowed)
    return run_gates(ctx, INTEGRITY_CHECKS)


def all_passed(results: Iterable[GateResult]) -> bool:
    """True when every result passed."""
    return all(r.passed for r in results)


def failed_gates(results: Iterable[GateResult]) -> list[str]:
    """The ids of the gates that failed, in order."""
    return [r.gate for r in results if not r.passed]


__all__ = [
    "GATES",
    "GateContext",
    "all_passed",
    "failed_gates",
    "make_context",
    "run_gates",
    "run_integrity_checks",
    "run_minimum_gates",
]
