"""routing.route, table by table: every state a session runs in x every way a session or an answer ends.

No agent, no CLI, no store: the history is given as values (`HistoryFacts`), the workflow is the
shipped one. The expected tables are written out here, independently of workflow.yaml, so a routing
key changed in the file (or a branch changed in routing.py) fails a row.
"""

from __future__ import annotations

from typing import Any

import pytest

from pm_agent.config import PmConfig
from pm_agent.engine.after_gates import gates_failed, gates_passed
from pm_agent.engine.decisions import Answer, Decision, FixRequest, SessionEnd
from pm_agent.engine.history import FOLLOWUP_PENDING, FOLLOWUP_RESOLVED, PendingFollowup
from pm_agent.engine.routing import (
    AGENT_ACCOUNT,
    RESUME_AFTER_CRASH,
    HistoryFacts,
    fix_or_escalate,
    held_by_account,
    limit_reached,
    route,
    triage,
)
from pm_agent.lifecycle import IssueState, WorkflowContext, default_workflow
from pm_agent.plan.models import Presence, Task, Tier
from pm_agent.signals import AnySignal, NeedsRoleFollowupSignal, NeedsUserInputSignal, parse_signal
from pm_agent.store import SessionStatus

S = IssueState
WF = default_workflow()
CONFIG = PmConfig()  # retry_budget 2, max_continuations 3
TASK = "7"

# The states an agent session runs in, and where its complete signal goes.
ON_COMPLETE = {
    S.ANALYZING_REQUIREMENTS: S.PLANNING_APPROACH,
    S.PLANNING_APPROACH: S.IMPLEMENTING,
    S.CREATING_TESTS: S.IMPLEMENTING,
    S.UPDATING_TESTS: S.RUNNING_TESTS,
    S.IMPLEMENTING: S.RUNNING_TESTS,
    S.FIXING_ISSUES: S.RUNNING_TESTS,
    S.REFACTORING: S.RUNNING_TESTS,
    S.REVIEWING_CODE: S.CREATING_PR,
    S.VALIDATING_SOLUTION: S.RUNNING_TESTS,
    S.ADDRESSING_FEEDBACK: S.RUNNING_TESTS,
}
SESSION_STATES = list(ON_COMPLETE)
ROLES = ("fixer", "developer", "planner", "tester", "reviewer", "analyst")
# needs-role-followup: (state, target role) -> the state that role works in; absent pairs are escalated.
FOLLOWUP = {
    (S.ANALYZING_REQUIREMENTS, "developer"): S.IMPLEMENTING,
    (S.ANALYZING_REQUIREMENTS, "planner"): S.PLANNING_APPROACH,
    (S.ANALYZING_REQUIREMENTS, "tester"): S.CREATING_TESTS,
    (S.PLANNING_APPROACH, "developer"): S.IMPLEMENTING,
    (S.PLANNING_APPROACH, "tester"): S.CREATING_TESTS,
    (S.PLANNING_APPROACH, "analyst"): S.ANALYZING_REQUIREMENTS,
    (S.CREATING_TESTS, "developer"): S.IMPLEMENTING,
    (S.CREATING_TESTS, "tester"): S.UPDATING_TESTS,
    (S.CREATING_TESTS, "analyst"): S.ANALYZING_REQUIREMENTS,
    (S.UPDATING_TESTS, "developer"): S.IMPLEMENTING,
    (S.UPDATING_TESTS, "tester"): S.CREATING_TESTS,
    (S.IMPLEMENTING, "fixer"): S.FIXING_ISSUES,
    (S.IMPLEMENTING, "planner"): S.PLANNING_APPROACH,
    (S.IMPLEMENTING, "analyst"): S.ANALYZING_REQUIREMENTS,
    (S.FIXING_ISSUES, "developer"): S.IMPLEMENTING,
    (S.FIXING_ISSUES, "planner"): S.PLANNING_APPROACH,
    (S.REFACTORING, "developer"): S.IMPLEMENTING,
    (S.REVIEWING_CODE, "fixer"): S.FIXING_ISSUES,
    (S.REVIEWING_CODE, "developer"): S.ADDRESSING_FEEDBACK,
    (S.REVIEWING_CODE, "tester"): S.UPDATING_TESTS,
    (S.VALIDATING_SOLUTION, "fixer"): S.FIXING_ISSUES,
    (S.VALIDATING_SOLUTION, "developer"): S.IMPLEMENTING,
    (S.VALIDATING_SOLUTION, "tester"): S.UPDATING_TESTS,
    (S.VALIDATING_SOLUTION, "reviewer"): S.REVIEWING_CODE,
}


