"""Property tests: any sequence of attempted transitions keeps WorkflowContext consistent,
and check_workflow agrees with an independent reachability oracle on random tables."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from pm_agent.errors import TransitionError
from pm_agent.lifecycle import (
    IssueState,
    Role,
    StateSpec,
    Workflow,
    WorkflowContext,
    check_workflow,
    default_workflow,
    load_builtin_workflow,
    parse_workflow,
)

STATES = list(IssueState)
WORKFLOWS = {"default": default_workflow(), "seed003": load_builtin_workflow("seed003")}

# An attempt is either "follow edge number i of the current state" (so walks go deep)
# or "try this state" (mostly invalid), or a string that names no state.
attempts = st.lists(
    st.one_of(
        st.integers(min_value=0, max_value=30).map(lambda i: ("edge", i)),
        st.sampled_from(STATES).map(lambda s: ("state", s)),
        st.sampled_from(["reviewing_architecture", "", "RUNNING-TESTS", "done"]).map(lambda t: ("junk", t)),
    ),
    max_size=80,
)


def check_invariants(ctx: WorkflowContext) -> None:
    wf = ctx.workflow
    assert isinstance(ctx.current_state, IssueState)
    assert ctx.current_state in wf
    history = ctx.state_history_with_timestamps
    assert len(history) == ctx.iteration_count == len(ctx.previous_states)
    for i, change in enumerate(history):
        assert wf.is_valid(change.from_state, change.to_state)
        assert change.iteration == i
        assert change.from_state == ctx.previous_states[i]
        assert change.timestamp.utcoffset() is not None
    for earlier, later in itertools.pairwise(history):
        assert earlier.to_state == later.from_state
    if history:
        assert history[0].from_state is IssueState.RECEIVED
        assert history[-1].to_state == ctx.current_state
    assert ctx.current_agent == wf.owner(ctx.current_state)
    assert all(not wf.is_terminal(s) for s in ctx.previous_states)


@pytest.mark.parametrize("name", sorted(WORKFLOWS))
@settings(max_examples=150, deadline=None)
@given(steps=attempts)
def test_random_attempts_keep_the_context_consistent(name: str, steps: list[tuple[str, Any]]) -> None:
    wf = WORKFLOWS[name]
    ctx = WorkflowContext.start("T1", workflow=wf)
    check_invariants(ctx)
    for how, what in steps:
        if how == "edge":
            options = wf.next_states(ctx.current_state)
            target: Any = options[what % len(options)] if options else IssueState.RECEIVED
        else:
            target = what
        before = ctx.model_dump()
        expected_ok = how != "junk" and wf.is_valid(ctx.current_state, target)
        try:
            ctx.transition_to(target, reason=f"{how} {what}")
        except TransitionError:
            assert not expected_ok
            assert ctx.model_dump() == before
        else:
            assert expected_ok
            assert ctx.iteration_count == before["iteration_count"] + 1
            assert ctx.current_state == target
        if wf.is_terminal(before["current_state"]):
            assert ctx.current_state == before["current_state"]
        check_invariants(ctx)
    restored = WorkflowContext.model_validate(ctx.model_dump(mode="json"), context={"workflow": wf})
    assert restored.model_dump() == ctx.model_dump()
    check_invariants(restored)


# ---------------------------------------------------------------- check_workflow vs an oracle


@st.composite
def random_workflows(draw: st.DrawFn) -> Workflow:
    chosen = draw(st.sets(st.sampled_from(STATES), min_size=1, max_size=9))
    if draw(st.booleans()):
        chosen.add(IssueState.RECEIVED)
    states = sorted(chosen, key=STATES.index)
    specs = {}
    for state in states:
        terminal = draw(st.booleans())
        waiting = not terminal and draw(st.integers(0, 4)) == 0
        owner = draw(st.sampled_from([None, None, "pm", "developer", "codeweaver-x", *Role]))
        nxt = draw(st.lists(st.sampled_from(states), unique=True, max_size=4))
        specs[state] = StateSpec(owner, tuple(nxt), terminal=terminal, waiting=waiting)
    return Workflow(specs)


def oracle(wf: Workflow) -> set[tuple[IssueState, str]]:
    """The expected violations, by transitive closure (Warshall) rather than search."""
    states = list(wf.states)
    reach = {(a, b): wf.is_valid(a, b) or a == b for a in states for b in states}
    for k, i, j in itertools.product(states, repeat=3):
        if reach[i, k] and reach[k, j]:
            reach[i, j] = True
    expected: set[tuple[IssueState, str]] = set()
    for s in states:
        spec = wf.states[s]
        if spec.owner is not None and spec.owner not in {r.value for r in Role}:
            expected.add((s, "unknown-role"))
        if spec.owner is None and not spec.terminal and not spec.waiting:
            expected.add((s, "no-owner"))
        if spec.terminal and spec.next:
            expected.add((s, "terminal-with-edges"))
        if IssueState.RECEIVED not in wf or not reach[IssueState.RECEIVED, s]:
            expected.add((s, "unreachable"))
        if not any(reach[s, t] for t in states if wf.is_terminal(t)):
            expected.add((s, "cannot-terminate"))
        agents = {"analyst", "planner", "tester", "developer", "fixer", "reviewer"}  # not pm-agent's own pm, ward
        waits = IssueState.WAITING_FOR_HUMAN_INPUT
        if waits in states and spec.owner in agents and not spec.terminal and not wf.is_valid(s, waits):
            expected.add((s, "cannot-escalate"))
    return expected


@settings(max_examples=300, deadline=None)
@given(wf=random_workflows())
def test_check_workflow_agrees_with_the_oracle(wf: Workflow) -> None:
    violations = check_workflow(wf)
    assert {(v.state, v.kind) for v in violations} == oracle(wf)
    assert len(violations) == len({(v.state, v.kind) for v in violations})


def as_yaml(wf: Workflow) -> str:
    doc = {"version": 1, "states": {s.value: _state_doc(spec) for s, spec in wf.states.items()}}
    return yaml.safe_dump(doc, sort_keys=False)


def _state_doc(spec: StateSpec) -> dict[str, object]:
    doc: dict[str, object] = {
        "owner": None if spec.owner is None else str(spec.owner),
        "terminal": spec.terminal,
        "waiting": spec.waiting,
        "next": [t.value for t in spec.next],
    }
    # The routing keys (workflow files grew them with engine/routing.py); only those the state has.
    if spec.on_complete is not None:
        doc["on_complete"] = spec.on_complete.value
    if spec.followup:
        doc["followup"] = {role: target.value for role, target in spec.followup}
    if spec.on_answer is not None:
        doc["on_answer"] = spec.on_answer.value
    if spec.status is not None:
        doc["status"] = spec.status
    return doc


@settings(max_examples=200, deadline=None)
@given(wf=random_workflows())
def test_files_round_trip_through_the_loader(wf: Workflow) -> None:
    known = all(spec.owner is None or spec.owner in {r.value for r in Role} for spec in wf.states.values())
    if IssueState.RECEIVED not in wf or not known:
        return  # refused at load; covered by the bad-file tests
    loaded = parse_workflow(as_yaml(wf))
    assert loaded == wf
    assert list(loaded.states) == list(wf.states)
    assert [(v.state, v.kind) for v in check_workflow(loaded)] == [
        (v.state, v.kind) for v in check_workflow(wf)
    ]
    assert all(v.line is not None for v in check_workflow(loaded))


def test_shipped_default_round_trips() -> None:
    wf = default_workflow()
    assert parse_workflow(as_yaml(wf)) == wf
