"""A runner for any agent CLI, from a command template in the configuration.

    CommandRunner(["my-agent", "--cwd", "{workdir}", "{prompt}"], output="text")

Placeholders in each argument: `{prompt}`, `{workdir}`, `{session_id}` (the id to resume, empty
for a new session), `{role}`, `{system_prompt}`, `{mcp_config}` (path of the MCP config file, empty
without one), `{max_turns}`. `resume_args` are added only when resuming (e.g.
`["--resume", "{session_id}"]`). The prompt goes on the command line (`prompt_via="arg"`, where the
template places `{prompt}`) or on stdin (`prompt_via="stdin"`). Output is NDJSON (Claude Code's
vocabulary is understood: init, result, cost) or plain text lines. The MCP config path is also in
the environment as `PM_AGENT_MCP_CONFIG`.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pm_agent.agents.base import SessionRequest
from pm_agent.agents.claude import agent_env, session_scratch
from pm_agent.agents.process import ProcessSession, spawn
from pm_agent.errors import AgentError

__all__ = ["MCP_CONFIG_ENV", "CommandRunner"]

MCP_CONFIG_ENV = "PM_AGENT_MCP_CONFIG"
_PLACEHOLDERS = ("prompt", "workdir", "session_id", "role", "system_prompt", "mcp_config", "max_turns")


def _render(template: str, values: Mapping[str, str]) -> str:
    out = template
    for key in _PLACEHOLDERS:
        out = out.replace("{" + key + "}", values.get(key, ""))
    return out


@dataclass
class CommandRunner:
    """Runs an agent CLI given as an argv template; same `Outcome` as the Claude runner."""

    command: Sequence[str]
    output: Literal["ndjson", "text"] = "ndjson"
    prompt_via: Literal["arg", "stdin"] = "arg"
    resume_args: Sequence[str] = ()
    agent_home: Path | None = None  # HOME of the sessions; None keeps the user's
    env: Mapping[str, str] = field(default_factory=dict)
    max_retries: int = 2
    inherit_env: bool = True  # False: only PASS_THROUGH_ENV from pm-agent's environment
    name: str = "command"

    def __post_init__(self) -> None:
        if not self.command:
            raise AgentError("agent.command is empty: give the agent CLI as a list of arguments")
        if self.prompt_via == "arg" and not any("{prompt}" in part for part in self.command):
            raise AgentError("agent.command has no {prompt} placeholder (or set prompt_via to stdin)")

    def login_problem(self) -> str | None:
        """None: an arbitrary CLI has no known way to say whether it is logged in."""
        return None

    def argv(self, request: SessionRequest, mcp_config_path: Path | None) -> list[str]:
        """The command line for `request`."""
        values = {
            "prompt": request.prompt,
            "workdir": str(request.workdir),
            "session_id": request.resume_id or "",
            "role": request.role,
            "system_prompt": request.system_prompt or "",
            "mcp_config": str(mcp_config_path) if mcp_config_path is not None else "",
            "max_turns": str(request.limits.max_turns),
        }
        args = [_render(part, values) for part in self.command]
        if request.resume_id:
            args += [_render(part, values) for part in self.resume_args]
        return args

    async def start(self, request: SessionRequest) -> ProcessSession:
        """Spawn the command for `request` in `request.workdir`."""
        if not request.workdir.is_dir():
            raise AgentError(f"agent workdir does not exist: {request.workdir}")
        if self.agent_home is not None:
            self.agent_home.mkdir(parents=True, exist_ok=True)
            scratch = session_scratch(self.agent_home)
        else:
            scratch = Path(tempfile.mkdtemp(prefix="pm-agent-session-"))
        config_path: Path | None = None
        extra = dict(self.env)
        if request.mcp_config is not None:
            config_path = scratch / "mcp.json"
            fd = os.open(config_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(json.dumps(request.mcp_config))
            extra[MCP_CONFIG_ENV] = str(config_path)
        env = agent_env(
            self.agent_home, scratch, {**extra, **request.env}, self.max_retries, inherit=self.inherit_env
        )
        stdin = request.prompt.encode("utf-8") if self.prompt_via == "stdin" else None
        return await spawn(
            self.argv(request, config_path),
            cwd=request.workdir,
            env=env,
            stdin_data=stdin,
            json_lines=self.output == "ndjson",
            previous_cost_usd=request.previous_cost_usd,
            cleanup=lambda: shutil.rmtree(scratch, ignore_errors=True),
        )