def signal(kind: str, **fields: Any) -> AnySignal:
    return parse_signal({"signal": kind, "stepId": f"task-{TASK}", **fields})


def complete(assessment: str = "confident") -> AnySignal:
    return signal("complete", summary="did it", selfAssessment=assessment)


def followup(role: str, *, resume: bool = False) -> AnySignal:
    return signal(
        "needs-role-followup", targetRole=role, reason="the parser crashes", context="see line 3", resume=resume
    )


def end(sig: AnySignal | None, *, role: str = "developer", status: SessionStatus = SessionStatus.SIGNALLED,
        resumable: bool = True) -> SessionEnd:  # fmt: skip
    return SessionEnd(role=role, session_id=41, signal=sig, status=status, detail="", resumable=resumable)


def facts(*, retries: int = 0, pending: PendingFollowup | None = None, **counts: int) -> HistoryFacts:
    by_kind: dict[str | None, int] = {k.replace("_", "-"): v for k, v in counts.items() if k != "crashes"}
    by_kind[None] = counts.get("crashes", 0)
    return HistoryFacts(task_id=TASK, pending=pending, counts=by_kind, retries=retries)



def decide(state: IssueState, outcome: SessionEnd | Answer, history: HistoryFacts | None = None) -> Decision:
    decision = route(state, outcome, history or facts(), CONFIG, WF)
    if decision.target is not None:  # every decision is a move the workflow allows
        # An exhausted budget or a disallowed followup in the analyst's state included: the gap where the workflow
        # refused those moves (TransitionError) was closed (workflow.yaml, `cannot-escalate`).
        assert WF.is_valid(state, decision.target), (state, decision.target)
    return decision


# ---------------------------------------------------------------- complete


@pytest.mark.parametrize(("state", "target"), ON_COMPLETE.items())
def test_complete_goes_where_the_state_routes_it(state: IssueState, target: IssueState) -> None:
    d = decide(state, end(complete()))
    assert (d.target, d.consume, d.escalation, d.fix, d.then) == (target, True, None, None, None)


def test_an_analyst_that_is_not_confident_leaves_the_requirements_unclear() -> None:
    d = decide(S.ANALYZING_REQUIREMENTS, end(complete("uncertain"), role="analyst"))
    assert (d.target, d.consume) == (S.REQUIREMENTS_UNCLEAR, True)


def test_complete_of_a_followup_target_resumes_the_asking_session() -> None:
    asked = followup("planner", resume=True)
    assert isinstance(asked, NeedsRoleFollowupSignal)
    pending = PendingFollowup(
        session_id=12, return_state=S.IMPLEMENTING, target="planner", asker_role="developer", asked=asked
    )
    d = decide(S.PLANNING_APPROACH, end(complete(), role="planner"), facts(pending=pending))
    assert (d.target, d.consume, d.events) == (S.IMPLEMENTING, True, ((FOLLOWUP_RESOLVED, {"session_id": 12}),))
    assert d.then is not None
    assert (d.then.kind, d.then.role, d.then.resume_session) == ("resume", "developer", 12)
    assert "did it" in d.then.prompt
    assert "planner" in d.then.prompt


def test_complete_in_the_asking_state_itself_routes_as_usual() -> None:
    pending = PendingFollowup(session_id=12, return_state=S.IMPLEMENTING, target="planner", asker_role="developer",
                              asked=None)  # fmt: skip
    d = decide(S.IMPLEMENTING, end(complete()), facts(pending=pending))
    assert (d.target, d.then, d.events) == (S.RUNNING_TESTS, None, ())


