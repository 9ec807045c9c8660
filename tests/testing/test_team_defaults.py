"""ScriptedTeam's defaults: sessions a test's script says nothing about, as pm-agent now opens them."""

from __future__ import annotations

from pathlib import Path

from pm_agent.agents.header import session_header
from pm_agent.testing.scenario import ModelRequest
from pm_agent.testing.team import SIGNAL_TOOL, ScriptedTeam, signal


def _request(role: str, task: str) -> ModelRequest:
    body = {
        "system": [{"type": "text", "text": session_header(role, task, 1, Path("/tmp/w"))}],
        "messages": [{"role": "user", "content": "go"}],
    }
    return ModelRequest("POST", "/v1/messages", {}, body)


def _signal_kind(team: ScriptedTeam, role: str, task: str) -> str | None:
    turn = team(_request(role, task))
    assert turn is not None
    calls = [c for c in turn.tool_calls if c.name == SIGNAL_TOOL]
    return str(calls[0].input["signal"]) if calls else None


def test_the_final_review_approves_and_a_task_reviewer_without_a_script_does_not() -> None:
    team = ScriptedTeam()
    assert _signal_kind(team, "reviewer", "task-final-review") == "complete"
    # Only the final review's session has a default reviewer: a plan task's reviewer stays unscripted.
    assert _signal_kind(team, "reviewer", "task-1") is None
    assert _signal_kind(team, "tester", "task-1") == "complete"


def test_a_test_script_wins_over_the_defaults() -> None:
    team = ScriptedTeam(scripts={("*", "reviewer"): [signal({"signal": "needs-user-input", "question": "?"})]})
    assert _signal_kind(team, "reviewer", "task-final-review") == "needs-user-input"
