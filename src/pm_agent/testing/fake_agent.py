"""A fake agent CLI that prints Claude Code's stream-json and calls signal_back over real MCP (stdio).

It takes Claude Code's command line (`-p`, `--output-format`, `--mcp-config=...`, `--resume=...`,
`--`, the prompt, ...), so `ClaudeRunner(binary=[python, "-m", "pm_agent.testing.fake_agent"])`
drives it like the real CLI; `CommandRunner` can drive it too. What it does comes from a script:
`--script FILE`, `$PM_FAKE_AGENT_SCRIPT`, or a `[fake-script:PATH]` marker in the prompt.

A script is a JSON list of steps, or `{"steps": [...], "resume_steps": [...], "cost_usd": 0.01}`
(`resume_steps` play when the session is resumed). Steps:

    {"text": "..."}                       an assistant text event
    {"write": "path", "content": "..."}   write a file (relative to the cwd), as a Write tool call
    {"bash": "command"}                   run a shell command in the cwd, as a Bash tool call
    {"signal": {...}}                     call signal_back with this payload through the MCP server
    {"sleep": 1.5}                        sleep, printing nothing
    {"print": "raw text"}                 print a raw line (garbage, not JSON); prints in a row go out together
    {"big_line": 5242880}                 print one line of that many bytes, in chunks
    {"stderr": "text"}                    a line on stderr
    {"exit": 3}                           exit at once with that code, no result event
    {"hang": true}                        sleep until killed

String values in a signal payload, write content and bash commands can use `{prompt}` (this run's
prompt) and `{session_id}`. Sessions are kept in `$HOME/.fake-agent/<id>.json`: resuming an
unknown id fails like Claude Code ("No conversation found with session ID"), and the reported
`total_cost_usd` is cumulative across resumes, as Claude Code's is. `auth status` answers logged in, as
Claude Code's does for an API key.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

# One process per session, and the benchmarks' agent: no asyncio (~35 ms of CPU to import, the larger part of the
# fake's own), no uuid, and typing only for mypy (mypy reads a TYPE_CHECKING of any origin as True).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["main", "script_marker"]

_MARKER = re.compile(r"\[fake-script:([^\]]+)\]")
SCRIPT_ENV = "PM_FAKE_AGENT_SCRIPT"
# A file each session appends its CPU seconds to (its own and its waited-for children's): the loop benchmark
# takes the agents' share out of pm-agent's children's CPU, which leaves pm-agent's git and gate processes.
CPU_LOG_ENV = "PM_FAKE_AGENT_CPU_LOG"


def script_marker(path: Path | str) -> str:
    """The prompt text that makes the fake agent play the script at `path`."""
    return f"[fake-script:{path}]"


def _emit(event: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def _parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="fake_agent", add_help=False)
    parser.add_argument("-p", "--print", action="store_true")
    parser.add_argument("--output-format", default="stream-json")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--mcp-config")
    parser.add_argument("--strict-mcp-config", action="store_true")
    parser.add_argument("--allowedTools", "--allowed-tools", dest="allowed_tools")
    parser.add_argument("--permission-mode")
    parser.add_argument("--setting-sources")
    parser.add_argument("--max-turns")
    parser.add_argument("--model")
    parser.add_argument("--append-system-prompt")
    parser.add_argument("--resume")
    parser.add_argument("--session-id")
    parser.add_argument("--script")
    parser.add_argument("prompt", nargs="?", default=None)
    args, _unknown = parser.parse_known_args(argv)
    if args.prompt is None and not sys.stdin.isatty():
        args.prompt = sys.stdin.read()
    return args


def _script_source(args: argparse.Namespace) -> str | None:
    source = args.script or os.environ.get(SCRIPT_ENV)
    if not source and args.prompt:
        found = _MARKER.search(args.prompt)
        source = found.group(1) if found else None
    return source or None


def _load_script(source: str | None) -> dict[str, Any]:
    if not source:
        return {"steps": [{"text": "fake agent: no script"}]}
    data = json.loads(Path(source).read_text(encoding="utf-8"))
    return {"steps": data} if isinstance(data, list) else dict(data)


def _fill(value: Any, values: dict[str, str]) -> Any:
    if isinstance(value, str):
        for key, text in values.items():
            value = value.replace("{" + key + "}", text)
        return value
    if isinstance(value, list):
        return [_fill(v, values) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, values) for k, v in value.items()}
    return value


class FakeAgent:
    """Plays one script as one session."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.prompt: str = args.prompt or ""
        self.cwd = Path.cwd()
        home = Path(os.environ.get("HOME") or self.cwd)
        self.store = home / ".fake-agent"
        self.source = _script_source(args)
        self.script: dict[str, Any] = {}
        self.session_id: str = args.resume or args.session_id or _uuid4()
        self.state: dict[str, Any] = {"cost_usd": 0.0, "prompts": []}
        self.turns = 0
        self.mcp: StdioClient | None = None
        self.finished = False
        self.exit_code = 1
        self.mcp_server = self._mcp_server(args.mcp_config)

    def _state_path(self) -> Path:
        return self.store / f"{self.session_id}.json"

    def _save(self) -> None:
        self.store.mkdir(parents=True, exist_ok=True)
        self._state_path().write_text(json.dumps(self.state), encoding="utf-8")

    def _event(self, kind: str, **fields: Any) -> None:
        _emit({"type": kind, **fields, "session_id": self.session_id})

    def _tool(self, name: str, tool_input: dict[str, Any], result: str, is_error: bool = False) -> None:
        self.turns += 1
        tool_id = f"toolu_{os.urandom(6).hex()}"
        block = {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}
        self._event("assistant", message={"role": "assistant", "content": [block]})
        answer = {"type": "tool_result", "tool_use_id": tool_id, "content": result, "is_error": is_error}
        self._event("user", message={"role": "user", "content": [answer]})

    def run(self) -> int:
        steps = self._begin()
        if steps is None:
            return 1
        servers: list[dict[str, str]] = []
        try:
            if any("signal" in step for step in steps):
                servers = [{"name": "pm", "status": self._connect()}]
            tools = ["Write", "Bash"]
            self._event("system", subtype="init", cwd=str(self.cwd), tools=tools, mcp_servers=servers)
            for step in steps:
                code = self._step(step)
                if code is not None:
                    self.exit_code = code
                    return code
            self._finish()  # the result comes first, as Claude Code prints it before shutting MCP down
        except Exception:
            import traceback

            traceback.print_exc()
            raise
        finally:
            _log_cpu()
            if self.mcp is not None:  # like Claude Code, do not wait for the server: it sees EOF and exits
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(0 if self.finished else self.exit_code)
        return 0

    def _begin(self) -> list[dict[str, Any]] | None:
        """Load (when resuming) and save the session; the steps to play, None for an unknown session."""
        if self.args.resume:
            path = self._state_path()
            if not path.is_file():
                sys.stderr.write(f"No conversation found with session ID: {self.args.resume}\n")
                return None
            self.state = json.loads(path.read_text(encoding="utf-8"))
        # A resumed session plays the script it started with, like Claude Code keeps its conversation.
        self.source = self.source or self.state.get("script")
        self.state["script"] = self.source
        self.script = _load_script(self.source)
        self.state["prompts"].append(self.prompt)
        self._save()
        steps = self.script.get("resume_steps") if self.args.resume else None
        return list(steps if steps is not None else self.script.get("steps", []))

    def _finish(self) -> None:
        self.finished = True
        cost = float(self.script.get("cost_usd", 0.01))
        self.state["cost_usd"] = float(self.state["cost_usd"]) + cost
        self._save()
        self._event(
            "result",
            subtype="success",
            is_error=False,
            num_turns=self.turns,
            total_cost_usd=round(self.state["cost_usd"], 6),
            usage={"input_tokens": 100 * max(1, self.turns), "output_tokens": 10 * max(1, self.turns)},
            terminal_reason="completed",
            result="fake agent done",
        )

    @staticmethod
    def _mcp_server(source: str | None) -> dict[str, Any] | None:
        if not source:
            return None
        text = source if source.lstrip().startswith("{") else Path(source).read_text(encoding="utf-8")
        servers = json.loads(text).get("mcpServers", {})
        server = servers.get("pm") or next(iter(servers.values()), None)
        return dict(server) if server else None

    def _connect(self) -> str:
        server = self.mcp_server
        if not server:
            return "failed"
        try:
            self.mcp = StdioClient.start(
                str(server["command"]), [str(a) for a in server.get("args", [])], dict(server.get("env", {}))
            )
        except Exception as exc:  # reported like Claude Code does: a failed server, the run goes on
            sys.stderr.write(f"fake agent: MCP server failed: {exc}\n")
            return "failed"
        return "connected"

    def _step(self, step: dict[str, Any]) -> int | None:
        values = {"prompt": self.prompt, "session_id": self.session_id}
        if "print" not in step:
            # Prints in a row leave in as few writes as the pipe takes: a burst arrives as one, however
            # loaded the machine (a flush per line let the reader see them one by one).
            sys.stdout.flush()
        if "signal" in step:
            self._signal(_fill(step["signal"], values))
        elif "sleep" in step:
            time.sleep(float(step["sleep"]))
        elif step.get("hang"):
            threading.Event().wait()  # until killed
        else:
            return self._plain_step(step, values)
        return None

    def _plain_step(self, step: dict[str, Any], values: dict[str, str]) -> int | None:
        if "text" in step:
            self.turns += 1
            block = {"type": "text", "text": _fill(step["text"], values)}
            self._event("assistant", message={"role": "assistant", "content": [block]})
        elif "write" in step:
            target = self.cwd / str(_fill(step["write"], values))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(str(_fill(step.get("content", ""), values)), encoding="utf-8")
            self._tool("Write", {"file_path": str(target)}, f"File created successfully at: {target}")
        elif "bash" in step:
            command = str(_fill(step["bash"], values))
            done = subprocess.run(command, shell=True, cwd=self.cwd, capture_output=True, text=True, check=False)
            output = (done.stdout + done.stderr).strip()
            self._tool("Bash", {"command": command}, output, done.returncode != 0)
        elif "print" in step:
            sys.stdout.write(str(step["print"]) + "\n")
        elif "big_line" in step:
            remaining = int(step["big_line"])
            chunk = "x" * 65536
            while remaining > 0:
                sys.stdout.write(chunk[: min(remaining, len(chunk))])
                remaining -= len(chunk)
            sys.stdout.write("\n")
            sys.stdout.flush()
        elif "stderr" in step:
            sys.stderr.write(str(step["stderr"]) + "\n")
            sys.stderr.flush()
        elif "exit" in step:
            return int(step["exit"])
        return None

    def _signal(self, payload: Any) -> None:
        name = "mcp__pm__signal_back"
        if self.mcp is None:
            self._tool(name, payload, "Error: No such tool available: mcp__pm__signal_back", True)
            return
        result = self.mcp.request("tools/call", {"name": "signal_back", "arguments": payload})
        text = "\n".join(str(block.get("text", "")) for block in result.get("content", []))
        self._tool(name, payload, text, bool(result.get("isError")))