# ---------------------------------------------------------------- partially-complete


@pytest.mark.parametrize("state", SESSION_STATES)
def test_partially_complete_continues_in_a_fresh_session_within_the_limit(state: IssueState) -> None:
    sig = signal("partially-complete", progress="half", continuationPoint="the rest")
    d = decide(state, end(sig), facts(partially_complete=CONFIG.max_continuations))
    assert (d.target, d.consume, d.escalation) == (None, True, None)
    assert d.then is not None
    assert (d.then.kind, d.then.role, d.then.continuation) == ("continue", "developer", sig)


@pytest.mark.parametrize("state", SESSION_STATES)
def test_partially_complete_past_the_limit_is_escalated(state: IssueState) -> None:
    sig = signal("partially-complete", progress="half", continuationPoint="the rest")
    d = decide(state, end(sig), facts(partially_complete=CONFIG.max_continuations + 1))
    assert (d.target, d.consume, d.then) == (S.WAITING_FOR_HUMAN_INPUT, True, None)
    assert d.escalation is not None
    assert d.escalation.source == "retry-budget"
    assert "continuation limit of 3 (max_continuations)" in d.escalation.body.problem


# ---------------------------------------------------------------- needs-user-input


@pytest.mark.parametrize("state", SESSION_STATES)
def test_needs_user_input_asks_the_human(state: IssueState) -> None:
    sig = signal("needs-user-input", question="CSV or JSON?", context="both are in the design")
    d = decide(state, end(sig))
    waits = S.REQUIREMENTS_UNCLEAR if state is S.ANALYZING_REQUIREMENTS else S.WAITING_FOR_HUMAN_INPUT
    assert (d.target, d.consume) == (waits, True)
    assert d.escalation is not None
    assert (d.escalation.source, d.escalation.session_id, d.escalation.context) == (
        "needs-user-input",
        41,
        "both are in the design",
    )
    assert "CSV or JSON?" in d.escalation.body.problem


# ---------------------------------------------------------------- needs-role-followup


@pytest.mark.parametrize("state", SESSION_STATES)
@pytest.mark.parametrize("role", ROLES)
def test_followup_goes_to_the_target_roles_state_or_is_escalated(state: IssueState, role: str) -> None:
    d = decide(state, end(followup(role)))
    expected = FOLLOWUP.get((state, role))
    assert d.consume
    if expected is None:
        assert d.target is S.WAITING_FOR_HUMAN_INPUT
        assert d.escalation is not None
        assert d.escalation.source == "needs-role-followup"
        assert d.fix is None
        return
    assert d.target is expected
    assert d.escalation is None
    assert d.fix == FixRequest(
        f"developer ({state.value}) found issues" if expected is S.FIXING_ISSUES else f"developer asked for the {role}",
        "the parser crashes\nsee line 3",
    )
    assert d.fields == ({"retry_count": 1} if expected is S.FIXING_ISSUES else {})


def test_followup_arguments_use_the_retry_count() -> None:
    d = decide(S.IMPLEMENTING, end(followup("fixer")), facts(retries=1))
    assert (d.target, d.fields) == (S.FIXING_ISSUES, {"retry_count": 2})


def test_followup_to_the_fixer_with_the_budget_spent_is_escalated() -> None:
    d = decide(S.IMPLEMENTING, end(followup("fixer")), facts(retries=CONFIG.retry_budget))
    assert (d.target, d.consume, d.fix) == (S.WAITING_FOR_HUMAN_INPUT, True, None)
    assert d.escalation is not None
    assert d.escalation.source == "retry-budget"
    assert "developer found issues: the parser crashes" in d.escalation.body.problem


def test_followup_with_resume_records_the_pending_followup() -> None:
    d = decide(S.REVIEWING_CODE, end(followup("developer", resume=True), role="reviewer"))
    pending = {"session_id": 41, "return_state": "reviewing_code", "target": "developer"}
    assert (d.target, d.events) == (S.ADDRESSING_FEEDBACK, ((FOLLOWUP_PENDING, pending),))


