"""Where a task goes once pm-agent's gates ran: pure decisions, like routing.py's, for the gates step.

Seed 004's Siegemaster after Ward: a task whose tier is in `tester_tiers` gets one tester session
(VALIDATING_SOLUTION) once its gates first pass; the gates then run again with the tester's tests.
A failure of those tests found an implementation gap and goes back to the developer; any other
failure goes to the fixer, both within the retry budget.
"""

from __future__ import annotations

from collections.abc import Sequence

from pm_agent.config import PmConfig
from pm_agent.engine.decisions import Decision, FixRequest
from pm_agent.engine.routing import fix_or_escalate
from pm_agent.gates.models import GateId
from pm_agent.lifecycle import IssueState, Workflow
from pm_agent.plan.models import Tier

S = IssueState


def gates_passed(
    tier: Tier, previous_states: Sequence[IssueState], config: PmConfig, workflow: Workflow, gates: int
) -> Decision:
    """RUNNING_TESTS, every gate passed: a task in `tester_tiers` gets its one tester round, any other goes on.

    One round per task: after it (its tests passed at once, or the developer or fixer made them pass) the
    gates lead to the reviewer. Its tests stay in the tree, so every later gate pass still runs them and
    `tester-tests` refuses their removal or weakening; a second round would only test the same contract again.
    """
    tested = S.VALIDATING_SOLUTION in previous_states
    if tier in config.tester_tiers and not tested and workflow.is_valid(S.RUNNING_TESTS, S.VALIDATING_SOLUTION):
        why = f"all {gates} gates passed; {tier.value} is in tester_tiers: the tester adds edge-case tests"
        return Decision(S.VALIDATING_SOLUTION, why)
    return Decision(workflow.on_complete(S.RUNNING_TESTS) or S.REVIEWING_CODE, f"all {gates} gates passed")


def gates_failed(
    task_id: str,
    retry_count: int,
    config: PmConfig,
    previous_states: Sequence[IssueState],
    failed: Sequence[str],
    evidence: str,
) -> Decision:
    """RUNNING_TESTS, gates failed: the fixer gets the evidence, within the budget.

    The first gate pass after the tester's round whose tests fail found an implementation gap: seed 004's
    Siegemaster -> Codeweaver sends it to the developer, who wrote the code (a fix attempt is spent all the same).
    """
    names = ", ".join(failed)
    after_tester = bool(previous_states) and previous_states[-1] is S.VALIDATING_SOLUTION
    to, source, reason = S.FIXING_ISSUES, f"gates failed: {names}", f"gates failed: {names}"
    if after_tester and GateId.TESTS_RUN in failed:
        to, source = S.IMPLEMENTING, f"the tester's edge-case tests fail ({names})"
        reason = f"{source}: back to the developer"
    return fix_or_escalate(
        task_id,
        retry_count,
        config,
        fix=FixRequest(source, evidence),
        reason=reason,
        exhausted=FixRequest("gates", evidence),
        why=f"gates still failing after {retry_count} fix attempts: {names}",
        to=to,
    )