# The environment an MCP stdio client passes its server by default (the `mcp` SDK's, on POSIX), then the
# server's own variables from the config.
INHERITED_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")


class StdioClient:
    """A tools-only MCP client over stdio: what the fake needs of one, without importing the `mcp` package
    (about half a second of CPU per session, which made the fake agent the biggest CPU user of a test run).
    The server is started like the SDK starts it: its own session, stderr shared with ours."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.next_id = 0

    @classmethod
    def start(cls, command: str, args: list[str], env: dict[str, str]) -> StdioClient:
        """Start the server and initialize the session."""
        inherited = {k: v for k in INHERITED_ENV if (v := os.environ.get(k)) is not None and not v.startswith("()")}
        proc = subprocess.Popen(
            [command, *args],
            env={**inherited, **env},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,
        )
        client = cls(proc)
        params = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "fake-agent", "version": "1"},
        }
        client.request("initialize", params)
        client._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return client

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode("utf-8") + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one request and return its result; an error answer or a closed server raises."""
        assert self.proc.stdout is not None
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise ConnectionError(f"the MCP server closed its output (exit code {self.proc.wait()})")
            message = json.loads(line)
            if message.get("id") != self.next_id:
                continue  # a notification or log message
            if "error" in message:
                raise RuntimeError(f"MCP error: {message['error']}")
            result: dict[str, Any] = message.get("result", {})
            return result


def _log_cpu() -> None:
    """Append this session's CPU seconds to `$PM_FAKE_AGENT_CPU_LOG`, when set."""
    path = os.environ.get(CPU_LOG_ENV)
    if path:
        import resource

        used = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        with Path(path).open("a", encoding="utf-8") as log:
            log.write(f"{sum(u.ru_utime + u.ru_stime for u in used):.6f}\n")


def _uuid4() -> str:
    """A random (version 4) UUID, as Claude Code's session ids are."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def main(argv: list[str] | None = None) -> int:
    """Entry point: `python -m pm_agent.testing.fake_agent [claude-like options] -- PROMPT`."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[-2:] == ["auth", "status"]:  # what pm-agent asks before a run: logged in, as an API key user is
        _emit({"loggedIn": True, "authMethod": "api_key", "apiProvider": "firstParty"})
        return 0
    return FakeAgent(_parse_args(argv)).run()


if __name__ == "__main__":
    sys.exit(main())