# ---------------------------------------------------------------- no signal


@pytest.mark.parametrize("state", SESSION_STATES)
@pytest.mark.parametrize("resumable", [True, False])
def test_a_session_without_a_signal_is_retried_within_the_budget(state: IssueState, resumable: bool) -> None:
    d = decide(state, end(None, status=SessionStatus.EXITED, resumable=resumable), facts(crashes=CONFIG.retry_budget))
    assert (d.target, d.escalation, d.events[0][0]) == (None, None, "session.failed")
    assert d.note is not None
    assert d.note[0] == "session.retry"
    if resumable:
        assert d.then is not None
        assert (d.then.kind, d.then.resume_session, d.then.prompt) == (
            "resume",
            41,
            RESUME_AFTER_CRASH,
        )
    else:
        assert d.then is None  # the next look starts a fresh session in the same state


@pytest.mark.parametrize("state", SESSION_STATES)
def test_sessions_without_a_signal_past_the_budget_are_escalated(state: IssueState) -> None:
    d = decide(state, end(None, status=SessionStatus.CRASHED), facts(crashes=CONFIG.retry_budget + 1))
    assert (d.target, d.then, d.events[0][0]) == (S.WAITING_FOR_HUMAN_INPUT, None, "session.failed")
    assert d.escalation is not None
    assert d.escalation.source == "retry-budget"
    assert "3 developer sessions ended without a signal (crashed" in d.escalation.body.problem


@pytest.mark.parametrize("state", SESSION_STATES)
@pytest.mark.parametrize("error", ["authentication_failed", "billing_error"])
def test_an_agent_whose_account_cannot_work_escalates_at_once_and_stops_dispatch(state: IssueState, error: str) -> None:
    """Every session would end the same: no retry is spent, and no new task is dispatched until a human fixes it."""
    said = "Not logged in · Please run /login"
    session = SessionEnd(role="developer", session_id=41, signal=None, status=SessionStatus.CRASHED, detail=said,
                         resumable=True, account_error=error)  # fmt: skip
    d = decide(state, session, facts(crashes=1))
    assert (d.target, d.then, d.abort, d.events[0][0]) == (S.WAITING_FOR_HUMAN_INPUT, None, True, "session.failed")
    assert d.escalation is not None
    assert d.escalation.source == AGENT_ACCOUNT
    assert d.escalation.body.problem == (
        f"task-{TASK}: the developer agent cannot work: its CLI says 'Not logged in · Please run /login' ({error})"
    )
    assert "ANTHROPIC_API_KEY" in d.escalation.body.recommended
    crashed = decide(state, end(None, status=SessionStatus.CRASHED), facts(crashes=1))  # any other crash: retried
    assert (crashed.target, crashed.escalation, crashed.abort) == (None, None, False)
    # Another slot's session meets it too: the same events and no second escalation; the task stays where it is.
    held = held_by_account(TASK, state, d)
    assert (held.target, held.escalation, held.abort, held.then) == (None, None, True, None)
    assert [kind for kind, _ in held.events] == ["session.failed", "session.held"]
    assert held.events[1][1] == {"state": state.value, "waits_on": AGENT_ACCOUNT}


# ---------------------------------------------------------------- answers


def answer(text: str, *, source: str = "retry-budget", session: int | None = None) -> Answer:
    asked = signal("needs-user-input", question="CSV or JSON?", context="c") if session else None
    assert asked is None or isinstance(asked, NeedsUserInputSignal)
    return Answer(escalation_id=5, source=source, answer=text, session_id=session, session_role="developer",
                  asked=asked, asking_state=S.FIXING_ISSUES)  # fmt: skip


