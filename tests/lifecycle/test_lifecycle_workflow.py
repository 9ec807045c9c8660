"""The workflow files: the shipped default, seed 003's raw table, and files that must be refused."""

from __future__ import annotations

import textwrap
from importlib import resources
from pathlib import Path

import pytest
import yaml
from yaml.nodes import MappingNode, SequenceNode

from pm_agent.errors import InputError, WorkflowError
from pm_agent.lifecycle import (
    BUILTIN_WORKFLOWS,
    IssueState,
    StateSpec,
    Workflow,
    check_workflow,
    default_workflow,
    describe_workflow,
    load_builtin_workflow,
    load_workflow,
    parse_workflow,
    require_sound,
    workflow_rows,
)

S = IssueState
TERMINAL = {S.COMPLETED, S.FAILED, S.REQUIRES_HUMAN_INTERVENTION}
WAITING = {S.WAITING_FOR_HUMAN_INPUT, S.WAITING_FOR_REQUIREMENTS_CLARIFICATION}
WORKING = {
    S.PLANNING_APPROACH,
    S.CREATING_TESTS,
    S.UPDATING_TESTS,
    S.RUNNING_TESTS,
    S.IMPLEMENTING,
    S.FIXING_ISSUES,
    S.REFACTORING,
    S.VALIDATING_SOLUTION,
    S.ADDRESSING_FEEDBACK,
    S.REVIEWING_CODE,
    S.CREATING_PR,
}


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "workflow.yaml"
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def kinds(wf: Workflow) -> set[tuple[IssueState, str]]:
    return {(v.state, v.kind) for v in check_workflow(wf)}


# ---------------------------------------------------------------- shipped files


def test_builtin_files_are_package_resources() -> None:
    root = resources.files("pm_agent.lifecycle")
    for name in BUILTIN_WORKFLOWS.values():
        assert root.joinpath(name).is_file(), name
    assert "version: 1" in root.joinpath("workflow.yaml").read_text(encoding="utf-8")


def test_default_workflow_loads_and_checks_clean() -> None:
    wf = load_workflow()
    assert wf is default_workflow()
    assert set(wf.states) == set(IssueState)
    assert check_workflow(wf) == []
    assert require_sound(wf) is wf
    assert load_workflow(check=True) is wf


def test_default_ownership_follows_design() -> None:
    wf = default_workflow()
    expected = {
        S.RECEIVED: "pm",
        S.PLANNING_APPROACH: "pm",
        S.CREATING_PR: "pm",
        S.BLOCKED: "pm",
        S.REQUIREMENTS_UNCLEAR: "pm",
        S.REQUIREMENTS_CLARIFIED: "pm",
        S.HUMAN_INPUT_RECEIVED: "pm",
        S.ANALYZING_REQUIREMENTS: "analyst",
        S.CREATING_TESTS: "tester",
        S.UPDATING_TESTS: "tester",
        S.VALIDATING_SOLUTION: "tester",
        S.RUNNING_TESTS: "ward",
        S.IMPLEMENTING: "developer",
        S.REFACTORING: "developer",
        S.ADDRESSING_FEEDBACK: "developer",
        S.FIXING_ISSUES: "fixer",
        S.REVIEWING_CODE: "reviewer",
    }
    assert {s: wf.owner(s) for s in IssueState if wf.owner(s) is not None} == expected
    assert {s for s in IssueState if wf.is_terminal(s)} == TERMINAL
    assert {s for s in IssueState if wf.is_waiting(s)} == WAITING


def test_seed003_file_reports_exactly_its_unreachable_states_and_states_that_cannot_escalate() -> None:
    wf = load_builtin_workflow("seed003")
    assert S.REVIEWING_CODE not in wf
    violations = check_workflow(wf)
    unreachable = {(S.PLANNING_APPROACH, "unreachable"), (S.VALIDATING_SOLUTION, "unreachable"),
                   (S.ADDRESSING_FEEDBACK, "unreachable")}  # fmt: skip
    # Seed 003's table has no waiting_for_human_input edges at all: no agent's state can escalate there.
    agents = {state for state in wf.states if wf.owner(state) not in (None, "pm")}
    assert {(v.state, v.kind) for v in violations} == unreachable | {(s, "cannot-escalate") for s in agents}
    assert all(v.line is not None for v in violations)
    with pytest.raises(WorkflowError, match=f"{len(violations)} problems") as info:
        require_sound(wf)
    assert info.value.line == violations[0].line


