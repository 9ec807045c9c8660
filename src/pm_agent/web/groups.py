"""The board's columns: every lifecycle state belongs to exactly one group (a test holds the map complete)."""

from __future__ import annotations

from pm_agent.lifecycle.states import IssueState

S = IssueState

# Column order on the board, with the label each column shows.
GROUPS: tuple[tuple[str, str], ...] = (
    ("queued", "Queued"),
    ("planning", "Planning"),
    ("implementing", "Implementing"),
    ("checking", "Checking"),
    ("reviewing", "Reviewing"),
    ("waiting", "Waiting for a human"),
    ("done", "Done"),
    ("failed", "Failed"),
)

STATE_GROUP: dict[IssueState, str] = {
    S.RECEIVED: "queued",
    S.ANALYZING_REQUIREMENTS: "planning",
    S.REQUIREMENTS_UNCLEAR: "planning",
    S.REQUIREMENTS_CLARIFIED: "planning",
    S.PLANNING_APPROACH: "planning",
    S.IMPLEMENTING: "implementing",
    S.FIXING_ISSUES: "implementing",
    S.REFACTORING: "implementing",
    S.CREATING_TESTS: "implementing",
    S.UPDATING_TESTS: "implementing",
    S.ADDRESSING_FEEDBACK: "implementing",
    # The answer is in: pm-agent is about to hand it back to an agent, no human is waited for.
    S.HUMAN_INPUT_RECEIVED: "implementing",
    # pm-agent's gates, and the tester's edge-case round that the gates check again.
    S.RUNNING_TESTS: "checking",
    S.VALIDATING_SOLUTION: "checking",
    # Review, then pm-agent commits what was reviewed.
    S.REVIEWING_CODE: "reviewing",
    S.CREATING_PR: "reviewing",
    S.WAITING_FOR_HUMAN_INPUT: "waiting",
    S.WAITING_FOR_REQUIREMENTS_CLARIFICATION: "waiting",
    S.REQUIRES_HUMAN_INTERVENTION: "waiting",
    S.BLOCKED: "waiting",
    S.COMPLETED: "done",
    S.FAILED: "failed",
}

# Groups whose tasks may hold a slot (board.slot_numbers says which do: a slot is an agent's).
ACTIVE_GROUPS = frozenset({"planning", "implementing", "checking", "reviewing"})


def group_of(state: str) -> str:
    """The board column of a lifecycle state value; KeyError for a state the map does not know."""
    return STATE_GROUP[IssueState(state)]
