"""The workflow file's routing keys (on_complete, followup, on_answer, status) and their check."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pm_agent.errors import WorkflowError
from pm_agent.lifecycle import IssueState, check_workflow, default_workflow, load_workflow

S = IssueState

ROUTED = """
    version: 1
    states:
      received:
        owner: pm
        on_complete: implementing
        status: pending
        next: [implementing, failed]
      implementing:
        owner: codeweaver
        on_complete: completed
        followup: {spiritmender: failed}
        next: [completed, failed, waiting_for_human_input]
      waiting_for_human_input:
        owner: null
        waiting: true
        on_answer: failed
        status: escalated
        next: [failed]
      completed:
        owner: null
        terminal: true
        next: []
      failed:
        owner: null
        terminal: true
        status: failed
        next: []
"""


def test_routing_keys_load_with_role_aliases_resolved(tmp_path: Path) -> None:
    wf = load_workflow(_write(tmp_path, ROUTED), check=True)
    assert wf.on_complete(S.RECEIVED) is S.IMPLEMENTING
    assert wf.on_complete(S.IMPLEMENTING) is S.COMPLETED
    assert wf.followup(S.IMPLEMENTING, "fixer") is S.FAILED  # spiritmender is the fixer
    assert wf.followup(S.IMPLEMENTING, "developer") is None
    assert wf.on_answer(S.WAITING_FOR_HUMAN_INPUT) is S.FAILED
    assert (wf.status(S.RECEIVED), wf.status(S.IMPLEMENTING), wf.status(S.FAILED)) == ("pending", None, "failed")


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "workflow.yaml"
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("on_complete: completed", "on_complete: waiting_for_human_input_x", "on_complete"),
        ("followup: {spiritmender: failed}", "followup: {nobody: failed}", "followup"),
        ("followup: {spiritmender: failed}", "followup: [failed]", "followup must be a mapping"),
        ("status: pending", "status: done", "status must be one of"),
    ],
)
def test_bad_routing_keys_are_refused_at_load(tmp_path: Path, old: str, new: str, message: str) -> None:
    with pytest.raises(WorkflowError, match=message):
        load_workflow(_write(tmp_path, ROUTED.replace(old, new, 1)))


@pytest.mark.parametrize(
    ("old", "new", "key"),
    [
        ("on_complete: completed", "on_complete: received", "on_complete routes to received"),
        ("followup: {spiritmender: failed}", "followup: {fixer: received}", "followup.fixer routes to received"),
        ("on_answer: failed", "on_answer: completed", "on_answer routes to completed"),
    ],
)
def test_a_route_that_is_not_an_edge_fails_the_check(tmp_path: Path, old: str, new: str, key: str) -> None:
    wf = load_workflow(_write(tmp_path, ROUTED.replace(old, new, 1)))
    found = [(v.kind, v.message) for v in check_workflow(wf)]
    assert any(kind == "bad-route" and key in message for kind, message in found), found
    with pytest.raises(WorkflowError, match="bad-route"):
        load_workflow(_write(tmp_path, ROUTED.replace(old, new, 1)), check=True)


def test_default_routes_every_agent_state_on_complete() -> None:
    wf = default_workflow()
    for state, spec in wf.states.items():
        if spec.owner not in (None, "pm", "ward"):
            assert wf.on_complete(state) in wf.next_states(state), state
    assert [v for v in check_workflow(wf) if v.kind == "bad-route"] == []


def test_default_waiting_states_name_where_an_answer_goes() -> None:
    wf = default_workflow()
    assert wf.on_answer(S.WAITING_FOR_HUMAN_INPUT) is S.HUMAN_INPUT_RECEIVED
    assert wf.on_answer(S.WAITING_FOR_REQUIREMENTS_CLARIFICATION) is S.REQUIREMENTS_CLARIFIED
    assert {s for s in wf.states if wf.is_waiting(s)} == {s for s in wf.states if wf.on_answer(s) is not None}
