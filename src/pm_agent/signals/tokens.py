"""Session tokens and the `--mcp-config` that starts the signal_back server for one agent session.

The token travels in the server's environment (the config's `env`), never in the prompt: the
model cannot see it, so it cannot signal for another session.
"""

from __future__ import annotations

import secrets
import sys
from pathlib import Path
from typing import Any, Final

SERVER_NAME: Final = "pm"
TOOL: Final = "signal_back"
TOOL_NAME: Final = f"mcp__{SERVER_NAME}__{TOOL}"
"""The name the model sees for the tool (Claude Code's `mcp__<server>__<tool>`)."""

DB_ENV: Final = "PM_AGENT_DB"
TOKEN_ENV: Final = "PM_AGENT_SESSION_TOKEN"
RUN_ENV: Final = "PM_AGENT_RUN_ID"
TASK_ENV: Final = "PM_AGENT_TASK_ID"
SERVER_MODULE: Final = "pm_agent.signals.server"
SOCKET_ENV: Final = "PM_AGENT_SIGNAL_SOCKET"
RELAY: Final = Path(__file__).with_name("relay.py")
"""Run by path with `python -I -S` when pm-agent serves signals on a socket (`signals/socket_server.py`)."""


def new_token() -> str:
    """A fresh, unguessable session token (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def tool_name(server_name: str = SERVER_NAME) -> str:
    """The model-facing tool name when the server is registered as `server_name`."""
    return f"mcp__{server_name}__{TOOL}"


def mcp_config(
    db_path: Path,
    token: str,
    python: str = sys.executable,
    server_name: str = SERVER_NAME,
    *,
    run_id: str | None = None,
    task_id: str | None = None,
    socket: Path | None = None,
) -> dict[str, Any]:
    """The `--mcp-config` JSON (as a dict) that runs the signal_back server for the session `token`.

    `run_id` and `task_id`, when given, only let the server keep an audit record of a call whose
    token turns out to be unknown (the store files every signal under a run and task); they never
    make a signal acceptable. With `socket` (where the running pm-agent answers), the command is the
    relay, which becomes the standalone server when nothing listens there.
    """
    env = {DB_ENV: str(db_path), TOKEN_ENV: token}
    if run_id is not None:
        env[RUN_ENV] = run_id
    if task_id is not None:
        env[TASK_ENV] = task_id
    args = ["-m", SERVER_MODULE]
    # Imported from a zip, pm-agent has no relay file to run: sessions then start the standalone server.
    if socket is not None and RELAY.is_file():
        env[SOCKET_ENV] = str(socket)
        args = ["-I", "-S", str(RELAY)]
    return {
        "mcpServers": {
            server_name: {
                "type": "stdio",
                "command": python,
                "args": args,
                "env": env,
            }
        }
    }
