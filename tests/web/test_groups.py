"""Every lifecycle state sits in exactly one board column; every column holds some state."""

from __future__ import annotations

import pytest

from pm_agent.lifecycle import IssueState
from pm_agent.lifecycle.workflow_file import load_builtin_workflow
from pm_agent.web.board import slot_numbers
from pm_agent.web.groups import GROUPS, STATE_GROUP, group_of


@pytest.mark.parametrize("state", list(IssueState))
def test_every_state_has_a_known_group(state: IssueState) -> None:
    assert group_of(state.value) in {name for name, _ in GROUPS}


@pytest.mark.parametrize("name", ["default", "seed003"])
def test_every_state_of_the_builtin_workflows_is_on_the_board(name: str) -> None:
    workflow = load_builtin_workflow(name)
    unmapped = [state.value for state in workflow.states if state not in STATE_GROUP]
    assert unmapped == []


def test_every_column_is_used_and_the_terminal_states_are_apart() -> None:
    assert {name for name, _ in GROUPS} == set(STATE_GROUP.values())
    assert group_of("completed") == "done"
    assert group_of("failed") == "failed"
    assert group_of("waiting_for_human_input") == "waiting"
    assert group_of("received") == "queued"


def test_an_unknown_state_is_an_error() -> None:
    with pytest.raises(ValueError, match="not_a_state"):
        group_of("not_a_state")


def test_slot_numbers_reuse_the_lowest_free_slot() -> None:
    from datetime import UTC, datetime

    from pm_agent.store import EventRecord

    def dispatched(n: int, task: str, slots: list[str]) -> EventRecord:
        at = datetime(2026, 1, 1, tzinfo=UTC)
        payload = {"slots": slots}
        return EventRecord(id=n, run_id="r", task_id=task, kind="slot.dispatched", payload=payload, created_at=at)

    events = [
        dispatched(1, "a", ["a"]),
        dispatched(2, "b", ["a", "b"]),
        dispatched(3, "c", ["a", "b", "c"]),
        dispatched(4, "d", ["a", "c", "d"]),  # b finished: d takes slot 2
        dispatched(5, "e", ["d", "e"]),  # a and c finished: e takes slot 1
    ]
    assert slot_numbers(events) == {"d": 2, "e": 1}
