"""What one signal server process imports: each agent session starts one, and its start-up CPU competes
with the agents and pm-agent itself on the same cores."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING, Any

from pm_agent.signals import mcp_config

if TYPE_CHECKING:
    from conftest import World

HEAVY = (
    "sqlalchemy",
    "mcp",
    "detect_secrets",
    "pm_agent.plan.parser",
    "pm_agent.plan.models",  # the plan's pydantic models: ~13 ms of a session's start for two enums
    "pm_agent.lifecycle.context",
    "pm_agent.store.sqlite",
)

# Runs the server as `python -m` does and prints which HEAVY modules it loaded when it leaves, by either road
# out (the interpreter's exit, or an `os._exit` that skips the atexit hooks).
CHILD = f"""
import atexit, os, runpy, sys
said = []
def say():
    if not said:
        said.append(1)
        print(sorted(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr, flush=True)
leave = os._exit
def exit_now(code):
    say()
    leave(code)
os._exit = exit_now
atexit.register(say)
runpy.run_module("pm_agent.signals.server", run_name="__main__")
"""


def test_a_whole_server_life_imports_none_of_the_heavy_modules(world: World, complete: dict[str, Any]) -> None:
    developer = world.session()
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "signal_back", "arguments": complete}},
    ]
    env = {**os.environ, **mcp_config(world.db, developer.token)["mcpServers"]["pm"]["env"]}
    done = subprocess.run(
        [sys.executable, "-c", CHILD],
        input="".join(json.dumps(m) + "\n" for m in messages),
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, 2, 3]
    assert answers[2]["result"]["isError"] is False, answers[2]
    assert [s.kind for s in world.signals(developer)] == ["complete"]
    assert done.stderr.splitlines()[-1] == "[]"
