"""States and roles: seed 003's values, seed 004's aliases and "Can signal" lists."""

from __future__ import annotations

import pytest

from pm_agent.lifecycle import (
    AGENT_ROLES,
    ALLOWED_SIGNALS,
    FOLLOWUP_TARGETS,
    PM_AGENT_ROLES,
    ROLES,
    IssueState,
    Role,
    SignalKind,
    can_signal,
    is_known_role,
    parse_state,
    resolve_role,
)

SEED_003_VALUES = {
    "received",
    "analyzing_requirements",
    "requirements_unclear",
    "waiting_for_requirements_clarification",
    "requirements_clarified",
    "planning_approach",
    "creating_tests",
    "updating_tests",
    "running_tests",
    "implementing",
    "fixing_issues",
    "refactoring",
    "validating_solution",
    "addressing_feedback",
    "creating_pr",
    "completed",
    "waiting_for_human_input",
    "human_input_received",
    "failed",
    "blocked",
    "requires_human_intervention",
}


def test_states_are_seed_003_plus_reviewing_code() -> None:
    assert {s.value for s in IssueState} == SEED_003_VALUES | {"reviewing_code"}
    assert all(s.name == s.value.upper() for s in IssueState)
    assert "reviewing_architecture" not in {s.value for s in IssueState}
    assert "reviewing_integration" not in {s.value for s in IssueState}


def test_states_are_strings() -> None:
    assert isinstance(IssueState.RUNNING_TESTS, str)
    assert str(IssueState.RUNNING_TESTS) == "running_tests"
    assert f"{IssueState.BLOCKED}" == "blocked"


@pytest.mark.parametrize("text", ["running_tests", "RUNNING_TESTS", " Running_Tests "])
def test_parse_state_accepts_values_and_names(text: str) -> None:
    assert parse_state(text) is IssueState.RUNNING_TESTS


def test_parse_state_refuses_unknown_names() -> None:
    with pytest.raises(ValueError, match=r"unknown state 'reviewing_architecture' \(known: received, "):
        parse_state("reviewing_architecture")


@pytest.mark.parametrize(
    ("name", "role"),
    [
        ("chaoswhisperer", Role.ANALYST),
        ("ChaosWhisperer", Role.ANALYST),
        ("pathseeker", Role.PLANNER),
        ("PathSeeker", Role.PLANNER),
        ("codeweaver", Role.DEVELOPER),
        ("CODEWEAVER", Role.DEVELOPER),
        ("siegemaster", Role.TESTER),
        ("lawbringer", Role.REVIEWER),
        ("Lawbringer", Role.REVIEWER),
        ("spiritmender", Role.FIXER),
        ("ward", Role.WARD),
        ("Ward", Role.WARD),
        ("navigator", Role.REVIEWER),
        ("pm", Role.PM),
        (" Developer ", Role.DEVELOPER),
        ("fixer", Role.FIXER),
    ],
)
def test_resolve_role_accepts_names_and_seed_004_aliases(name: str, role: Role) -> None:
    assert resolve_role(name) is role
    assert resolve_role(name) == role.value
    assert is_known_role(name)


@pytest.mark.parametrize("name", ["wizard", "", "code weaver", "navigators"])
def test_resolve_role_refuses_unknown_names(name: str) -> None:
    with pytest.raises(ValueError, match="unknown role") as info:
        resolve_role(name)
    assert "codeweaver" in str(info.value)
    assert "developer" in str(info.value)
    assert not is_known_role(name)


def test_roles_cover_every_role_once() -> None:
    assert list(ROLES) == list(Role)
    assert [r.value for r in Role] == [
        "pm",
        "analyst",
        "planner",
        "tester",
        "ward",
        "developer",
        "fixer",
        "reviewer",
    ]
    aliases = [alias for info in ROLES.values() for alias in info.aliases]
    assert len(aliases) == len(set(aliases))


def test_agents_and_pm_agent_roles() -> None:
    assert {Role.PM, Role.WARD} == PM_AGENT_ROLES
    assert set(Role) - {Role.PM, Role.WARD} == AGENT_ROLES
    assert not ROLES[Role.WARD].is_agent
    assert ROLES[Role.DEVELOPER].is_agent


def test_signal_kinds_are_seed_004s() -> None:
    assert {k.value for k in SignalKind} == {
        "complete",
        "partially-complete",
        "needs-user-input",
        "needs-role-followup",
    }


def test_allowed_signals_follow_seed_004_can_signal_lists() -> None:
    everything = {"complete", "partially-complete", "needs-user-input", "needs-role-followup"}
    expected = {
        Role.PM: set(),
        Role.ANALYST: {"complete", "needs-user-input"},
        Role.PLANNER: everything,
        Role.TESTER: {"complete", "partially-complete", "needs-role-followup"},
        Role.WARD: set(),
        Role.DEVELOPER: everything,
        Role.FIXER: everything,
        Role.REVIEWER: {"complete", "needs-role-followup"},
    }
    assert {role: set(kinds) for role, kinds in ALLOWED_SIGNALS.items()} == expected
    assert all(isinstance(kinds, frozenset) for kinds in ALLOWED_SIGNALS.values())


@pytest.mark.parametrize(
    ("role", "kind", "allowed"),
    [
        ("siegemaster", "needs-user-input", False),
        ("siegemaster", "needs-role-followup", True),
        ("lawbringer", "partially-complete", False),
        ("chaoswhisperer", "needs-user-input", True),
        ("analyst", "needs-role-followup", False),
        ("ward", "complete", False),
        ("pm", "complete", False),
        ("wizard", "complete", False),
        ("developer", "bogus", False),
    ],
)
def test_can_signal(role: str, kind: str, allowed: bool) -> None:
    assert can_signal(role, kind) is allowed


def test_followup_targets_are_seed_004s_target_roles() -> None:
    seed_names = ["pathseeker", "codeweaver", "siegemaster", "lawbringer", "spiritmender"]
    assert {resolve_role(n) for n in seed_names} == FOLLOWUP_TARGETS
    assert FOLLOWUP_TARGETS <= AGENT_ROLES
