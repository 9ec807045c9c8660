"""The plan diff, as a pure function: stored tasks + an edited plan + task states -> actions."""

from __future__ import annotations

import pytest

from pm_agent.engine.plandiff import REMOVED, ChangeKind, Known, diff_plan, text_sha
from pm_agent.errors import PlanError
from pm_agent.lifecycle import IssueState
from pm_agent.plan import parse_plan_text, resolve_dependencies
from pm_agent.plan.models import Task

S = IssueState

V1 = """\
# Plan: calc

### Task 1: Addition
Add add().

### Task 2: Subtraction
**Depends on:** Task 1
Add sub().

### Task 3: Multiplication
**Depends on:** Task 1
Add mul().
"""


def tasks(text: str) -> list[Task]:
    return resolve_dependencies(parse_plan_text(text)[1])


def known(text: str, states: dict[str, IssueState], extra: tuple[Known, ...] = ()) -> list[Known]:
    return [
        Known(t.id, states.get(t.id, S.RECEIVED), text_sha(t.title, t.body), tuple(t.dependency_ids()), True)
        for t in tasks(text)
    ] + list(extra)


def test_same_plan_changes_nothing() -> None:
    diff = diff_plan(known(V1, {}), tasks(V1))
    assert diff.empty
    assert diff.counts() == {"added": 0, "updated": 0, "cancelled": 0, "escalated": 0, "unchanged": 3}


def test_trailing_blanks_are_no_change() -> None:
    edited = V1.replace("Add sub().", "Add sub().   ")
    assert diff_plan(known(V1, {}), tasks(edited)).empty


def test_added_task_is_queued() -> None:
    v2 = V1 + "\n### Task 4: Division\n**Depends on:** Task 3\nAdd div().\n"
    diff = diff_plan(known(V1, {"1": S.COMPLETED}), tasks(v2))
    assert [t.id for t in diff.added] == ["4"]
    assert diff.added[0].dependency_ids() == ["3"]
    assert diff.counts()["updated"] == diff.counts()["cancelled"] == diff.counts()["escalated"] == 0


def test_queued_task_takes_new_text() -> None:
    v2 = V1.replace("Add sub().", "Add sub() with a docstring.")
    diff = diff_plan(known(V1, {"1": S.IMPLEMENTING}), tasks(v2))
    assert [t.id for t in diff.updated] == ["2"]
    assert "with a docstring" in diff.updated[0].body
    assert not diff.escalated


def test_queued_task_in_a_slot_is_escalated_not_updated() -> None:
    v2 = V1.replace("Add sub().", "Add sub() with a docstring.")
    diff = diff_plan(known(V1, {}), tasks(v2), running={"2"})
    assert not diff.updated
    assert [(c.task_id, c.kind) for c in diff.escalated] == [("2", ChangeKind.CHANGED)]


def test_dependency_change_alone_updates_a_queued_task() -> None:
    v2 = V1.replace("**Depends on:** Task 1\nAdd mul().", "**Depends on:** Task 2\nAdd mul().")
    diff = diff_plan(known(V1, {}), tasks(v2))
    assert [t.id for t in diff.updated] == ["3"]  # its text changed too: the line is in its section
    old = known(V1, {})
    moved = [Known(k.task_id, k.state, k.sha, ("9",) if k.task_id == "2" else k.deps, True) for k in old]
    diff = diff_plan(moved, tasks(V1))
    assert [t.id for t in diff.updated] == ["2"]  # same text, other dependencies (inferred edges moved)


@pytest.mark.parametrize("state", [S.IMPLEMENTING, S.COMPLETED, S.WAITING_FOR_HUMAN_INPUT])
def test_change_to_work_under_way_or_done_is_escalated_once(state: IssueState) -> None:
    v2 = V1.replace("Add add().", "Add add() for floats too.")
    diff = diff_plan(known(V1, {"1": state}), tasks(v2))
    assert not diff.updated
    [change] = diff.escalated
    assert (change.task_id, change.kind, change.state) == ("1", ChangeKind.CHANGED, state)
    assert change.task is not None
    assert "floats" in change.task.body
    again = diff_plan(known(V1, {"1": state}), tasks(v2), asked={"1": change.sha})
    assert again.empty  # already asked about this text
    v3 = v2.replace("floats too", "floats and ints")
    assert len(diff_plan(known(V1, {"1": state}), tasks(v3), asked={"1": change.sha}).escalated) == 1


def test_removed_queued_task_is_cancelled_and_others_escalated() -> None:
    v2 = V1.split("### Task 3")[0]
    diff = diff_plan(known(V1, {}), tasks(v2))
    assert diff.cancelled == ["3"]
    assert not diff.escalated
    running = diff_plan(known(V1, {"3": S.RUNNING_TESTS}), tasks(v2))
    assert running.cancelled == []
    assert [(c.task_id, c.kind, c.task) for c in running.escalated] == [("3", ChangeKind.REMOVED, None)]
    assert diff_plan(known(V1, {"3": S.RUNNING_TESTS}), tasks(v2), asked={"3": REMOVED}).empty
    assert diff_plan(known(V1, {"3": S.FAILED}), tasks(v2)).empty  # cancelled before: nothing to do


def test_tasks_pm_agent_added_are_left_alone() -> None:
    sub = Known("1.1", S.RECEIVED, "x", (), False)
    diff = diff_plan(known(V1, {}, (sub,)), tasks(V1))
    assert diff.empty
    clash = V1 + "\n### Task 1.1: Clash\nSomething.\n"
    with pytest.raises(PlanError, match=r"Task 1\.1: pm-agent already added a task with this id"):
        diff_plan(known(V1, {}, (sub,)), tasks(clash))