@pytest.mark.parametrize(
    ("text", "source", "target", "fields", "fix", "abort"),
    [
        ("skip", "retry-budget", S.FAILED, {}, None, False),
        ("abort the run", "retry-budget", S.FAILED, {}, None, True),
        ("accept", "retry-budget", S.CREATING_PR, {}, None, False),
        ("retry", "environment", S.RUNNING_TESTS, {}, None, False),
        ("retry: use the v2 parser", "retry-budget", S.FIXING_ISSUES, {"retry_count": 0}, "use the v2 parser", False),
        ("try the other library", "retry-budget", S.FIXING_ISSUES, {"retry_count": 0}, "try the other library", False),
        ("skip", "needs-user-input", S.FAILED, {}, None, False),
        # The agent can work again: the state that asked (here FIXING_ISSUES) runs a new session, no fix spent.
        ("retry", AGENT_ACCOUNT, S.FIXING_ISSUES, {}, None, False),
        ("skip", AGENT_ACCOUNT, S.FAILED, {}, None, False),
    ],
)
def test_answers(
    text: str, source: str, target: IssueState, fields: dict[str, int], fix: str | None, abort: bool
) -> None:
    d = decide(S.HUMAN_INPUT_RECEIVED, answer(text, source=source, session=9 if source == "needs-user-input" else None))
    assert (d.target, dict(d.fields), d.abort, d.applied_escalation, d.then) == (target, fields, abort, 5, None)
    assert (d.fix.evidence if d.fix else None) == fix


def test_an_answered_question_resumes_the_asking_session_in_its_state() -> None:
    d = decide(S.HUMAN_INPUT_RECEIVED, answer("JSON", source="needs-user-input", session=9))
    assert (d.target, d.applied_escalation) == (S.FIXING_ISSUES, 5)
    assert d.then is not None
    assert (d.then.kind, d.then.role, d.then.resume_session) == ("resume", "developer", 9)
    assert "You asked: CSV or JSON?" in d.then.prompt
    assert "The user answered: JSON" in d.then.prompt


def test_a_clarified_requirement_goes_back_to_the_analyst() -> None:
    d = decide(S.REQUIREMENTS_CLARIFIED, answer("JSON", source="needs-user-input", session=9))
    assert d.target is S.ANALYZING_REQUIREMENTS
    assert d.then is not None


# ---------------------------------------------------------------- budgets, triage, limits


@pytest.mark.parametrize(
    ("retries", "target"), [(0, S.FIXING_ISSUES), (1, S.FIXING_ISSUES), (2, S.WAITING_FOR_HUMAN_INPUT)]
)
def test_gate_failures_go_to_the_fixer_until_the_budget_is_spent(retries: int, target: IssueState) -> None:
    d = fix_or_escalate(TASK, retries, CONFIG, fix=FixRequest("gates failed: lint", "E1"), reason="gates failed: lint",
                        exhausted=FixRequest("gates", "E1"), why="gates still failing")  # fmt: skip
    assert d.target is target
    assert WF.is_valid(S.RUNNING_TESTS, target)
    if target is S.FIXING_ISSUES:
        assert (d.fields, d.fix, d.escalation) == (
            {"retry_count": retries + 1},
            FixRequest("gates failed: lint", "E1"),
            None,
        )
    else:
        assert d.fix == FixRequest("gates", "E1")
        assert d.escalation is not None
        assert "retry budget of 2 (retry_budget) exhausted" in d.escalation.body.problem


@pytest.mark.parametrize(
    ("presence", "target"), [(Presence.EXISTS, S.COMPLETED), (Presence.MISSING, S.PLANNING_APPROACH)]
)
def test_triage(presence: Presence, target: IssueState) -> None:
    task = Task(id=TASK, title="Add a parser", presence=presence)
    assert triage(task).target is target
    assert WF.is_valid(S.RECEIVED, target)


def test_a_task_going_round_in_circles_needs_a_human() -> None:
    ctx = WorkflowContext(task_id=TASK, max_iterations=CONFIG.max_iterations)
    ctx.bind(WF)
    for state in [S.PLANNING_APPROACH, S.IMPLEMENTING] + [S.RUNNING_TESTS, S.FIXING_ISSUES] * 4:
        ctx.transition_to(state, "test")
    d = limit_reached(TASK, S.FIXING_ISSUES, ctx, CONFIG, WF)
    assert d is not None
    assert d.target is S.REQUIRES_HUMAN_INTERVENTION
    assert d.escalation is not None
    assert d.escalation.source == "loop-detection"
    assert limit_reached(TASK, S.CREATING_PR, ctx, CONFIG, WF) is None  # delivery is never cut short


