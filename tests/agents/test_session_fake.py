"""Sessions end to end with the fake agent: the real store, signal server, monitor and git checks."""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import time
from dataclasses import replace
from pathlib import Path

import pytest

from pm_agent.agents import monitor
from pm_agent.agents.base import StopReason
from pm_agent.agents.command import CommandRunner
from pm_agent.agents.process import group_alive
from pm_agent.agents.session import AgentHost, answer_prompt, resume_session, start_session
from pm_agent.errors import AgentError
from pm_agent.store import SessionStatus
from pm_agent.testing.repo import git

from .conftest import FAKE_AGENT, World

COMPLETE = {"signal": "complete", "stepId": "t1", "summary": "wrote a.txt", "filesCreated": ["a.txt"]}


async def test_complete_signal_file_and_session_record(world: World, fake_host: AgentHost) -> None:
    marker = world.script(
        "complete",
        [
            {"text": "working"},
            {"write": "a.txt", "content": "hello\n"},
            {"print": "not json at all"},
            {"bash": "cat a.txt"},
            {"signal": COMPLETE},
        ],
    )
    result = await start_session(
        fake_host, run_id=world.run_id, task_id="t1", role="developer", prompt="go " + marker, workdir=world.repo
    )
    assert result.status is SessionStatus.SIGNALLED
    assert result.signal is not None
    assert result.signal.kind == "complete"
    assert result.signal.accepted
    assert (world.repo / "a.txt").read_text() == "hello\n"
    record = world.store.get_session(result.record.id)
    assert record.agent_session_id == result.outcome.agent_session_id is not None
    assert record.cost_usd == pytest.approx(0.01)
    assert record.exit_code == 0
    assert record.ended_at is not None
    assert record.last_output_at is not None
    assert result.outcome.mcp_servers == {"pm": "connected"}
    assert result.outcome.ok
    kinds = [e.kind for e in world.store.session_events(record.id)]
    assert kinds[0] == "system/init"
    assert "text" in kinds
    assert kinds[-1] == "result"


async def test_exit_without_signal_is_a_crash(world: World, fake_host: AgentHost) -> None:
    marker = world.script("crash", [{"text": "about to fail"}, {"stderr": "fatal: out of cheese"}, {"exit": 3}])
    result = await start_session(
        fake_host, run_id=world.run_id, task_id="t1", role="developer", prompt=marker, workdir=world.repo
    )
    assert result.status is SessionStatus.CRASHED
    assert result.outcome.crashed
    assert result.signal is None
    record = world.store.get_session(result.record.id)
    assert record.status is SessionStatus.CRASHED
    assert record.exit_code == 3
    assert "about to fail" in record.last_lines
    assert "fatal: out of cheese" in record.last_lines


async def test_no_output_kills_the_session_as_stuck(world: World, fake_host: AgentHost) -> None:
    marker = world.script("hang", [{"text": "thinking"}, {"bash": "sleep 300 &"}, {"hang": True}])
    limits = replace(fake_host.limits, stuck_after_s=1.5)
    started = time.monotonic()
    result = await start_session(
        fake_host, run_id=world.run_id, task_id="t1", role="developer", prompt=marker, workdir=world.repo,
        limits=limits,
    )  # fmt: skip
    elapsed = time.monotonic() - started
    assert result.status is SessionStatus.STUCK
    assert result.outcome.stuck
    assert result.outcome.stopped is StopReason.STUCK
    assert elapsed < 1.5 + 8
    assert not group_alive(result.record.pid or 0)
    kinds = [e.kind for e in world.store.session_events(result.record.id)]
    assert kinds[-1] == "pm/stopped"


async def test_needs_user_input_then_resume_with_the_answer(world: World, fake_host: AgentHost) -> None:
    question = {"signal": "needs-user-input", "stepId": "t1", "question": "Which port?", "context": "8080 or 9090"}
    resumed = {"signal": "complete", "stepId": "t1", "summary": "used the answer: {prompt}"}
    marker = world.script("ask", {"steps": [{"signal": question}], "resume_steps": [{"signal": resumed}]})
    first = await start_session(
        fake_host, run_id=world.run_id, task_id="t1", role="developer", prompt=marker, workdir=world.repo
    )
    assert first.signal is not None
    assert first.signal.kind == "needs-user-input"
    assert first.record.cost_usd == pytest.approx(0.01)
    second = await resume_session(fake_host, first.record, answer_prompt(first.signal.payload, "use 9090"))
    assert second.record.resumed_from == first.record.id
    assert second.record.agent_session_id == first.record.agent_session_id
    assert second.signal is not None, second.record.last_lines
    assert second.signal.kind == "complete"
    assert "The user answered: use 9090" in second.signal.payload["summary"]
    assert second.record.cost_usd == pytest.approx(0.01)  # the CLI reports 0.02 in total: minus the first run