def test_seed003_file_keeps_seed_003s_ownership() -> None:
    wf = load_builtin_workflow("seed003")
    assert wf.owner(S.RUNNING_TESTS) == "tester"
    assert wf.owner(S.FIXING_ISSUES) == "developer"
    assert wf.next_states(S.RECEIVED) == (S.ANALYZING_REQUIREMENTS, S.CREATING_TESTS, S.FAILED)


def test_default_only_adds_edges_to_seed_003() -> None:
    seed, default = load_builtin_workflow("seed003"), default_workflow()
    seed_edges = set(seed.edges())
    assert len(seed_edges) == 72
    assert seed_edges <= set(default.edges())
    for state in seed.states:
        assert seed.owner(state) == default.owner(state) or state in {S.RUNNING_TESTS, S.FIXING_ISSUES}
        assert seed.is_terminal(state) == default.is_terminal(state)
        assert seed.is_waiting(state) == default.is_waiting(state)


def _default_edges_with_lines() -> list[tuple[IssueState, IssueState, str]]:
    text = resources.files("pm_agent.lifecycle").joinpath("workflow.yaml").read_text(encoding="utf-8")
    lines = text.splitlines()
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    assert isinstance(root, MappingNode)
    states = next(v for k, v in root.value if k.value == "states")
    out: list[tuple[IssueState, IssueState, str]] = []
    for key, body in states.value:
        nxt = next(v for k, v in body.value if k.value == "next")
        assert isinstance(nxt, SequenceNode)
        out.extend((S(key.value), S(item.value), lines[item.start_mark.line]) for item in nxt.value)
    return out


def test_every_added_edge_carries_its_reason_in_the_file() -> None:
    seed = load_builtin_workflow("seed003")
    edges = _default_edges_with_lines()
    assert len(edges) == len(list(default_workflow().edges()))
    for source, target, line in edges:
        if seed.is_valid(source, target):
            assert "# seed 003" in line, line
        else:
            assert "# added: " in line, line
            reason = line.split("# added: ", 1)[1].strip()
            assert len(reason) > 10, line


def test_default_adds_the_edges_the_pm_loop_needs() -> None:
    wf = default_workflow()
    needed = [
        (S.RECEIVED, S.PLANNING_APPROACH),
        (S.RUNNING_TESTS, S.REVIEWING_CODE),
        (S.RUNNING_TESTS, S.VALIDATING_SOLUTION),
        (S.VALIDATING_SOLUTION, S.REVIEWING_CODE),
        (S.REVIEWING_CODE, S.CREATING_PR),
        (S.REVIEWING_CODE, S.FIXING_ISSUES),
        (S.REVIEWING_CODE, S.ADDRESSING_FEEDBACK),
        (S.REVIEWING_CODE, S.UPDATING_TESTS),
        (S.REVIEWING_CODE, S.FAILED),
        (S.CREATING_PR, S.FIXING_ISSUES),
        (S.IMPLEMENTING, S.PLANNING_APPROACH),
        (S.VALIDATING_SOLUTION, S.IMPLEMENTING),
        (S.REQUIREMENTS_CLARIFIED, S.PLANNING_APPROACH),
        (S.ANALYZING_REQUIREMENTS, S.REQUIRES_HUMAN_INTERVENTION),
        (S.HUMAN_INPUT_RECEIVED, S.REQUIRES_HUMAN_INTERVENTION),
    ]
    for state in WORKING:
        needed += [(state, S.WAITING_FOR_HUMAN_INPUT), (state, S.REQUIRES_HUMAN_INTERVENTION)]
        needed.append((S.HUMAN_INPUT_RECEIVED, state))
    missing = [(a.value, b.value) for a, b in needed if not wf.is_valid(a, b)]
    assert missing == []
    # The analyst asks through requirements_unclear (routing's needs-user-input, tests/engine/test_routing.py); a
    # spent retry budget waits in the generic state, as in every agent's state (`cannot-escalate`).
    assert wf.is_valid(S.ANALYZING_REQUIREMENTS, S.REQUIREMENTS_UNCLEAR)
    assert wf.is_valid(S.ANALYZING_REQUIREMENTS, S.WAITING_FOR_HUMAN_INPUT)


