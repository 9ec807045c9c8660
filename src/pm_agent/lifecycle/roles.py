"""Roles as data: who owns lifecycle states, seed 004's names for them, and what each may signal.

pm-agent's roles are seed 003's agent types, extended as shared/DESIGN.md reconciles
them with seed 004. Two roles are not agents: `pm` is pm-agent's own decision
step and `ward` is pm-agent running the gates (environment contract commands)
itself. The others are coding-agent sessions that talk back through the
`signal_back` tool, limited to the signals seed 004's "Can signal" lists give them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Literal


class Role(StrEnum):
    """A role that can own lifecycle states; the value is the canonical name."""

    PM = "pm"
    ANALYST = "analyst"
    PLANNER = "planner"
    TESTER = "tester"
    WARD = "ward"
    DEVELOPER = "developer"
    FIXER = "fixer"
    REVIEWER = "reviewer"


class SignalKind(StrEnum):
    """The four universal signals of seed 004's `signal-back` tool."""

    COMPLETE = "complete"
    PARTIALLY_COMPLETE = "partially-complete"
    NEEDS_USER_INPUT = "needs-user-input"
    NEEDS_ROLE_FOLLOWUP = "needs-role-followup"


Performer = Literal["agent", "pm-agent"]


@dataclass(frozen=True)
class RoleInfo:
    """One role: who performs it, its seed 004 names and the signals it may send."""

    role: Role
    performer: Performer
    aliases: tuple[str, ...]
    signals: frozenset[SignalKind]
    summary: str

    @property
    def is_agent(self) -> bool:
        """True when a coding-agent session performs the role, False when pm-agent does."""
        return self.performer == "agent"


_ALL_SIGNALS = frozenset(SignalKind)

ROLES: Mapping[Role, RoleInfo] = MappingProxyType(
    {
        info.role: info
        for info in (
            RoleInfo(
                Role.PM,
                "pm-agent",
                (),
                frozenset(),
                "pm-agent's own decisions: triage, planning, routing, integration, human contact",
            ),
            RoleInfo(
                Role.ANALYST,
                "agent",
                ("chaoswhisperer",),
                frozenset({SignalKind.COMPLETE, SignalKind.NEEDS_USER_INPUT}),
                "locks requirements (BDD contexts and observables)",
            ),
            RoleInfo(
                Role.PLANNER,
                "agent",
                ("pathseeker",),
                _ALL_SIGNALS,
                "maps files and splits work into steps",
            ),
            RoleInfo(
                Role.TESTER,
                "agent",
                ("siegemaster",),
                frozenset(
                    {SignalKind.COMPLETE, SignalKind.PARTIALLY_COMPLETE, SignalKind.NEEDS_ROLE_FOLLOWUP}
                ),
                "writes tests, edge cases and stress tests, validates the solution",
            ),
            RoleInfo(
                Role.WARD,
                "pm-agent",
                ("ward",),
                frozenset(),
                "pm-agent runs the environment contract commands (lint, types, tests)",
            ),
            RoleInfo(
                Role.DEVELOPER,
                "agent",
                ("codeweaver",),
                _ALL_SIGNALS,
                "writes code and unit tests",
            ),
            RoleInfo(
                Role.FIXER,
                "agent",
                ("spiritmender",),
                _ALL_SIGNALS,
                "fixes lint, type and test failures from the gates or the review",
            ),
            RoleInfo(
                Role.REVIEWER,
                "agent",
                # seed 004's Lawbringer; seed 003 gave REVIEWING_CODE to its (frozen) navigator.
                ("lawbringer", "navigator"),
                frozenset({SignalKind.COMPLETE, SignalKind.NEEDS_ROLE_FOLLOWUP}),
                "reviews code quality and architectural compliance",
            ),
        )
    }
)

ALLOWED_SIGNALS: Mapping[Role, frozenset[SignalKind]] = MappingProxyType(
    {role: info.signals for role, info in ROLES.items()}
)
"""Seed 004's "Can signal" lists; pm and ward are pm-agent itself and send none."""

AGENT_ROLES: frozenset[Role] = frozenset(role for role, info in ROLES.items() if info.is_agent)
"""Roles performed by a coding-agent session."""

PM_AGENT_ROLES: frozenset[Role] = frozenset(role for role, info in ROLES.items() if not info.is_agent)
"""Roles pm-agent performs itself (pm, ward)."""

FOLLOWUP_TARGETS: frozenset[Role] = frozenset(
    {Role.PLANNER, Role.DEVELOPER, Role.TESTER, Role.REVIEWER, Role.FIXER}
)
"""Roles a needs-role-followup signal may name (seed 004's `targetRole`)."""

_NAMES: Mapping[str, Role] = MappingProxyType(
    {
        **{alias: info.role for info in ROLES.values() for alias in info.aliases},
        **{role.value: role for role in Role},
    }
)


def resolve_role(name: str) -> Role:
    """The canonical role for a role name or seed 004 alias, ignoring case and blanks.

    `resolve_role("Codeweaver")` is `Role.DEVELOPER` (a str equal to "developer").
    Raises ValueError listing the accepted names when `name` is unknown.
    """
    role = _NAMES.get(name.strip().lower())
    if role is None:
        known = ", ".join(sorted(_NAMES))
        raise ValueError(f"unknown role {name!r} (known: {known})")
    return role


def is_known_role(name: str) -> bool:
    """True when `name` is a role name or an alias."""
    return name.strip().lower() in _NAMES


def can_signal(role: str, kind: str) -> bool:
    """True when `role` (a name or alias) may send the signal `kind`; unknown roles may not."""
    if not is_known_role(role):
        return False
    return kind in ALLOWED_SIGNALS[resolve_role(role)]
