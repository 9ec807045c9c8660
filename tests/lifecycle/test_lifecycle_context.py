"""WorkflowContext: recorded transitions, refused ones, loop detection and the iteration budget."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from pm_agent.errors import TransitionError
from pm_agent.lifecycle import (
    IssueState,
    StateChange,
    WorkflowContext,
    default_workflow,
    load_builtin_workflow,
)

S = IssueState


def walk(ctx: WorkflowContext, *states: IssueState) -> WorkflowContext:
    for state in states:
        ctx.transition_to(state, reason=f"to {state.value}")
    return ctx


def test_new_context_starts_received_with_the_pm() -> None:
    ctx = WorkflowContext(task_id="T1")
    assert ctx.current_state is S.RECEIVED
    assert ctx.current_agent == "pm"
    assert ctx.responsible_agent() == "pm"
    assert (ctx.iteration_count, ctx.max_iterations, ctx.confidence_threshold) == (0, 10, 0.85)
    assert ctx.previous_states == []
    assert ctx.state_history_with_timestamps == []
    assert ctx.quality_gates_passed == []
    assert ctx.blocking_issues == []
    assert ctx.workflow is default_workflow()


def test_valid_transition_is_recorded() -> None:
    ctx = WorkflowContext(task_id="T1")
    before = datetime.now(UTC)
    ctx.transition_to(S.PLANNING_APPROACH, reason="every task is planned")
    after = datetime.now(UTC)

    assert ctx.current_state is S.PLANNING_APPROACH
    assert ctx.previous_states == [S.RECEIVED]
    assert ctx.iteration_count == 1
    (change,) = ctx.state_history_with_timestamps
    assert change.from_state is S.RECEIVED
    assert change.to_state is S.PLANNING_APPROACH
    assert change.reason == "every task is planned"
    assert change.iteration == 0
    assert change.timestamp.utcoffset() == timedelta(0)
    assert before <= change.timestamp <= after

    ctx.transition_to("implementing")
    assert ctx.current_state.value == "implementing"
    assert ctx.current_agent == "developer"
    assert ctx.state_history_with_timestamps[1].iteration == 1
    assert ctx.state_history_with_timestamps[1].reason == ""


def test_current_agent_follows_the_owner() -> None:
    ctx = walk(WorkflowContext(task_id="T1"), S.PLANNING_APPROACH, S.IMPLEMENTING, S.RUNNING_TESTS)
    assert ctx.current_agent == "ward"
    walk(ctx, S.FIXING_ISSUES)
    assert ctx.current_agent == "fixer"
    walk(ctx, S.RUNNING_TESTS, S.REVIEWING_CODE)
    assert ctx.current_agent == "reviewer"
    walk(ctx, S.WAITING_FOR_HUMAN_INPUT)
    assert ctx.current_agent is None
    assert ctx.responsible_agent() is None


def test_timestamp_is_iso_utc_in_json() -> None:
    ctx = walk(WorkflowContext(task_id="T1"), S.PLANNING_APPROACH)
    stamp = ctx.model_dump(mode="json")["state_history_with_timestamps"][0]["timestamp"]
    parsed = datetime.fromisoformat(stamp)
    assert parsed.utcoffset() == timedelta(0)


@pytest.mark.parametrize(
    ("path", "target"),
    [
        ((), S.CREATING_PR),
        ((), S.IMPLEMENTING),
        ((S.PLANNING_APPROACH,), S.REVIEWING_CODE),
        ((S.PLANNING_APPROACH, S.IMPLEMENTING), S.COMPLETED),
        ((S.FAILED,), S.RECEIVED),
        ((S.PLANNING_APPROACH, S.IMPLEMENTING, S.RUNNING_TESTS, S.COMPLETED), S.RUNNING_TESTS),
    ],
)
def test_invalid_transition_raises_and_changes_nothing(
    path: tuple[IssueState, ...], target: IssueState
) -> None:
    ctx = walk(WorkflowContext(task_id="T1", quality_gates_passed=["lint"], blocking_issues=["x"]), *path)
    before = ctx.model_dump()
    with pytest.raises(TransitionError) as info:
        ctx.transition_to(target, reason="nope")
    assert ctx.model_dump() == before
    message = str(info.value)
    assert ctx.current_state.value in message
    assert target.value in message


def test_invalid_transition_message_lists_the_allowed_states() -> None:
    ctx = WorkflowContext(task_id="T1")
    with pytest.raises(
        TransitionError, match=r"received -> creating_pr \(allowed from received: analyzing_requirements"
    ):
        ctx.transition_to(S.CREATING_PR)


def test_terminal_state_is_never_left() -> None:
    ctx = walk(WorkflowContext(task_id="T1"), S.FAILED)
    assert ctx.is_finished
    for state in IssueState:
        with pytest.raises(TransitionError, match="failed is terminal"):
            ctx.transition_to(state)
    assert ctx.iteration_count == 1


def test_unknown_state_name_is_a_transition_error() -> None:
    ctx = WorkflowContext(task_id="T1")
    before = ctx.model_dump()
    with pytest.raises(TransitionError, match="received -> 'reviewing_architecture'"):
        ctx.transition_to("reviewing_architecture")
    assert ctx.model_dump() == before


def test_bound_workflow_is_the_one_checked() -> None:
    seed = load_builtin_workflow("seed003")
    ctx = WorkflowContext.start("T1", workflow=seed)
    assert ctx.workflow is seed
    with pytest.raises(TransitionError):
        ctx.transition_to(S.PLANNING_APPROACH)  # seed 003 has no such edge
    walk(ctx, S.CREATING_TESTS, S.IMPLEMENTING, S.RUNNING_TESTS)
    assert ctx.current_agent == "tester"  # seed 003 gives running_tests to the tester
    with pytest.raises(TransitionError):
        ctx.transition_to(S.REVIEWING_CODE)  # absent from seed 003
    assert walk(WorkflowContext(task_id="T2"), S.PLANNING_APPROACH).current_state is S.PLANNING_APPROACH


def test_start_in_another_state() -> None:
    ctx = WorkflowContext.start("T1", state=S.IMPLEMENTING)
    assert ctx.current_agent == "developer"
    assert ctx.workflow is default_workflow()


# ---------------------------------------------------------------- seed 003's loop detection


def test_not_a_loop_with_fewer_previous_states_than_the_window() -> None:
    ctx = walk(WorkflowContext(task_id="T1"), S.PLANNING_APPROACH, S.IMPLEMENTING)
    assert len(ctx.previous_states) == 2
    assert not ctx.is_in_loop()


def test_three_distinct_recent_states_are_not_a_loop() -> None:
    ctx = walk(WorkflowContext(task_id="T1"), S.PLANNING_APPROACH, S.IMPLEMENTING, S.RUNNING_TESTS)
    assert ctx.previous_states == [S.RECEIVED, S.PLANNING_APPROACH, S.IMPLEMENTING]
    assert not ctx.is_in_loop()


def test_bouncing_between_two_states_is_a_loop() -> None:
    ctx = walk(
        WorkflowContext(task_id="T1"),
        S.PLANNING_APPROACH,
        S.IMPLEMENTING,
        S.RUNNING_TESTS,
        S.FIXING_ISSUES,
        S.RUNNING_TESTS,
        S.FIXING_ISSUES,
    )
    assert ctx.previous_states[-3:] == [S.RUNNING_TESTS, S.FIXING_ISSUES, S.RUNNING_TESTS]
    assert ctx.is_in_loop()
    assert not ctx.is_in_loop(max_same_state_visits=5)  # planning, implementing, running, fixing
    walk(ctx, S.RUNNING_TESTS, S.FIXING_ISSUES)
    assert ctx.is_in_loop(max_same_state_visits=5)


def test_the_seed_counts_the_window_of_previous_states_only() -> None:
    # Seed 003 looks at previous_states, not at the current state: two states
    # seen within the last three left states is a loop even when the task just moved on.
    ctx = walk(
        WorkflowContext(task_id="T1"),
        S.PLANNING_APPROACH,
        S.IMPLEMENTING,
        S.PLANNING_APPROACH,
        S.CREATING_TESTS,
    )
    assert ctx.previous_states[-3:] == [S.PLANNING_APPROACH, S.IMPLEMENTING, S.PLANNING_APPROACH]
    assert ctx.is_in_loop()
    walk(ctx, S.IMPLEMENTING)
    assert ctx.previous_states[-3:] == [S.IMPLEMENTING, S.PLANNING_APPROACH, S.CREATING_TESTS]
    assert not ctx.is_in_loop()


def test_loop_detection_reads_the_restored_history() -> None:
    restored = WorkflowContext(
        task_id="T1",
        current_state=S.RUNNING_TESTS,
        previous_states=[S.IMPLEMENTING, S.IMPLEMENTING, S.IMPLEMENTING],
    )
    assert restored.is_in_loop()


# ---------------------------------------------------------------- iteration budget


def test_iterations_exhausted_at_max_iterations() -> None:
    ctx = WorkflowContext(task_id="T1", max_iterations=4)
    walk(ctx, S.PLANNING_APPROACH, S.IMPLEMENTING, S.RUNNING_TESTS)
    assert ctx.iteration_count == 3
    assert not ctx.iterations_exhausted
    walk(ctx, S.FIXING_ISSUES)
    assert ctx.iterations_exhausted
    # The budget does not block transitions: the PM still has to escalate.
    walk(ctx, S.REQUIRES_HUMAN_INTERVENTION)
    assert ctx.iterations_exhausted
    assert ctx.is_finished


def test_default_budget_is_ten() -> None:
    ctx = WorkflowContext(task_id="T1")
    walk(ctx, S.PLANNING_APPROACH, S.IMPLEMENTING)
    for _ in range(4):
        walk(ctx, S.RUNNING_TESTS, S.FIXING_ISSUES)
    assert ctx.iteration_count == 10
    assert ctx.iterations_exhausted
    assert ctx.is_in_loop()


# ---------------------------------------------------------------- persistence


def test_json_round_trip() -> None:
    ctx = walk(
        WorkflowContext(task_id="T1", quality_gates_passed=["lint", "types"], blocking_issues=["flaky"]),
        S.PLANNING_APPROACH,
        S.IMPLEMENTING,
        S.RUNNING_TESTS,
        S.WAITING_FOR_HUMAN_INPUT,
    )
    data = ctx.model_dump(mode="json")
    assert "workflow" not in data
    assert "_workflow" not in data
    restored = WorkflowContext.model_validate(data)
    assert restored.model_dump(mode="json") == data
    assert restored.model_dump() == ctx.model_dump()
    assert restored.current_agent is None  # kept as stored, not refilled
    restored.transition_to(S.HUMAN_INPUT_RECEIVED, reason="answered")
    assert restored.current_agent == "pm"
    assert WorkflowContext.model_validate_json(ctx.model_dump_json()).model_dump() == ctx.model_dump()


def test_restored_context_can_be_bound_through_validation_context() -> None:
    seed = load_builtin_workflow("seed003")
    data = WorkflowContext(task_id="T1").model_dump(mode="json")
    restored = WorkflowContext.model_validate(data, context={"workflow": seed})
    assert restored.workflow is seed
    other = WorkflowContext.model_validate(data).bind(seed)
    assert other.workflow is seed


@pytest.mark.parametrize(
    "data",
    [
        {"task_id": "T1", "current_state": "reviewing_architecture"},
        {"task_id": ""},
        {"task_id": "T1", "iteration_count": -1},
        {"task_id": "T1", "max_iterations": 0},
        {"task_id": "T1", "confidence_threshold": 1.5},
        {"task_id": "T1", "issue_number": 3},
    ],
)
def test_bad_stored_data_is_refused(data: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        WorkflowContext.model_validate(data)


def test_history_timestamps_must_be_timezone_aware() -> None:
    entry = {
        "from_state": "received",
        "to_state": "failed",
        "timestamp": "2024-01-01T00:00:00",
        "iteration": 0,
    }
    with pytest.raises(ValidationError):
        StateChange.model_validate(entry)
    ok = StateChange.model_validate({**entry, "timestamp": "2024-01-01T00:00:00Z"})
    assert ok.timestamp.tzinfo is not None
