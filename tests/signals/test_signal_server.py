"""The signal_back MCP server as Claude Code runs it: a stdio subprocess driven by the `mcp` SDK's client.

Tests read the SQLite file through a fresh store right after the tool call returns (while the
server still runs), so a signal reported as recorded is durable before the agent is told so.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, TextContent

from pm_agent.signals import TOOL_NAME, mcp_config, new_token
from pm_agent.signals.desk import SignalDesk
from pm_agent.signals.server import SignalServer
from pm_agent.signals.socket_server import SignalSocket
from pm_agent.signals.tokens import SERVER_NAME
from pm_agent.store.records import SessionRecord

if TYPE_CHECKING:
    from conftest import World

pytestmark = pytest.mark.timeout(60)
Payload = dict[str, Any]


def server_params(config: dict[str, Any]) -> StdioServerParameters:
    """The server exactly as Claude Code would start it from our --mcp-config."""
    (server,) = config["mcpServers"].values()
    assert server["type"] == "stdio"
    return StdioServerParameters(command=server["command"], args=server["args"], env=server["env"])


@asynccontextmanager
async def connect(config: dict[str, Any]) -> AsyncIterator[ClientSession]:
    async with (
        stdio_client(server_params(config)) as (read, write),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        yield client


def text(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


async def call(config: dict[str, Any], arguments: dict[str, Any]) -> CallToolResult:
    async with connect(config) as client:
        return await client.call_tool("signal_back", arguments)


Served = Callable[[Path], "Path | None"]


@pytest.fixture(params=["process", "socket", "relay-alone"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Served]:
    """How the session's server is reached: its own process (`-m pm_agent.signals.server`), the relay to a
    `SignalSocket` answering in this process, or the relay with nothing listening (it becomes the server)."""
    sockets: list[SignalSocket] = []

    def serve(db: Path) -> Path | None:
        if request.param == "process":
            return None
        if request.param == "relay-alone":
            return tmp_path / "nobody-listens.sock"
        sockets.append(SignalSocket(db))
        return sockets[-1].path

    yield serve
    if request.param == "socket":
        assert sum(s.sessions_served for s in sockets) >= 1, "the relay did not go through the socket"
    for sock in sockets:
        sock.close()


def config_for(world: World, session: SessionRecord, served: Served) -> dict[str, Any]:
    return mcp_config(world.db, session.token, python=sys.executable, socket=served(world.db))


def test_mcp_config_shape(tmp_path: Path) -> None:
    config = mcp_config(tmp_path / "state.db", "tok", python="/usr/bin/python3")
    assert config == {
        "mcpServers": {
            "pm": {
                "type": "stdio",
                "command": "/usr/bin/python3",
                "args": ["-m", "pm_agent.signals.server"],
                "env": {"PM_AGENT_DB": str(tmp_path / "state.db"), "PM_AGENT_SESSION_TOKEN": "tok"},
            }
        }
    }
    assert json.loads(json.dumps(config)) == config
    audited = mcp_config(tmp_path / "state.db", "tok", run_id="r1", task_id="3")
    assert audited["mcpServers"]["pm"]["env"]["PM_AGENT_RUN_ID"] == "r1"
    assert audited["mcpServers"]["pm"]["env"]["PM_AGENT_TASK_ID"] == "3"
    assert audited["mcpServers"]["pm"]["command"] == sys.executable
    assert TOOL_NAME == "mcp__pm__signal_back"
    assert new_token() != new_token()
    assert len(new_token()) >= 32


async def test_list_tools_shows_only_signal_back_with_a_role_aware_schema(served: Served, world: World) -> None:
    reviewer = world.session("reviewer")
    async with connect(config_for(world, reviewer, served)) as client:
        tools = (await client.list_tools()).tools
    assert [tool.name for tool in tools] == ["signal_back"]
    (tool,) = tools
    schema = tool.input_schema
    assert schema["type"] == "object"
    assert schema["required"] == ["signal", "stepId"]
    assert schema["properties"]["signal"]["enum"] == ["complete", "needs-role-followup"]
    expected = {"stepId", "summary", "selfAssessment", "criteriaMapping", "reviewNote", "targetRole"}
    assert expected <= set(schema["properties"])
    assert "question" not in schema["properties"]  # a reviewer cannot ask the user
    assert "$ref" not in json.dumps(schema)
    assert schema["properties"]["criteriaMapping"]["items"]["properties"]["location"]["type"] == "string"
    assert "reviewer" in (tool.description or "")


async def test_valid_complete_is_stored_before_the_tool_returns(
    served: Served, world: World, complete: dict[str, Any]
) -> None:
    developer = world.session("codeweaver")
    async with connect(config_for(world, developer, served)) as client:
        result = await client.call_tool("signal_back", complete)
        stored = world.signals(developer)  # the server is still running: no flush-on-exit can help
    assert not result.is_error, text(result)
    assert "Signal complete recorded for task 3" in text(result)
    assert "Stop now: end your turn without further tool calls." in text(result)
    (signal,) = stored
    assert signal.accepted
    assert (signal.kind, signal.seq, signal.attempt) == ("complete", 1, 1)
    assert (signal.run_id, signal.task_id, signal.session_id) == (world.run_id, "3", developer.id)
    assert signal.payload["summary"] == "Added the login endpoint."
    assert signal.payload["criteriaMapping"] == complete["criteriaMapping"]
    assert signal.payload["selfAssessment"] == "confident"  # defaults are stored explicitly
    assert not signal.consumed


async def test_unknown_token_is_refused_and_recorded_as_refused(
    served: Served, world: World, complete: dict[str, Any]
) -> None:
    config = mcp_config(
        world.db, "not-a-token", python=sys.executable, run_id=world.run_id, task_id="3", socket=served(world.db)
    )
    result = await call(config, complete)
    assert result.is_error
    assert "Signal refused: the session token is unknown to pm-agent" in text(result)
    (stored,) = world.task_signals("3")
    assert not stored.accepted
    assert stored.session_id is None
    assert stored.kind == "complete"
    assert stored.reason == "the session token is unknown to pm-agent"
    assert stored.payload == complete


async def test_token_of_a_session_on_another_task_is_refused(
    served: Served, world: World, complete: dict[str, Any]
) -> None:
    on_task_4 = world.session("developer", task_id="4")
    result = await call(config_for(world, on_task_4, served), complete)  # stepId "3"
    assert result.is_error
    assert "stepId: this session works on task '4', not '3'; use \"4\"" in text(result)
    (stored,) = world.signals(on_task_4)
    assert not stored.accepted
    assert stored.task_id == "4"
    assert "stepId" in stored.reason
    assert world.task_signals("3") == []


async def test_role_not_allowed_is_refused(served: Served, world: World) -> None:
    reviewer = world.session("lawbringer")
    arguments = {"signal": "needs-user-input", "stepId": "3", "question": "Ship it?", "context": "LGTM"}
    result = await call(config_for(world, reviewer, served), arguments)
    assert result.is_error
    expected = "signal: the reviewer role may not send needs-user-input; it may send: complete, needs-role-followup"
    assert expected in text(result)
    (stored,) = world.signals(reviewer)
    assert (stored.accepted, stored.kind) == (False, "needs-user-input")


async def test_malformed_payload_gets_a_readable_error_and_then_a_corrected_call_is_accepted(
    served: Served, world: World, complete: dict[str, Any]
) -> None:
    developer = world.session()
    bad = {
        "signal": "complete",
        "stepId": "3",
        "selfAssessment": "pretty sure",
        "filesCreatd": ["a.py"],
        "criteriaMapping": [{"criterion": "works", "location": "src/app/login.py"}],
    }
    async with connect(config_for(world, developer, served)) as client:
        refused = await client.call_tool("signal_back", bad)
        after_refusal = world.signals(developer)
        accepted = await client.call_tool("signal_back", complete)
    assert refused.is_error
    message = text(refused)
    assert message.startswith("Signal refused: invalid complete signal:\n")
    for line in [
        "- summary: required",
        "- selfAssessment: input should be 'confident', 'uncertain' or 'blocked' (got 'pretty sure')",
        "- criteriaMapping[0].location: must be 'path:line' like 'src/app.py:42' (got 'src/app/login.py')",
        "- filesCreatd: unknown field; did you mean 'filesCreated'?",
    ]:
        assert line in message
    assert message.endswith("Correct these and call signal_back again.")
    assert [(s.seq, s.accepted) for s in after_refusal] == [(1, False)]
    assert after_refusal[0].payload == bad  # the refused call is kept as sent
    assert not accepted.is_error, text(accepted)
    assert [(s.seq, s.accepted) for s in world.signals(developer)] == [(1, False), (2, True)]


async def test_arguments_the_schema_does_not_know_still_reach_validation(served: Served, world: World) -> None:
    developer = world.session()
    async with connect(config_for(world, developer, served)) as client:
        first = await client.call_tool("signal_back", {"type": "complete", "stepId": "3", "summary": "x"})
        second = await client.call_tool("signal_back", {"signal": "done", "stepId": "3"})
    assert first.is_error
    assert "signal: required" in text(first)
    assert "not 'type'" in text(first)
    assert second.is_error
    assert "signal: must be one of complete" in text(second)
    stored = world.signals(developer)
    assert [(s.kind, s.accepted) for s in stored] == [("", False), ("done", False)]


async def test_parallel_calls_get_distinct_seqs_and_only_one_is_accepted(
    served: Served, world: World, complete: dict[str, Any]
) -> None:
    developer = world.session()
    results: list[CallToolResult] = []
    async with connect(config_for(world, developer, served)) as client:

        async def one(summary: str) -> None:
            results.append(await client.call_tool("signal_back", {**complete, "summary": summary}))

        async with anyio.create_task_group() as group:
            for n in range(4):
                group.start_soon(one, f"try {n}")
    stored = world.signals(developer)
    assert sorted(s.seq for s in stored) == [1, 2, 3, 4]
    assert sum(s.accepted for s in stored) == 1
    assert sum(not r.is_error for r in results) == 1


async def test_missing_store_is_reported_to_the_agent(served: Served, tmp_path: Path, complete: dict[str, Any]) -> None:
    config = mcp_config(tmp_path / "nowhere.db", "tok", python=sys.executable, socket=served(tmp_path / "nowhere.db"))
    result = await call(config, complete)
    assert result.is_error
    assert f"the store {tmp_path / 'nowhere.db'} does not exist" in text(result)
    assert not (tmp_path / "nowhere.db").exists()  # the server must not create a stray store


async def test_a_payload_over_the_limit_crosses_stdio_and_is_refused_with_the_limit(
    served: Served, world: World, complete: dict[str, Any]
) -> None:
    developer = world.session()
    big = {**complete, "testEvidence": ["x" * (300 * 1024)]}
    async with connect(config_for(world, developer, served)) as client:
        refused = await client.call_tool("signal_back", big)
        accepted = await client.call_tool("signal_back", complete)
    assert refused.is_error
    assert "over the limit of 262,144 bytes (256 KB)" in text(refused)
    assert not accepted.is_error, text(accepted)
    first, second = world.signals(developer)
    assert (first.accepted, first.payload["truncated"], second.accepted) == (False, True, True)


def _exchange(world: World, *messages: object) -> list[dict[str, Any]]:
    """Messages in, one per line (a str is sent as it is), and the server's answers out, as the stdio framing has it."""
    desk = SignalDesk(world.store, world.session("developer").token)
    lines = [m.encode() if isinstance(m, str) else json.dumps(m).encode() for m in messages]
    out = io.BytesIO()
    SignalServer(desk).serve([line + b"\n" for line in lines], out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_the_framing_answers_requests_skips_notifications_and_names_what_it_cannot_do(world: World) -> None:
    replies = _exchange(
        world,
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-03-26"}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "p", "method": "ping"},
        {"jsonrpc": "2.0", "id": 2, "method": "resources/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "rm_rf", "arguments": {}}},
        "{not json",
        "",
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "signal_back", "arguments": []}},
    )
    assert [r.get("id") for r in replies] == [1, "p", 2, 3, None, 4]  # nothing for the notification or blank line
    init = replies[0]["result"]
    assert init["protocolVersion"] == "2025-03-26"  # the client's version, echoed
    assert init["capabilities"] == {"tools": {"listChanged": False}}
    assert init["serverInfo"]["name"] == SERVER_NAME
    assert replies[1]["result"] == {}
    assert replies[2]["error"]["code"] == -32601
    assert replies[3]["error"]["code"] == -32602
    assert "the only tool is signal_back" in replies[3]["error"]["message"]
    assert replies[4]["error"]["code"] == -32700
    refused = replies[5]["result"]  # arguments that are not an object reach the desk as {} and are refused
    assert refused["isError"] is True
    assert refused["content"][0]["type"] == "text"
    assert "Signal refused" in refused["content"][0]["text"]


def test_at_end_of_input_the_server_answers_everything_then_leaves_without_teardown(
    world: World, complete: dict[str, Any], tmp_path: Path
) -> None:
    """EOF: every reply written and the signal stored, exit 0, and no interpreter teardown (atexit never runs):
    the agent's stderr, which pm-agent reads to its end, is shared with the server, so its teardown was waited for."""
    import os
    import subprocess

    developer = world.session("codeweaver")
    (server,) = mcp_config(world.db, developer.token)["mcpServers"].values()
    marker = tmp_path / "torn-down"
    code = (
        f"import atexit, pathlib; atexit.register(lambda: pathlib.Path({str(marker)!r}).write_text('x'));"
        " from pm_agent.signals.server import main; main()"
    )
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "signal_back", "arguments": complete}},
    ]
    done = subprocess.run(
        [sys.executable, "-c", code],
        input="".join(json.dumps(m) + "\n" for m in messages).encode(),
        env={**os.environ, **server["env"]},
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["id"] for r in replies] == [1, 2]
    assert "Signal complete recorded for task 3" in replies[1]["result"]["content"][0]["text"]
    assert [s.kind for s in world.signals(developer)] == ["complete"]
    assert not marker.exists()