def test_workflow_queries() -> None:
    wf = default_workflow()
    assert wf.is_valid(S.IMPLEMENTING, S.RUNNING_TESTS)
    assert not wf.is_valid(S.RECEIVED, S.CREATING_PR)
    assert wf.next_states(S.COMPLETED) == ()
    assert wf.owner(S.WAITING_FOR_HUMAN_INPUT) is None
    assert not wf.is_terminal(S.BLOCKED)
    seed = load_builtin_workflow("seed003")
    assert seed.owner(S.REVIEWING_CODE) is None
    assert seed.next_states(S.REVIEWING_CODE) == ()
    assert not seed.is_valid(S.IMPLEMENTING, S.REVIEWING_CODE)


def test_describe_workflow_lists_every_state_owner_and_edge() -> None:
    wf = default_workflow()
    text = describe_workflow(wf)
    assert text.splitlines()[0].split() == ["state", "owner", "next", "states"]
    assert all(len(line) <= 100 for line in text.splitlines())
    for state in IssueState:
        assert any(line.startswith(state.value + " ") for line in text.splitlines()), state
    for _, target in wf.edges():
        assert target.value in text
    rows = {row[0]: row for row in workflow_rows(wf)}
    assert rows["running_tests"][1] == "ward"
    assert rows["completed"][1:] == ("(terminal)", "-")
    assert rows["waiting_for_human_input"][1] == "(waiting)"
    assert rows["received"][2] == "analyzing_requirements, creating_tests, failed, planning_approach, completed"


# ---------------------------------------------------------------- files that load


MINIMAL = textwrap.dedent("""
    version: 1
    states:
      received:
        owner: pm
        next: [implementing, failed]
      implementing:
        owner: codeweaver
        next: [completed]
      completed:
        owner: null
        terminal: true
        next: []
      failed:
        owner: null
        terminal: true
        next: []
""").lstrip("\n")


def test_minimal_file_loads_with_aliases_resolved(tmp_path: Path) -> None:
    wf = load_workflow(write(tmp_path, MINIMAL), check=True)
    assert wf.owner(S.IMPLEMENTING) == "developer"
    assert wf.lines[S.RECEIVED] == 3
    assert wf.source == tmp_path / "workflow.yaml"
    assert S.RUNNING_TESTS not in wf


def test_state_names_may_be_values_or_enum_names(tmp_path: Path) -> None:
    text = MINIMAL.replace("received:", "RECEIVED:").replace("[implementing,", "[IMPLEMENTING,")
    assert load_workflow(write(tmp_path, text)) == parse_workflow(MINIMAL)


