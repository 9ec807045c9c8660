"""Agent processes without the store: NDJSON reading, bounded memory, process groups, runners' argv."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import textwrap
import time
import tracemalloc
from pathlib import Path

import pytest

from pm_agent.agents import process
from pm_agent.agents.base import AgentRunner, AgentSession, EventKind, SessionLimits, SessionRequest, StopReason
from pm_agent.agents.claude import SIGNAL_TOOL, ClaudeRunner, agent_env, bundled_claude, find_claude
from pm_agent.agents.command import MCP_CONFIG_ENV, CommandRunner
from pm_agent.agents.process import LINE_CAP, OVERSIZE_KEEP, group_alive, spawn
from pm_agent.errors import AgentError

from .conftest import FAKE_AGENT, World

PY = sys.executable


def _py(code: str) -> list[str]:
    return [PY, "-c", textwrap.dedent(code)]


def _request(workdir: Path, prompt: str = "hello", **kw: object) -> SessionRequest:
    return SessionRequest(prompt=prompt, workdir=workdir, role="developer", **kw)  # type: ignore[arg-type]


def _dead(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


async def test_non_json_lines_are_recorded_and_tolerated(tmp_path: Path) -> None:
    script = """
        import json
        print(json.dumps({"type": "system", "subtype": "init", "session_id": "abc", "mcp_servers": []}))
        print("this is not json")
        print("[1, 2, 3]")
        print("{broken json")
        print()
        print(json.dumps({"type": "result", "is_error": False, "total_cost_usd": 0.5, "session_id": "abc",
                          "usage": {"input_tokens": 7, "cache_read_input_tokens": 3, "output_tokens": 2}}))
    """
    runner = CommandRunner(_py(script), prompt_via="stdin")
    session = await runner.start(_request(tmp_path))
    kinds = [event.kind async for event in session.events()]
    outcome = await session.wait()
    assert kinds == [EventKind.INIT, EventKind.TEXT, EventKind.TEXT, EventKind.TEXT, EventKind.RESULT]
    assert outcome.exit_code == 0
    assert outcome.non_json_lines == 3
    assert outcome.result_seen
    assert outcome.agent_session_id == "abc"
    assert (outcome.cost_usd, outcome.input_tokens, outcome.output_tokens) == (0.5, 10, 2)
    assert "{broken json" in outcome.last_lines


async def test_a_5_mib_line_is_not_held_whole(tmp_path: Path, world: World) -> None:
    marker = world.script("big", [{"text": "before"}, {"big_line": 5 * 1024 * 1024}, {"text": "after"}])
    runner = ClaudeRunner(agent_home=tmp_path / "home", binary=FAKE_AGENT)
    tracemalloc.start()
    try:
        session = await runner.start(_request(world.repo, marker))
        events = [event async for event in session.events()]
        outcome = await session.wait()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    oversize = [e for e in events if e.kind is EventKind.OVERSIZE]
    assert len(oversize) == 1
    assert oversize[0].size == 5 * 1024 * 1024
    assert len(oversize[0].line) == OVERSIZE_KEEP
    assert outcome.oversize_lines == 1
    assert outcome.result_seen  # lines after it are read as usual
    assert [e.kind for e in events][-2:] == [EventKind.ASSISTANT, EventKind.RESULT]
    assert peak < LINE_CAP * 3, f"peak {peak} bytes while reading a 5 MiB line"
    assert all(len(line) <= 2200 for line in outcome.last_lines)


async def test_stderr_is_drained_and_its_tail_kept(tmp_path: Path) -> None:
    script = """
        import sys
        for i in range(2000):
            sys.stderr.write(f"warning {i}\\n")
        print('{"type": "result", "is_error": true, "result": "boom", "api_error_status": 500}')
        sys.exit(1)
    """
    session = await CommandRunner(_py(script), prompt_via="stdin").start(_request(tmp_path))
    outcome = await session.wait()
    assert outcome.exit_code == 1
    assert outcome.stderr_tail[-1] == "warning 1999"
    assert len(outcome.stderr_tail) == 50
    assert outcome.is_error
    assert outcome.error == "boom (api status 500)"
    assert outcome.report_lines()[-1] == "warning 1999"


async def test_stop_kills_the_whole_process_group(tmp_path: Path) -> None:
    script = "sleep 300 & sleep 300 & echo started; wait"
    session = await CommandRunner(["sh", "-c", script, "{prompt}"], output="text").start(_request(tmp_path))
    async for event in session.events():
        assert event.line == "started"
        break
    assert group_alive(session.pid)
    started = time.monotonic()
    await session.stop(StopReason.STUCK)
    outcome = await session.wait()
    assert time.monotonic() - started < 5
    assert not group_alive(session.pid)
    assert outcome.stopped is StopReason.STUCK
    assert outcome.exit_code is not None
    assert outcome.exit_code < 0
    assert not outcome.ok


@pytest.mark.parametrize("through", ["setpriv", "preexec_fn"])
def test_agent_dies_with_its_parent(tmp_path: Path, through: str) -> None:
    """The parent-death signal: kill -9 of pm-agent takes its agents down too, either way it is set."""
    parent_code = f"""
        import asyncio, os, sys
        from pathlib import Path
        from pm_agent.agents import process
        if {through!r} == "preexec_fn":
            process._SETPRIV = None
        async def main():
            session = await process.spawn(["sleep", "300"], cwd=Path({str(tmp_path)!r}), env=dict(os.environ))
            print(session.pid, flush=True)
            await asyncio.sleep(300)
        asyncio.run(main())
    """
    parent = subprocess.Popen(_py(parent_code), stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert not _dead(child)
        # setpriv runs the agent in its own process, not as a child: the pid becomes `sleep` once it has
        # exec'd, which on a loaded machine can be after the parent printed it (CI at 05cdf4a).
        deadline = time.monotonic() + 10
        while not (cmdline := Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0"))[0].endswith(b"sleep"):
            assert time.monotonic() < deadline, cmdline
            time.sleep(0.05)
        parent.kill()
        parent.wait(5)
        deadline = time.monotonic() + 5
        while not _dead(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _dead(child)
    finally:
        parent.kill()
        parent.wait(5)
        if parent.stdout is not None:
            parent.stdout.close()


def test_the_death_signal_goes_through_setpriv_only_for_a_program_that_is_there(tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"]}
    argv, preexec = process._dying_with_parent(["sleep", "1"], tmp_path, env)
    assert (argv[1:5], argv[5:], preexec) == (["--pdeathsig", "KILL", "--", shutil.which("sleep")], ["1"], None)
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\n", encoding="utf-8")
    script.chmod(0o755)
    argv, preexec = process._dying_with_parent(["./agent.sh"], tmp_path, env)
    assert (argv[4:], preexec) == ([str(script)], None)
    argv, preexec = process._dying_with_parent(["no-such-agent-binary"], tmp_path, env)
    assert (argv, callable(preexec)) == (["no-such-agent-binary"], True)


async def test_a_missing_agent_program_still_fails_to_start(tmp_path: Path) -> None:
    with pytest.raises(AgentError, match="cannot start agent 'no-such-agent-binary'"):
        await spawn(["no-such-agent-binary"], cwd=tmp_path, env={"PATH": os.environ["PATH"]})


async def test_a_consumer_that_walks_away_does_not_stall_the_reader(tmp_path: Path) -> None:
    script = "import sys\nfor i in range(5000): print(i)\n"
    session = await CommandRunner(_py(script), output="text", prompt_via="stdin").start(_request(tmp_path))
    async for _event in session.events():
        break
    outcome = await asyncio.wait_for(session.wait(), 20)
    assert outcome.lines == 5000
    assert outcome.last_lines[-1] == "4999"


async def test_command_runner_template_stdin_and_resume_args(tmp_path: Path) -> None:
    script = """
        import os, sys
        print("args", sys.argv[1:])
        print("stdin", sys.stdin.read())
        print("config", os.environ.get("PM_AGENT_MCP_CONFIG", "") != "", os.environ["HOME"])
    """
    runner = CommandRunner(
        [*_py(script), "--cwd={workdir}", "--role", "{role}", "{max_turns}"],
        output="text",
        prompt_via="stdin",
        resume_args=["--resume", "{session_id}"],
        agent_home=tmp_path / "home",
    )
    request = _request(
        tmp_path,
        "the prompt",
        resume_id="sess-1",
        limits=SessionLimits(max_turns=7),
        mcp_config={"mcpServers": {}},
    )
    assert isinstance(runner, AgentRunner)
    session = await runner.start(request)
    assert isinstance(session, AgentSession)
    lines = [event.line async for event in session.events()]
    outcome = await session.wait()
    assert outcome.exit_code == 0
    assert lines[0] == f"args ['--cwd={tmp_path}', '--role', 'developer', '7', '--resume', 'sess-1']"
    assert lines[1] == "stdin the prompt"
    assert lines[2] == f"config True {tmp_path / 'home'}"
    assert outcome.non_json_lines == 0  # text output: lines are not expected to be JSON
    assert not list((tmp_path / "home" / "sessions").iterdir())  # scratch folder removed at the end
    assert MCP_CONFIG_ENV == "PM_AGENT_MCP_CONFIG"


def test_command_runner_needs_a_prompt_placeholder_or_stdin() -> None:
    with pytest.raises(AgentError, match="placeholder"):
        CommandRunner(["agent", "--go"])
    with pytest.raises(AgentError, match="empty"):
        CommandRunner([])


async def test_start_errors_are_agent_errors(tmp_path: Path) -> None:
    with pytest.raises(AgentError, match="cannot start"):
        await spawn([str(tmp_path / "missing-binary")], cwd=tmp_path, env={})
    runner = CommandRunner(["true", "{prompt}"])
    with pytest.raises(AgentError, match="workdir does not exist"):
        await runner.start(_request(tmp_path / "nowhere"))


def test_bundled_claude_is_found_when_nothing_else_is(tmp_path: Path, claude_bin: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    assert find_claude(path=str(empty)) == bundled_claude() == claude_bin
    fake = empty / "claude"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert find_claude(path=str(empty)) == fake  # `claude` on PATH wins over the bundled one
    assert find_claude(str(claude_bin)) == claude_bin  # an explicit path wins over both
    with pytest.raises(AgentError, match="not found"):
        find_claude(str(tmp_path / "nope"))


def test_claude_argv_keeps_the_prompt_out_of_list_flags(tmp_path: Path, claude_bin: Path) -> None:
    runner = ClaudeRunner(agent_home=tmp_path, binary=claude_bin, model="claude-x", allowed_tools=["Read", "Bash"])
    request = _request(tmp_path, "-p looks like a flag", system_prompt="You are the developer.", resume_id="abc-123")
    argv = runner.argv(request, tmp_path / "mcp.json")
    assert argv[0] == str(claude_bin)
    assert argv[-2:] == ["--", "-p looks like a flag"]
    assert f"--allowedTools=Read,Bash,{SIGNAL_TOOL}" in argv
    assert f"--mcp-config={tmp_path / 'mcp.json'}" in argv
    assert "--strict-mcp-config" in argv
    assert "--resume=abc-123" in argv
    assert "--append-system-prompt=You are the developer." in argv
    assert "--model=claude-x" in argv
    assert argv[argv.index("--setting-sources") + 1] == ""
    assert os.environ.get("HOME") != str(tmp_path)


async def test_unconsumed_events_are_bounded(tmp_path: Path) -> None:
    script = 'for i in range(3000): print(\'{"type": "assistant", "n": %d}\' % i)\n'
    session = await CommandRunner(_py(script), prompt_via="stdin").start(_request(tmp_path))
    outcome = await session.wait()
    assert outcome.lines == 3000
    assert session.dropped_events == 2000  # only the newest QUEUE_MAX wait for a late consumer


def test_agent_env_isolates_home_and_drops_parent_markers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDECODE", "1")
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "parent")
    monkeypatch.setenv("PM_AGENT_SESSION_TOKEN", "secret")
    monkeypatch.setenv("CLAUDE_CODE_ENTRYPOINT", "cli")
    monkeypatch.setenv("MY_TOOLCHAIN", "/opt/tool")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
    # The user's own ways of reaching the model stay: a `claude setup-token` token, another provider.
    monkeypatch.setenv("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-test")
    monkeypatch.setenv("CLAUDE_CODE_USE_BEDROCK", "1")
    env = agent_env(tmp_path / "home", tmp_path / "scratch", {"EXTRA": "x"}, 1)
    assert env["HOME"] == str(tmp_path / "home")
    assert env["XDG_RUNTIME_DIR"] == str(tmp_path / "scratch" / "run")
    assert env["CLAUDE_CODE_TMPDIR"] == env["TMPDIR"] == str(tmp_path / "scratch" / "tmp")
    assert (env["DISABLE_TELEMETRY"], env["ENABLE_TOOL_SEARCH"], env["CLAUDE_CODE_MAX_RETRIES"]) == ("1", "false", "1")
    assert env["MY_TOOLCHAIN"] == "/opt/tool"
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:1"
    assert env["EXTRA"] == "x"
    for dropped in ("CLAUDECODE", "CLAUDE_CODE_SESSION_ID", "CLAUDE_CODE_ENTRYPOINT", "PM_AGENT_SESSION_TOKEN"):
        assert dropped not in env
    assert (env["CLAUDE_CODE_OAUTH_TOKEN"], env["CLAUDE_CODE_USE_BEDROCK"]) == ("sk-ant-oat01-test", "1")
    strict = agent_env(None, tmp_path / "scratch2", {}, 0, inherit=False)
    assert "MY_TOOLCHAIN" not in strict
    assert "CLAUDE_CODE_USE_BEDROCK" not in strict  # its AWS credentials would not pass either
    assert strict["CLAUDE_CODE_OAUTH_TOKEN"] == "sk-ant-oat01-test"
    assert strict["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:1"
    assert strict["HOME"] == os.environ["HOME"]


def test_an_isolated_home_keeps_the_toolchains_and_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = tmp_path / "real"
    for folder in (".rustup", "go", ".npm"):
        (real / folder).mkdir(parents=True)
    monkeypatch.setenv("HOME", str(real))
    for name in ("RUSTUP_HOME", "CARGO_HOME", "GOPATH", "GOCACHE", "npm_config_cache", "UV_CACHE_DIR", "PIP_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GOPATH", "/opt/gopath")  # the user's own setting stays
    env = agent_env(tmp_path / "home", tmp_path / "scratch", {}, 1)
    assert env["HOME"] == str(tmp_path / "home")
    assert (env["RUSTUP_HOME"], env["npm_config_cache"], env["GOPATH"]) == (
        str(real / ".rustup"),
        str(real / ".npm"),
        "/opt/gopath",
    )
    assert "CARGO_HOME" not in env  # no such folder: nothing to keep
    assert "GOCACHE" not in env
    assert "RUSTUP_HOME" not in agent_env(None, tmp_path / "scratch2", {}, 1)  # the user's HOME: nothing to point at


def test_cargo_runs_in_an_isolated_home(tmp_path: Path) -> None:
    """The real rustup of this machine: in a bare isolated HOME it finds no toolchain."""
    cargo = shutil.which("cargo")
    assert cargo is not None, "this test runs the real cargo (rustup's proxy)"
    env = agent_env(tmp_path / "home", tmp_path / "scratch", {}, 1)
    ran = subprocess.run([cargo, "--version"], env=env, capture_output=True, text=True, check=False)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith("cargo ")
    bare = {k: v for k, v in env.items() if k not in ("RUSTUP_HOME", "CARGO_HOME")}
    broken = subprocess.run([cargo, "--version"], env=bare, capture_output=True, text=True, check=False)
    assert broken.returncode != 0, "without them rustup finds no toolchain (what sessions met before)"
