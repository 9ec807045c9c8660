"""`pm-agent demo --request`'s script, without the CLI: its documents pass (or, once, fail) pm-agent's own
checks exactly as the demo says, and `RequestBrain` plays the request's roles and hands the rest on."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pm_agent.agents.header import session_header
from pm_agent.demo.request import (
    BROKEN_DEPENDENCY,
    DEMO_REQUEST,
    PATHS,
    QUESTION,
    RequestBrain,
    request_plan,
    requirements,
)
from pm_agent.demo.tasks import DEMO_TASKS
from pm_agent.intake import check_plan, requirements_problems, scenario_ids
from pm_agent.signals import TOOL_NAME
from pm_agent.testing.scenario import ModelRequest


def request_for(role: str, task: str, workdir: Path) -> ModelRequest:
    system = session_header(role, task, 1, workdir) + "\nReport back only through the signal_back tool."
    body = {"system": [{"type": "text", "text": system}], "messages": [{"role": "user", "content": "go"}]}
    return ModelRequest("POST", "/v1/messages", {}, body)


def test_the_requirements_are_usable_and_name_one_scenario_per_task() -> None:
    text = requirements()
    assert requirements_problems(text) == []
    assert scenario_ids(text) == [f"S{t.number}" for t in DEMO_TASKS]


def test_the_first_plan_has_exactly_one_parse_error_and_the_second_none(tmp_path: Path) -> None:
    (tmp_path / "design.md").write_text(requirements(), encoding="utf-8")
    plan = tmp_path / "plan.md"
    plan.write_text(request_plan(broken=True), encoding="utf-8")
    first = check_plan(plan, tmp_path / "design.md", tmp_path, scenario_ids(requirements()))
    assert len(first.problems) == 1
    assert f"depends on {BROKEN_DEPENDENCY}, which is not in the plan" in first.problems[0]
    plan.write_text(request_plan(), encoding="utf-8")
    second = check_plan(plan, tmp_path / "design.md", tmp_path, scenario_ids(requirements()))
    assert second.problems == []
    assert second.plan is not None
    assert len(second.plan.tasks) == len(DEMO_TASKS)


def test_the_brain_plays_the_analyst_and_hands_developers_to_the_demo_brain(tmp_path: Path) -> None:
    brain = RequestBrain()
    asked = brain(request_for("analyst", "task-requirements", tmp_path))
    assert asked is not None
    assert [(c.name, c.input.get("signal"), c.input.get("question")) for c in asked.tool_calls] == [
        (TOOL_NAME, "needs-user-input", QUESTION)
    ]
    planned = brain(request_for("planner", "task-plan", tmp_path))
    assert planned is not None
    assert [(c.name, c.input["file_path"]) for c in planned.tool_calls] == [("Write", f"{tmp_path}/{PATHS.plan_rel}")]
    developer = brain(request_for("developer", "task-2", tmp_path))
    assert developer is not None
    assert developer.tool_calls  # DemoBrain's developer starts working on task 2
    assert all(c.name != "Write" or PATHS.plan_rel not in str(c.input.get("file_path")) for c in developer.tool_calls)


@pytest.mark.claude
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_demo_request_runs_from_the_request_to_the_release(tmp_path: Path) -> None:
    exe = shutil.which("pm-agent", path=str(Path(sys.executable).parent))
    assert exe is not None
    dest = tmp_path / "textstats"
    done = subprocess.run(
        [exe, "demo", "--request", "--dest", str(dest)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=880,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    out = done.stdout
    assert f"the analyst asks: {QUESTION}" in out
    assert f"depends on {BROKEN_DEPENDENCY}, which is not in the plan" in out  # sent back to the planner
    assert "[scripted user] answers escalation #2: approve" in out
    assert out.rstrip().splitlines()[-1].startswith("demo finished: request → requirements → plan → released")
    log = subprocess.run(
        ["git", "log", "--format=%s", "main..pm/textstats/work"], cwd=dest, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert log[-2:] == [f"Plan: {DEMO_REQUEST[:72]}", f"Requirements: {DEMO_REQUEST[:72]}"]