async def test_a_routing_signal_ends_a_session_that_keeps_going(world: World, fake_host: AgentHost) -> None:
    followup = {
        "signal": "needs-role-followup", "stepId": "t1", "targetRole": "planner",
        "reason": "the step is too big", "context": "split it", "resume": False,
    }  # fmt: skip
    marker = world.script("followup", [{"signal": followup}, {"sleep": 60}])
    started = time.monotonic()
    result = await start_session(
        fake_host, run_id=world.run_id, task_id="t1", role="developer", prompt=marker, workdir=world.repo
    )
    assert time.monotonic() - started < 20
    assert result.status is SessionStatus.SIGNALLED
    assert result.outcome.stopped is StopReason.SIGNAL
    assert result.signal is not None
    assert result.signal.payload["targetRole"] == "planner"


async def test_the_signal_tool_line_wakes_the_monitor_without_waiting_for_a_poll(
    world: World, fake_host: AgentHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With the periodic look pushed out of reach, only the agent's own line naming signal_back (printed once
    # the server stored the signal) can start the grace period: otherwise the session runs to its time budget.
    monkeypatch.setattr(monitor, "SIGNAL_POLL_S", 10_000.0)
    followup = {
        "signal": "needs-role-followup", "stepId": "t1", "targetRole": "planner",
        "reason": "the step is too big", "context": "split it", "resume": False,
    }  # fmt: skip
    marker = world.script("late-followup", [{"sleep": 1.0}, {"signal": followup}, {"sleep": 60}])
    host = replace(fake_host, limits=replace(fake_host.limits, time_budget_s=30))
    result = await start_session(
        host, run_id=world.run_id, task_id="t1", role="developer", prompt=marker, workdir=world.repo
    )
    assert result.outcome.stopped is StopReason.SIGNAL
    assert result.status is SessionStatus.SIGNALLED
    assert result.signal is not None
    assert result.signal.kind == "needs-role-followup"


async def test_an_agent_that_commits_is_caught(world: World, fake_host: AgentHost) -> None:
    marker = world.script(
        "commit",
        [{"write": "b.txt", "content": "b"}, {"bash": "git add b.txt && git commit -q -m sneaky"},
         {"signal": {**COMPLETE, "summary": "done"}}],
    )  # fmt: skip
    git(world.repo, "switch", "-q", "-c", "feat/t1")
    head = git(world.repo, "rev-parse", "HEAD")
    result = await start_session(
        fake_host, run_id=world.run_id, task_id="t1", role="developer", prompt=marker, workdir=world.repo
    )
    assert git(world.repo, "rev-parse", "HEAD") != head
    assert result.outcome.tampered
    assert result.outcome.tamper_reason is not None
    assert "committed" in result.outcome.tamper_reason
    assert not result.outcome.ok
    notes = [e for e in world.store.session_events(result.record.id) if e.kind == "pm/tampered"]
    assert "committed" in json.loads(notes[0].payload)["reason"]


async def test_time_budget_and_cancellation_kill_the_session(world: World, fake_host: AgentHost) -> None:
    marker = world.script("slow", [{"text": "tick"}, {"sleep": 60}])
    limits = replace(fake_host.limits, time_budget_s=1.0)
    result = await start_session(
        fake_host, run_id=world.run_id, task_id="t1", role="developer", prompt=marker, workdir=world.repo,
        limits=limits,
    )  # fmt: skip
    assert result.status is SessionStatus.KILLED
    assert result.outcome.stopped is StopReason.TIMEOUT

    task = asyncio.ensure_future(
        start_session(fake_host, run_id=world.run_id, task_id="t2", role="developer", prompt=marker, workdir=world.repo)
    )

    def printing() -> bool:
        sessions = world.store.list_sessions(world.run_id, "t2")
        return bool(sessions) and bool(world.store.session_events(sessions[0].id))

    for _ in range(400):
        if printing():
            break
        await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    record = world.store.list_sessions(world.run_id, "t2")[0]
    assert record.status is SessionStatus.KILLED
    assert record.pid is not None
    assert not group_alive(record.pid)


async def test_resume_needs_an_agent_session_id(world: World, fake_host: AgentHost) -> None:
    record = world.store.create_session(world.run_id, "t1", "developer", 1, "tok", "claude", str(world.repo))
    with pytest.raises(AgentError, match="no agent session id"):
        await resume_session(fake_host, record, "again")


async def test_resuming_an_unknown_conversation_fails_like_claude(world: World, fake_host: AgentHost) -> None:
    record = world.store.create_session(world.run_id, "t1", "developer", 1, "tok2", "claude", str(world.repo))
    record = world.store.update_session(record.id, agent_session_id="no-such-session", status=SessionStatus.EXITED)
    result = await resume_session(fake_host, record, "again")
    assert result.status is SessionStatus.CRASHED
    assert result.outcome.exit_code == 1
    assert "No conversation found" in result.record.last_lines


async def test_the_command_runner_drives_the_fake_agent(world: World, fake_host: AgentHost) -> None:
    runner = CommandRunner(
        [*FAKE_AGENT, "--mcp-config={mcp_config}", "--max-turns={max_turns}", "{prompt}"],
        resume_args=["--resume={session_id}"],
        agent_home=world.tmp / "command-home",
    )
    host = replace(fake_host, runner=runner)
    marker = world.script("cmd", [{"write": "c.txt", "content": "c"}, {"signal": COMPLETE}])
    result = await start_session(
        host, run_id=world.run_id, task_id="t1", role="developer", prompt=marker, workdir=world.repo
    )
    assert result.status is SessionStatus.SIGNALLED
    assert result.record.runner == "command"
    assert result.outcome.agent_session_id is not None
    assert (world.repo / "c.txt").read_text() == "c"


def test_the_fake_agent_does_not_import_the_model_servers_http_stack() -> None:
    """One fake agent per session in the loop benchmark: its imports are CPU the sessions compete for."""
    import subprocess
    import sys

    code = "import json, sys, pm_agent.testing.fake_agent; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    loaded = json.loads(done.stdout)
    assert "pm_agent.testing.fake_agent" in loaded
    assert not [m for m in loaded if m.startswith(("pm_agent.testing.model_server", "http"))], loaded


def test_the_launchers_fake_agent_runs_on_the_standard_library_alone(tmp_path: Path) -> None:
    """`fake_launcher` runs the fake by path without site-packages (`-I -S`): a session writes, signals through
    a real MCP server, and its process imports neither asyncio (~35 ms of CPU) nor uuid nor typing."""
    import os
    import subprocess
    import sys

    from pm_agent.testing.notes import fake_launcher

    launcher = fake_launcher(tmp_path / "fake-claude")
    assert " -I -S " in launcher.read_text(encoding="utf-8")
    server = tmp_path / "server.py"
    server.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if 'id' in m:\n"
        "        called = m['method'] == 'tools/call'\n"
        "        text = 'got ' + m['params']['arguments']['signal'] if called else ''\n"
        "        out = {'jsonrpc': '2.0', 'id': m['id'], 'result': {'content': [{'type': 'text', 'text': text}]}}\n"
        "        print(json.dumps(out), flush=True)\n",
        encoding="utf-8",
    )
    config = {"mcpServers": {"pm": {"command": sys.executable, "args": [str(server)]}}}
    script = tmp_path / "script.json"
    steps = [{"write": "a.txt", "content": "x"}, {"signal": {"signal": "complete"}}]
    script.write_text(json.dumps(steps), encoding="utf-8")
    cpu_log = tmp_path / "agents-cpu.txt"
    env = {**os.environ, "HOME": str(tmp_path), "PM_FAKE_AGENT_CPU_LOG": str(cpu_log)}
    argv = [str(launcher), "-p", "--mcp-config", json.dumps(config), "--script", str(script), "go"]
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=True)
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[0]["mcp_servers"] == [{"name": "pm", "status": "connected"}]
    results = [b for e in events if e["type"] == "user" for b in e["message"]["content"]]
    assert [r["content"] for r in results] == [f"File created successfully at: {tmp_path / 'a.txt'}", "got complete"]
    assert (events[-1]["type"], events[-1]["subtype"]) == ("result", "success")
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "x"
    [seconds] = cpu_log.read_text(encoding="utf-8").split()  # the session's CPU, for the loop benchmark
    assert 0 < float(seconds) < 30
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", events[0]["session_id"])
    # What the module loads, as the launcher runs it (by path, no site-packages), without running a session.
    fake = shlex.split(launcher.read_text(encoding="utf-8").split("exec ", 1)[1])[3]
    probe = (
        "import importlib.util, json, sys; "
        f"spec = importlib.util.spec_from_file_location('fake', {fake!r}); "
        "spec.loader.exec_module(importlib.util.module_from_spec(spec)); print(json.dumps(sorted(sys.modules)))"
    )
    loaded = subprocess.run([sys.executable, "-I", "-S", "-c", probe], capture_output=True, text=True, timeout=60)
    assert {"asyncio", "uuid", "typing"}.isdisjoint(json.loads(loaded.stdout.splitlines()[-1])), loaded.stdout
