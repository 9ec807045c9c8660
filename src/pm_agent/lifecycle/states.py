"""The lifecycle states of a task (seed 003's IssueState).

Every task is in exactly one state at a time. The values are seed 003's, plus
REVIEWING_CODE, which seed 003 froze but seed 001's tier review needs. The other
navigator states (REVIEWING_ARCHITECTURE, REVIEWING_INTEGRATION) stay frozen.
"""

from __future__ import annotations

from enum import StrEnum


class IssueState(StrEnum):
    """One state of a task's lifecycle; the value is what files and the store hold."""

    # Initial reception
    RECEIVED = "received"

    # Requirements analysis
    ANALYZING_REQUIREMENTS = "analyzing_requirements"
    REQUIREMENTS_UNCLEAR = "requirements_unclear"
    WAITING_FOR_REQUIREMENTS_CLARIFICATION = "waiting_for_requirements_clarification"
    REQUIREMENTS_CLARIFIED = "requirements_clarified"

    # Planning
    PLANNING_APPROACH = "planning_approach"

    # Testing
    CREATING_TESTS = "creating_tests"
    UPDATING_TESTS = "updating_tests"
    RUNNING_TESTS = "running_tests"

    # Implementation
    IMPLEMENTING = "implementing"
    FIXING_ISSUES = "fixing_issues"
    REFACTORING = "refactoring"

    # Code quality (unfrozen from seed 003 for seed 001's tier review)
    REVIEWING_CODE = "reviewing_code"

    # Quality assurance
    VALIDATING_SOLUTION = "validating_solution"
    ADDRESSING_FEEDBACK = "addressing_feedback"

    # Completion
    CREATING_PR = "creating_pr"
    COMPLETED = "completed"

    # Human interaction
    WAITING_FOR_HUMAN_INPUT = "waiting_for_human_input"
    HUMAN_INPUT_RECEIVED = "human_input_received"

    # Error states
    FAILED = "failed"
    BLOCKED = "blocked"
    REQUIRES_HUMAN_INTERVENTION = "requires_human_intervention"


def parse_state(text: str) -> IssueState:
    """The state named by `text`: its value ("running_tests") or its name ("RUNNING_TESTS").

    Case and surrounding blanks are ignored. Raises ValueError naming the known states.
    """
    key = text.strip().lower()
    try:
        return IssueState(key)
    except ValueError:
        known = ", ".join(s.value for s in IssueState)
        raise ValueError(f"unknown state {text!r} (known: {known})") from None