# ---------------------------------------------------------------- files refused at load


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        (MINIMAL.replace("  implementing:", "  implementin:"), 6, "unknown state 'implementin'"),
        (
            MINIMAL.replace("[implementing, failed]", "[implementing, reviewing_architecture]"),
            5,
            "unknown state",
        ),
        (MINIMAL.replace("owner: codeweaver", "owner: wizard"), 7, "unknown role 'wizard'"),
        (MINIMAL.replace("next: [completed]", "next: [running_tests]"), 8, "'running_tests' is not defined"),
        (MINIMAL.replace("next: [completed]", "next: [completed, completed]"), 8, "listed twice"),
        (MINIMAL.replace("next: [completed]", "next: completed"), 8, "next must be a list"),
        (MINIMAL.replace("next: [completed]", "next: [[completed]]"), 8, "must be a state name"),
        (MINIMAL.replace("owner: codeweaver", "owner: [codeweaver]"), 7, "owner has the wrong type"),
        (
            MINIMAL.replace("terminal: true\n    next: []\n  failed", "terminal: 3\n    next: []\n  failed"),
            11,
            "terminal has the wrong type",
        ),
        (MINIMAL.replace("owner: codeweaver", "ownr: codeweaver"), 7, "unknown key 'ownr'"),
        (MINIMAL.replace("    owner: codeweaver\n", ""), 6, "missing 'owner'"),
        (
            MINIMAL.replace(
                "  implementing:\n", "  IMPLEMENTING:\n    owner: pm\n    next: []\n  implementing:\n"
            ),
            9,
            "given twice",
        ),
        (MINIMAL.replace("version: 1", "version: 2"), 1, "unsupported workflow version"),
        (MINIMAL.replace("version: 1", "versoin: 1"), 1, "unknown key 'versoin'"),
        (
            MINIMAL.replace("  received:\n    owner: pm\n    next: [implementing, failed]\n", ""),
            2,
            "no 'received' state",
        ),
        (MINIMAL.replace("next: [completed]", "next: [completed"), 9, "not valid YAML"),
        ("version: 1\n", 1, "no 'states' mapping"),
        ("- received\n", 1, "the workflow file must be a mapping"),
        ("states: [received]\n", 1, "states must be a mapping"),
        ("states:\n  received: implementing\n", 2, "state 'received' must be a mapping"),
        ("", 1, "empty"),
        (MINIMAL.replace("owner: codeweaver", "owner: !custom codeweaver"), 7, "cannot read this value"),
    ],
)
def test_bad_files_are_refused_with_their_line(tmp_path: Path, text: str, line: int, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(WorkflowError, match=message) as info:
        load_workflow(path)
    assert info.value.line == line
    assert info.value.path == path
    assert str(info.value).startswith(f"{path}:{line}: ")
    assert isinstance(info.value, InputError)


def test_unknown_state_error_names_the_known_states(tmp_path: Path) -> None:
    with pytest.raises(WorkflowError) as info:
        load_workflow(write(tmp_path, MINIMAL.replace("  implementing:", "  coding:")))
    assert "unknown state 'coding'" in info.value.message
    assert "running_tests" in info.value.message


def test_missing_file_is_a_workflow_error(tmp_path: Path) -> None:
    with pytest.raises(WorkflowError, match="cannot read") as info:
        load_workflow(tmp_path / "nope.yaml")
    assert info.value.line is None


def test_unknown_builtin_is_a_workflow_error() -> None:
    with pytest.raises(WorkflowError, match="no built-in workflow 'nope'"):
        load_builtin_workflow("nope")


# ---------------------------------------------------------------- files that load but do not check


def test_non_terminal_dead_end_cannot_terminate(tmp_path: Path) -> None:
    text = MINIMAL.replace("next: [completed]", "next: []")
    wf = load_workflow(write(tmp_path, text))
    violations = check_workflow(wf)
    assert [(v.state, v.kind, v.line) for v in violations] == [
        (S.IMPLEMENTING, "cannot-terminate", 6),
        (S.COMPLETED, "unreachable", 9),  # only implementing led there
    ]
    with pytest.raises(WorkflowError, match="implementing: cannot-terminate") as info:
        load_workflow(tmp_path / "workflow.yaml", check=True)
    assert info.value.line == 6


def test_cycle_without_exit_cannot_terminate(tmp_path: Path) -> None:
    text = MINIMAL.replace("next: [completed]", "next: [blocked]") + textwrap.indent(
        "blocked:\n  owner: pm\n  next: [implementing]\n", "  "
    )
    wf = load_workflow(write(tmp_path, text))
    assert kinds(wf) == {
        (S.IMPLEMENTING, "cannot-terminate"),
        (S.BLOCKED, "cannot-terminate"),
        (S.COMPLETED, "unreachable"),
    }


def test_terminal_with_edges_is_reported(tmp_path: Path) -> None:
    text = MINIMAL.replace(
        "terminal: true\n    next: []\n  failed", "terminal: true\n    next: [received]\n  failed"
    )
    wf = load_workflow(write(tmp_path, text))
    assert kinds(wf) == {(S.COMPLETED, "terminal-with-edges")}
    # ...and the edge is never taken: terminal states are not left.
    assert wf.next_states(S.COMPLETED) == ()
    assert not wf.is_valid(S.COMPLETED, S.RECEIVED)


def test_unreachable_state_is_reported(tmp_path: Path) -> None:
    text = MINIMAL + textwrap.indent("blocked:\n  owner: pm\n  next: [failed]\n", "  ")
    wf = load_workflow(write(tmp_path, text))
    (violation,) = check_workflow(wf)
    assert (violation.state, violation.kind, violation.line) == (S.BLOCKED, "unreachable", 17)
    assert str(violation) == "line 17: blocked: unreachable: no path leads here from received"


def test_an_agents_state_that_cannot_reach_a_human_is_reported(tmp_path: Path) -> None:
    """A spent retry budget moves the task to waiting_for_human_input: from an agent's state without that edge the
    move is refused and the task errors (the default workflow's analyzing_requirements, until it got the edge)."""
    waiting = textwrap.indent("waiting_for_human_input:\n  owner: null\n  waiting: true\n  next: [failed]\n", "  ")
    text = MINIMAL.replace("next: [implementing, failed]", "next: [implementing, failed, waiting_for_human_input]")
    wf = load_workflow(write(tmp_path, text + waiting))
    (violation,) = check_workflow(wf)
    assert (violation.state, violation.kind, violation.line) == (S.IMPLEMENTING, "cannot-escalate", 6)
    fixed = text.replace("next: [completed]", "next: [completed, waiting_for_human_input]") + waiting
    assert check_workflow(load_workflow(write(tmp_path, fixed))) == []  # the PM's received needs no such edge
    assert check_workflow(load_workflow(write(tmp_path, MINIMAL))) == []  # no state to wait in: nothing to ask


def test_no_owner_is_reported(tmp_path: Path) -> None:
    wf = load_workflow(write(tmp_path, MINIMAL.replace("owner: codeweaver", "owner: null")))
    assert kinds(wf) == {(S.IMPLEMENTING, "no-owner")}
    waiting = MINIMAL.replace("owner: codeweaver", "owner: null\n    waiting: true")
    assert check_workflow(load_workflow(write(tmp_path, waiting))) == []


def test_unknown_role_in_a_built_workflow_is_reported() -> None:
    wf = Workflow(
        {
            S.RECEIVED: StateSpec("pm", (S.IMPLEMENTING,)),
            S.IMPLEMENTING: StateSpec("navigator-9000", (S.COMPLETED,)),
            S.COMPLETED: StateSpec(None, terminal=True),
        }
    )
    violations = check_workflow(wf)
    assert [(v.state, v.kind) for v in violations] == [(S.IMPLEMENTING, "unknown-role")]
    assert violations[0].line is None
    assert "navigator-9000" in violations[0].message


def test_workflow_without_received_reaches_nothing() -> None:
    wf = Workflow({S.COMPLETED: StateSpec(None, terminal=True)})
    assert kinds(wf) == {(S.COMPLETED, "unreachable")}


def test_built_workflow_refuses_targets_outside_it() -> None:
    with pytest.raises(WorkflowError, match="'implementing' lists 'completed', not a state of this workflow"):
        Workflow(
            {
                S.RECEIVED: StateSpec("pm", (S.IMPLEMENTING,)),
                S.IMPLEMENTING: StateSpec("developer", (S.COMPLETED,)),
            }
        )


def test_workflows_are_immutable() -> None:
    wf = default_workflow()
    with pytest.raises(TypeError):
        wf.states[S.RECEIVED] = StateSpec("pm")  # type: ignore[index]
