"""An analyst whose sessions keep ending without a signal spends its retry budget, and its task waits for a human
(the real Claude Code CLI). The workflow had no edge from analyzing_requirements to waiting_for_human_input: the
move was refused and the task ended in an error instead (met on a Spec Kit list, whose items have no criteria)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pm_agent.lifecycle import IssueState
from pm_agent.store import default_store_path, open_store

from .conftest import Target

pytestmark = [pytest.mark.claude, pytest.mark.slow]

# No criteria, steps or files: the requirements go to the analyst first. No script for it: each session ends
# without a signal.
PLAN = "# calc\n\n### Task 1: Make the calculator friendlier\n\nUsers find it hard to use.\n"


@pytest.mark.timeout(300)  # a hang guard, not a speed check
def test_a_spent_analyst_budget_waits_for_a_human(target: Callable[[str], Target]) -> None:
    t = target(PLAN)
    rc = t.start()
    outcome = t.drive(rc)
    events = "\n".join(f"{k}: {m}" for k, m, _ in t.listener.events)
    assert outcome.errors == {}, events
    assert outcome.waiting == ["1"], events
    store = open_store(default_store_path(t.repo))
    try:
        assert store.get_task(rc.run_id, "1").state == IssueState.WAITING_FOR_HUMAN_INPUT
        (escalation,) = store.list_escalations(rc.run_id)
        sessions = store.list_sessions(rc.run_id)
    finally:
        store.close()
    assert escalation.source == "retry-budget"
    assert "3 analyst sessions ended without a signal" in escalation.problem
    assert [s.role for s in sessions] == ["analyst"] * 3
