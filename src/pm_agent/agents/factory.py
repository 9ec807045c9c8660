"""Pick the agent runner by its short name in the configuration (`agent.runner`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Final

from pm_agent.agents.base import AgentRunner, SessionLimits
from pm_agent.agents.claude import DEFAULT_TOOLS, ClaudeRunner
from pm_agent.agents.command import CommandRunner
from pm_agent.config import AgentConfig
from pm_agent.errors import ConfigError

__all__ = ["RUNNERS", "limits_from_config", "runner_from_config"]


def _claude(config: AgentConfig, agent_home: Path | None) -> AgentRunner:
    return ClaudeRunner(
        agent_home=agent_home,
        binary=config.binary,
        model=config.model,
        permission_mode=config.permission_mode,
        allowed_tools=tuple(config.allowed_tools) or DEFAULT_TOOLS,
    )


def _command(config: AgentConfig, agent_home: Path | None) -> AgentRunner:
    if not config.command:
        raise ConfigError("agent.command: required when agent.runner is 'command'")
    return CommandRunner(list(config.command), agent_home=agent_home)


RUNNERS: Final[dict[str, Callable[[AgentConfig, Path | None], AgentRunner]]] = {
    "claude": _claude,
    "command": _command,
}


def runner_from_config(config: AgentConfig, agent_home: Path | None) -> AgentRunner:
    """The runner `config.runner` names; `agent_home` is HOME for its sessions (e.g. `.pm-agent/agent-home`)."""
    try:
        make = RUNNERS[config.runner]
    except KeyError:
        raise ConfigError(f"agent.runner: unknown runner {config.runner!r}; use one of {', '.join(RUNNERS)}") from None
    return make(config, agent_home)


def limits_from_config(config: AgentConfig) -> SessionLimits:
    """Session limits from the configuration."""
    return SessionLimits(
        max_turns=config.max_turns,
        stuck_after_s=config.stuck_after_s,
        time_budget_s=config.time_budget_min * 60,
    )