def test_a_fresh_task_has_no_limit_reached() -> None:
    ctx = WorkflowContext(task_id=TASK, max_iterations=CONFIG.max_iterations)
    ctx.bind(WF)
    assert limit_reached(TASK, S.RECEIVED, ctx, CONFIG, WF) is None


# ---------------------------------------------------------------- after the gates (after_gates.py)

FIRST = [S.RECEIVED, S.PLANNING_APPROACH, S.IMPLEMENTING]  # states left before the first gate pass
TESTED = [*FIRST, S.RUNNING_TESTS, S.VALIDATING_SOLUTION]  # ... and before the pass right after the tester
FIXED = [*TESTED, S.RUNNING_TESTS, S.IMPLEMENTING]  # ... and after the developer fixed what the tester found


@pytest.mark.parametrize(
    ("tier", "tiers", "previous", "target"),
    [
        (Tier.NORMAL, None, FIRST, S.VALIDATING_SOLUTION),
        (Tier.CRITICAL, None, FIRST, S.VALIDATING_SOLUTION),
        (Tier.LOW, None, FIRST, S.REVIEWING_CODE),
        (Tier.LOW, [Tier.LOW], FIRST, S.VALIDATING_SOLUTION),
        (Tier.NORMAL, [], FIRST, S.REVIEWING_CODE),
        (Tier.NORMAL, None, TESTED, S.REVIEWING_CODE),  # one tester round per task
        (Tier.CRITICAL, None, FIXED, S.REVIEWING_CODE),
    ],
)
def test_passed_gates_send_a_task_in_tester_tiers_to_its_one_tester_round(
    tier: Tier, tiers: list[Tier] | None, previous: list[IssueState], target: IssueState
) -> None:
    config = CONFIG if tiers is None else PmConfig(tester_tiers=tiers)
    d = gates_passed(tier, previous, config, WF, 11)
    assert (d.target, d.fix, d.escalation, d.fields) == (target, None, None, {})
    assert WF.is_valid(S.RUNNING_TESTS, target)


@pytest.mark.parametrize(
    ("previous", "failed", "retries", "target", "source"),
    [
        (TESTED, ["3-tests-run"], 0, S.IMPLEMENTING, "the tester's edge-case tests fail (3-tests-run)"),
        (TESTED, ["3-tests-run", "scope"], 1, S.IMPLEMENTING, "the tester's edge-case tests fail (3-tests-run, scope)"),
        (TESTED, ["4-lint-typecheck"], 0, S.FIXING_ISSUES, "gates failed: 4-lint-typecheck"),
        (FIRST, ["3-tests-run"], 0, S.FIXING_ISSUES, "gates failed: 3-tests-run"),
        (FIXED, ["3-tests-run"], 1, S.FIXING_ISSUES, "gates failed: 3-tests-run"),
        (FIXED, ["tester-tests"], 1, S.FIXING_ISSUES, "gates failed: tester-tests"),
        (TESTED, ["3-tests-run"], 2, S.WAITING_FOR_HUMAN_INPUT, "gates"),  # the budget covers the developer too
    ],
)
def test_failed_gates_after_the_tester_go_back_to_the_developer_within_the_budget(
    previous: list[IssueState], failed: list[str], retries: int, target: IssueState, source: str
) -> None:
    d = gates_failed(TASK, retries, CONFIG, previous, failed, "E1")
    assert d.target is target
    assert WF.is_valid(S.RUNNING_TESTS, target)
    assert d.fix == FixRequest(source, "E1")
    if target is S.WAITING_FOR_HUMAN_INPUT:
        assert d.escalation is not None
        assert "retry budget of 2 (retry_budget) exhausted" in d.escalation.body.problem
    else:
        assert (d.fields, d.escalation) == ({"retry_count": retries + 1}, None)
