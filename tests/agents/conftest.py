"""Agent-runtime fixtures: a real store file with one run, hosts for the real CLI and the fake agent."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pm_agent.agents.base import SessionLimits
from pm_agent.agents.claude import ClaudeRunner
from pm_agent.agents.session import AgentHost
from pm_agent.plan.models import Plan, Task
from pm_agent.store import SqliteStore, open_store
from pm_agent.testing.fake_agent import script_marker
from pm_agent.testing.model_server import ModelServer

TASKS = ("t1", "t2", "t3", "t4")
FAKE_AGENT = [sys.executable, "-m", "pm_agent.testing.fake_agent"]


@dataclass
class World:
    """A store file with one run (tasks t1..t4) and the repository it works on."""

    db: Path
    store: SqliteStore
    run_id: str
    repo: Path
    tmp: Path

    def script(self, name: str, steps: list[dict[str, Any]] | dict[str, Any]) -> str:
        """Write a fake-agent script; the prompt marker that plays it."""
        path = self.tmp / f"{name}.json"
        path.write_text(json.dumps(steps), encoding="utf-8")
        return script_marker(path)


@pytest.fixture
def world(tmp_path: Path, git_repo: Path) -> Iterator[World]:
    db = tmp_path / "state" / "state.db"
    store = open_store(db)
    plan = Plan(plan_id="p1", path="plan.md", tasks=[Task(id=t, title=f"task {t}") for t in TASKS])
    run = store.create_run(plan, baseline_sha="0" * 40, working_branch="pm/p1/work", shared_context={}, config={})
    try:
        yield World(db, store, run.id, git_repo, tmp_path)
    finally:
        store.close()


@pytest.fixture
def claude_host(world: World, agent_home: Path, model_server: ModelServer, claude_bin: Path) -> Iterator[AgentHost]:
    """Sessions of the real Claude Code CLI, talking to the scripted model server, with signal_back answered
    in this process as a run does (its relay per session); test_claude_confinement's sessions start the
    standalone server."""
    runner = ClaudeRunner(agent_home=agent_home, binary=claude_bin, max_retries=0)
    limits = SessionLimits(max_turns=20, stuck_after_s=30, time_budget_s=90, signal_grace_s=1.0)
    host = AgentHost(
        world.store, world.db, runner, limits=limits, env=model_server.env(), poll_s=0.1, serve_signals=True
    )
    yield host
    listening = host._signals
    host.close()
    if listening is not None:  # Claude Code connects its MCP servers at start: every session went through the relay
        assert listening.sessions_served >= 1, "no session reached the socket: the relay became the standalone server"


@pytest.fixture
def fake_host(world: World, agent_home: Path) -> AgentHost:
    """Sessions of the fake agent, driven by the same Claude runner code."""
    runner = ClaudeRunner(agent_home=agent_home, binary=FAKE_AGENT)
    limits = SessionLimits(max_turns=20, stuck_after_s=20, time_budget_s=60, signal_grace_s=0.5)
    return AgentHost(world.store, world.db, runner, limits=limits, poll_s=0.1)
