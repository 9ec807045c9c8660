"""signal_back answered by the running pm-agent (`SignalSocket`) through the per-session relay.

test_signal_server.py drives every server behaviour through the official MCP client over all three
ways (own process, relay to the socket, relay with nothing listening); these tests are about the relay
and the socket themselves: what the relay imports, how it ends, a hello it cannot read, the socket's
folder, and the host that starts it.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pm_agent.agents.claude import ClaudeRunner
from pm_agent.agents.session import AgentHost
from pm_agent.signals import relay, tokens
from pm_agent.signals.socket_server import SignalSocket, sweep_stale

if TYPE_CHECKING:
    from conftest import World

pytestmark = pytest.mark.timeout(60)


def _messages(complete: dict[str, Any]) -> bytes:
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "signal_back", "arguments": complete}},
    ]
    return "".join(json.dumps(m) + "\n" for m in messages).encode()


def test_the_relay_names_the_environment_as_pm_agent_does() -> None:
    # relay.py cannot import pm_agent (it runs without site-packages), so it spells the names itself.
    assert relay.SOCKET_ENV == tokens.SOCKET_ENV
    assert (relay.TOKEN_ENV, relay.RUN_ENV, relay.TASK_ENV) == (tokens.TOKEN_ENV, tokens.RUN_ENV, tokens.TASK_ENV)
    assert relay.SERVER_MODULE == tokens.SERVER_MODULE
    assert Path(relay.__file__) == tokens.RELAY


def test_the_config_starts_the_relay_by_path_without_site_packages(tmp_path: Path) -> None:
    config = tokens.mcp_config(tmp_path / "state.db", "tok", python="/usr/bin/python3", socket=tmp_path / "s.sock")
    server = config["mcpServers"]["pm"]
    assert server["command"] == "/usr/bin/python3"
    assert server["args"] == ["-I", "-S", str(tokens.RELAY)]
    assert server["env"][tokens.SOCKET_ENV] == str(tmp_path / "s.sock")
    assert server["env"][tokens.TOKEN_ENV] == "tok"


def test_without_the_relay_file_the_config_starts_the_standalone_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tokens, "RELAY", tmp_path / "in-a-zip" / "relay.py")  # pm-agent imported from a zip
    server = tokens.mcp_config(tmp_path / "state.db", "tok", socket=tmp_path / "s.sock")["mcpServers"]["pm"]
    assert server["args"] == ["-m", tokens.SERVER_MODULE]
    assert tokens.SOCKET_ENV not in server["env"]


def test_the_relay_imports_no_pm_agent_answers_everything_and_ends_at_end_of_input(
    world: World, complete: dict[str, Any]
) -> None:
    developer = world.session("codeweaver")
    served = SignalSocket(world.db)
    try:
        env = tokens.mcp_config(world.db, developer.token, socket=served.path)["mcpServers"]["pm"]["env"]
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-X", "importtime", str(tokens.RELAY)],
            input=_messages(complete),
            env={**os.environ, **env},
            capture_output=True,
            timeout=30,
            check=False,
        )
    finally:
        served.close()
    assert done.returncode == 0, done.stderr.decode()
    imported = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.decode().splitlines() if "|" in line]
    assert "socket" in imported  # the import listing is there to read
    assert not [name for name in imported if name.startswith(("pm_agent", "pydantic", "sqlite3"))]
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["id"] for r in replies] == [1, 2]
    assert "Signal complete recorded for task 3" in replies[1]["result"]["content"][0]["text"]
    assert [s.kind for s in world.signals(developer)] == ["complete"]
    assert served.sessions_served == 1


def test_a_hello_pm_agent_cannot_read_leaves_the_session_without_a_token(
    world: World, complete: dict[str, Any]
) -> None:
    served = SignalSocket(world.db)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(str(served.path))
            conn.sendall(b"not json\n" + _messages(complete))
            conn.shutdown(socket.SHUT_WR)
            with conn.makefile("rb") as answers:
                replies = [json.loads(line) for line in answers]
    finally:
        served.close()
    result = replies[-1]["result"]
    assert result["isError"]
    assert "no session token (PM_AGENT_SESSION_TOKEN is not set)" in result["content"][0]["text"]


def test_close_removes_the_folder_once_and_a_relay_then_becomes_the_standalone_server(
    world: World, complete: dict[str, Any]
) -> None:
    developer = world.session("codeweaver")
    served = SignalSocket(world.db)
    folder = served.path.parent
    assert served.path.exists()
    assert (folder.stat().st_mode & 0o777) == 0o700
    served.close()
    served.close()  # a second close is nothing
    assert not folder.exists()
    env = tokens.mcp_config(world.db, developer.token, socket=served.path)["mcpServers"]["pm"]["env"]
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(tokens.RELAY)],
        input=_messages(complete),
        env={**os.environ, **env},
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert [s.kind for s in world.signals(developer)] == ["complete"]  # stored by the server it became


def test_close_waits_bounded_for_a_session_still_connected(world: World) -> None:
    served = SignalSocket(world.db)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(str(served.path))
    conn.sendall(b'{"token": "t"}\n')
    try:
        ended = threading.Event()
        closer = threading.Thread(target=lambda: (served.close(timeout=0.5), ended.set()))
        closer.start()
        assert ended.wait(10), "close() did not return while a session was connected"
    finally:
        conn.close()
    assert not served.path.parent.exists()


def test_the_host_listens_from_its_first_session_and_only_when_asked(world: World, tmp_path: Path) -> None:
    runner = ClaudeRunner(agent_home=tmp_path / "home")
    assert AgentHost(world.store, world.db, runner).signal_socket() is None
    host = AgentHost(world.store, world.db, runner, serve_signals=True)
    first = host.signal_socket()
    assert first is not None
    assert first.exists()
    assert host.signal_socket() == first
    host.close()
    assert not first.exists()
    host.close()


def test_a_temporary_folder_too_deep_for_a_socket_keeps_one_server_process_per_session(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    deep = tmp_path / ("d" * 100)
    deep.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    host = AgentHost(world.store, world.db, ClaudeRunner(agent_home=tmp_path / "home"), serve_signals=True)
    with caplog.at_level(logging.WARNING):
        assert host.signal_socket() is None
    assert "signal_back stays one process per session: socket path too long" in caplog.text
    assert list(deep.iterdir()) == []  # the folder made for it is gone
    assert not host.serve_signals


def test_the_socket_folders_of_killed_runs_are_swept_and_no_other(tmp_path: Path) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tmp_path / f"pm-agent-signals-{dead.pid}-abc"
    live = tmp_path / f"pm-agent-signals-{os.getpid()}-def"
    busy = tmp_path / f"pm-agent-signals-{dead.pid}-ghi"  # holds more than its socket: not ours to judge
    other = tmp_path / "pm-agent-index-xyz"
    for folder in (stale, live, busy, other):
        folder.mkdir()
        (folder / "signals.sock").write_text("")
    (busy / "notes.txt").write_text("keep")
    assert sweep_stale(tmp_path) == [stale]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in (live, busy, other))


def test_a_new_socket_is_named_for_its_process(world: World) -> None:
    served = SignalSocket(world.db)
    try:
        assert served.path.parent.name.startswith(f"pm-agent-signals-{os.getpid()}-")
    finally:
        served.close()
