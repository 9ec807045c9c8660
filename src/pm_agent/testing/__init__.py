"""Deterministic fakes shipped with pm-agent (tests and the demo use them).

- `model_server`: a scripted Anthropic Messages API server for running the real Claude Code offline
- `fake_agent`: a fake agent CLI (`python -m pm_agent.testing.fake_agent`) speaking Claude Code's stream-json
- `repo`: temporary git repositories with a fixed identity

The exports load on first use (`pm_agent._lazy`): the fake agent, one process per session, need not import
the model server's HTTP stack (~80 of its ~97 ms of imports).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pm_agent._lazy import lazy_exports

if TYPE_CHECKING:
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

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "pm_agent.testing.model_server": "Fail Hang ModelRequest ModelServer Scenario ToolCall Turn marker",
        "pm_agent.testing.repo": "commit_all git init_repo",
    },
)
