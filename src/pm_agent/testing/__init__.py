"""Deterministic fakes shipped with pm-agent (tests and the demo use them).

- `model_server`: a scripted Anthropic Messages API server for running the real Claude Code offline
- `fake_agent`: a fake agent CLI (`python -m pm_agent.testing.fake_agent`) speaking Claude Code's stream-json
- `repo`: temporary git repositories with a fixed identity
"""

from __future__ import annotations

from pm_agent.testing.model_server import Fail, Hang, ModelRequest, ModelServer, Scenario, ToolCall, Turn, marker
from pm_agent.testing.repo import commit_all, git, init_repo

__all__ = [
    "Fail",
    "Hang",
    "ModelRequest",
    "ModelServer",
    "Scenario",
    "ToolCall",
    "Turn",
    "commit_all",
    "git",
    "init_repo",
    "marker",
]
