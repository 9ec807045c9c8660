"""ScriptedTeam's defaults: sessions a test's script says nothing about, as pm-agent now opens them."""

from __future__ import annotations

import subprocess
import sys
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


def test_the_scripted_agents_name_the_final_review_as_the_engine_does() -> None:
    # The final review's stepId is the engine's task row with the `task-` prefix, in the team and the demo's brain;
    # a renamed row would otherwise leave the default reviewer and the demo answering a session nobody opens.
    from pm_agent.demo.brain import FINAL_REVIEW_TASK as DEMO_TASK
    from pm_agent.engine.final_review import CONTAINER
    from pm_agent.testing.team import FINAL_REVIEW_TASK

    assert FINAL_REVIEW_TASK == DEMO_TASK == f"task-{CONTAINER}"


def test_the_model_server_side_does_not_import_the_engine() -> None:
    # The scripted team and the demo's brain run in the model server's process: the engine stays out of it.
    code = (
        "import sys, pm_agent.testing.team, pm_agent.demo.brain, pm_agent.testing.model_server\n"
        "print(sorted(m for m in sys.modules if m.startswith('pm_agent.engine')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
