"""The public API of pm_agent.agents and pm_agent.testing, and picking a runner from the configuration."""

from __future__ import annotations

from pathlib import Path

import pytest

import pm_agent.agents
import pm_agent.testing
from pm_agent.agents import ClaudeRunner, CommandRunner, limits_from_config, runner_from_config
from pm_agent.config import AgentConfig
from pm_agent.errors import ConfigError


@pytest.mark.parametrize("module", [pm_agent.agents, pm_agent.testing])
def test_exported_names_exist(module: object) -> None:
    names = list(module.__all__)  # type: ignore[attr-defined]
    assert len(names) == len(set(names))
    for name in names:
        assert hasattr(module, name), name


def test_runner_by_short_name(tmp_path: Path, claude_bin: Path) -> None:
    claude = runner_from_config(AgentConfig(binary=str(claude_bin), model="m1"), tmp_path)
    assert isinstance(claude, ClaudeRunner)
    assert claude.executable == [str(claude_bin)]
    assert claude.model == "m1"
    assert "TodoWrite" in claude.tools()
    command = runner_from_config(AgentConfig(runner="command", command=["agent", "{prompt}"]), tmp_path)
    assert isinstance(command, CommandRunner)
    with pytest.raises(ConfigError, match=r"agent\.command"):
        runner_from_config(AgentConfig.model_construct(runner="command"), tmp_path)  # past the validator
    limits = limits_from_config(AgentConfig(max_turns=5, stuck_after_s=30, time_budget_min=2))
    assert (limits.max_turns, limits.stuck_after_s, limits.time_budget_s) == (5, 30, 120)
