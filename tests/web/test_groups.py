"""Every lifecycle state sits in exactly one board column; every column holds some state; the board's slot numbers
replay the loop's agent slots."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from pm_agent.lifecycle import IssueState
from pm_agent.lifecycle.workflow_file import load_builtin_workflow
from pm_agent.store import EventRecord, SessionRecord, SessionStatus
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


def _at(second: int) -> datetime:
    return datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=second)


def _dispatched(n: int, task: str, slots: list[str]) -> EventRecord:
    return EventRecord(
        id=n, run_id="r", task_id=task, kind="slot.dispatched", payload={"slots": slots}, created_at=_at(n)
    )


def _session(n: int, task: str, start: float, end: float | None) -> SessionRecord:
    return SessionRecord(
        id=n, run_id="r", task_id=task, role="developer", attempt=1, token="t", runner="claude",
        agent_session_id=None, resumed_from=None, status=SessionStatus.RUNNING, pid=None, exit_code=None, workdir="/w",
        started_at=_at(0) + timedelta(seconds=start), last_output_at=None,
        ended_at=None if end is None else _at(0) + timedelta(seconds=end), cost_usd=0, input_tokens=0,
        output_tokens=0, last_lines="",
    )  # fmt: skip


def test_slot_numbers_reuse_the_lowest_free_slot() -> None:
    events = [
        _dispatched(1, "a", ["a"]),
        _dispatched(2, "b", ["a", "b"]),
        _dispatched(3, "c", ["a", "b", "c"]),
        _dispatched(4, "d", ["a", "c", "d"]),  # b gave its slot back: d takes slot 2
        _dispatched(5, "e", ["d", "e"]),  # a and c gave theirs back: e takes slot 1
    ]
    assert slot_numbers(events) == {"d": 2, "e": 1}


def test_a_slot_is_held_by_an_agent_session_not_by_a_task_pm_agent_checks() -> None:
    events = [_dispatched(1, "a", ["a"]), _dispatched(2, "b", ["a", "b"]), _dispatched(10, "c", ["b", "c"])]
    sessions = [
        _session(1, "a", 1.5, 5),  # a's agent ends at 5: pm-agent checks a, which holds no slot from then
        _session(2, "b", 2.5, None),  # b's agent still works
        _session(3, "a", 7, None),  # a's fixer takes a slot without a dispatch: the lowest free, 1
    ]
    assert slot_numbers(events[:2], sessions[:2]) == {"b": 2}
    assert slot_numbers(events[:2], sessions) == {"a": 1, "b": 2}
    # c's dispatch at 10 names b and c only (a's fixer ended meanwhile, say): a holds none, c takes the lowest.
    sessions[2] = _session(3, "a", 7, 9)
    assert slot_numbers(events, sessions) == {"b": 2, "c": 1}
