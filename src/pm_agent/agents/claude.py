"""The Claude Code runner: `claude -p ... --output-format stream-json --verbose` as a child process.

Every session gets the same HOME (the run's agent home: Claude Code keeps sessions under
`$HOME/.claude/projects/<cwd>/`, so `--resume` needs the HOME and cwd of the original) and its own
XDG_RUNTIME_DIR and CLAUDE_CODE_TMPDIR. The `--mcp-config` is written to a 0600 file in the
session's scratch folder (not the command line, where `ps` would show the session token).
All options come before `--` and the prompt after it, so a list-taking flag cannot swallow the
prompt and a prompt starting with `-` is not read as an option. A request with a `Confinement`
gets a `--settings` file that keeps its writes in the worktree (see `confine.py`).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pm_agent.agents.base import SessionRequest
from pm_agent.agents.confine import claude_settings
from pm_agent.agents.process import ProcessSession, spawn
from pm_agent.errors import AgentError

__all__ = [
    "DEFAULT_TOOLS",
    "PASS_THROUGH_ENV",
    "SIGNAL_TOOL",
    "ClaudeRunner",
    "agent_env",
    "bundled_claude",
    "find_claude",
    "login_settings",
    "session_scratch",
]

SIGNAL_TOOL = "mcp__pm__signal_back"
LOGIN_CHECK_TIMEOUT_S = 10.0  # `claude auth status` answers in ~0.2 s; a CLI that waits instead counts as no answer
DEFAULT_TOOLS: tuple[str, ...] = ("Read", "Write", "Edit", "Bash", "Glob", "Grep")

# With inherit_env=False only these are taken from pm-agent's own environment.
PASS_THROUGH_ENV: tuple[str, ...] = (
    "PATH",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "USER",
    "LOGNAME",
    "SHELL",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "ANTHROPIC_MODEL",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "NODE_EXTRA_CA_CERTS",
)
# Never inherited: a parent Claude Code's own markers (pm-agent may itself run inside one), another
# config folder (it would bypass the agent home --resume relies on), pm-agent's signal-server variables.
_NOT_INHERITED_PREFIXES: tuple[str, ...] = ("CLAUDE_CODE_", "PM_AGENT_")
_NOT_INHERITED: frozenset[str] = frozenset({"CLAUDECODE", "CLAUDE_PID", "CLAUDE_CONFIG_DIR", "MCP_CONFIG"})
# Except the user's own settings of how Claude Code reaches a model: the long-lived token of `claude setup-token`,
# Bedrock, Vertex or Foundry and their auth skips, a client certificate, the output limit. Without them every
# session would find itself logged out (or talk to another provider).
CLAUDE_CODE_LOGIN_VARS: frozenset[str] = frozenset(
    {
        "CLAUDE_CODE_OAUTH_TOKEN",
        "CLAUDE_CODE_USE_BEDROCK",
        "CLAUDE_CODE_USE_VERTEX",
        "CLAUDE_CODE_USE_FOUNDRY",
        "CLAUDE_CODE_SKIP_BEDROCK_AUTH",
        "CLAUDE_CODE_SKIP_VERTEX_AUTH",
        "CLAUDE_CODE_SKIP_FOUNDRY_AUTH",
        "CLAUDE_CODE_CLIENT_CERT",
        "CLAUDE_CODE_CLIENT_KEY",
        "CLAUDE_CODE_CLIENT_KEY_PASSPHRASE",
        "CLAUDE_CODE_MAX_OUTPUT_TOKENS",
    }
)


def bundled_claude() -> Path | None:
    """The Claude Code binary shipped in the `claude-agent-sdk` wheel, if installed."""
    spec = importlib.util.find_spec("claude_agent_sdk")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "_bundled" / "claude"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def find_claude(explicit: str | Path | None = None, *, path: str | None = None) -> Path:
    """The Claude Code binary: `explicit` (path or name on PATH), `claude` on PATH, else the bundled one."""
    if explicit:
        found = shutil.which(str(explicit), path=path)
        if found is None:
            raise AgentError(f"agent binary not found or not executable: {explicit}")
        return Path(found)
    found = shutil.which("claude", path=path if path is not None else os.environ.get("PATH"))
    if found is not None:
        return Path(found)
    bundled = bundled_claude()
    if bundled is None:
        raise AgentError("Claude Code not found: install it, put `claude` on PATH, or set agent.binary")
    return bundled


def agent_env(
    home: Path | None, scratch: Path, extra: Mapping[str, str], max_retries: int, *, inherit: bool = True
) -> dict[str, str]:
    """The environment of one session: pm-agent's own (or only PASS_THROUGH_ENV), isolation, then `extra`.

    Agents run the project's own commands (tests, linters), so by default they inherit pm-agent's
    environment, less the variables listed above; HOME, XDG_RUNTIME_DIR and the temp folders are
    the session's.
    """
    if inherit:
        env = {
            key: value
            for key, value in os.environ.items()
            if key in CLAUDE_CODE_LOGIN_VARS
            or (key not in _NOT_INHERITED and not key.startswith(_NOT_INHERITED_PREFIXES))
        }
    else:
        env = {key: os.environ[key] for key in PASS_THROUGH_ENV if key in os.environ}
    env.setdefault("PATH", os.defpath)
    if home is not None:
        env["HOME"] = str(home)
        env.update(toolchain_homes(env))
    elif "HOME" in os.environ:
        env["HOME"] = os.environ["HOME"]
    runtime, tmp = scratch / "run", scratch / "tmp"
    for folder in (runtime, tmp):
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    env.update(
        {
            "XDG_RUNTIME_DIR": str(runtime),
            "CLAUDE_CODE_TMPDIR": str(tmp),
            "TMPDIR": str(tmp),
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "DISABLE_AUTOUPDATER": "1",
            "ENABLE_TOOL_SEARCH": "false",
            "CLAUDE_CODE_MAX_RETRIES": str(max_retries),
        }
    )
    env.update(extra)
    return env


# Tools that find their toolchain or caches under $HOME, by the variable that points them elsewhere. In an isolated
# HOME, rustup finds no toolchain at all (`cargo`: "rustup could not choose a version of cargo to run") and go,
# npm, uv and pip start with empty caches (offline, they cannot fetch what the project needs). Java's tools (maven,
# gradle) read the passwd entry's home, not $HOME, and need nothing.
TOOLCHAIN_HOMES: tuple[tuple[str, str], ...] = (
    ("RUSTUP_HOME", ".rustup"),
    ("CARGO_HOME", ".cargo"),
    ("GOPATH", "go"),
    ("GOCACHE", ".cache/go-build"),
    ("npm_config_cache", ".npm"),
    ("UV_CACHE_DIR", ".cache/uv"),
    ("PIP_CACHE_DIR", ".cache/pip"),
)


def toolchain_homes(env: Mapping[str, str]) -> dict[str, str]:
    """For a session in an isolated HOME: the variables that keep the user's toolchains and caches (the user's own
    folders, where they exist), except those `env` already sets."""
    real = os.environ.get("HOME")
    if not real:
        return {}
    return {
        name: str(Path(real) / folder)
        for name, folder in TOOLCHAIN_HOMES
        if name not in env and (Path(real) / folder).is_dir()
    }


def session_scratch(home: Path) -> Path:
    """A fresh scratch folder for one session under `home/sessions/`."""
    scratch = home / "sessions" / uuid.uuid4().hex[:16]
    scratch.mkdir(parents=True, mode=0o700)
    return scratch


def login_settings(home: Path | None) -> dict[str, Any]:
    """From the settings file of the HOME sessions get (`~/.claude/settings.json`), what logs Claude Code in: its
    apiKeyHelper, and the ANTHROPIC_* and provider variables of its `env`. Sessions read no settings file (so that
    the user's hooks, permissions and servers stay out), and get these through their own `--settings` instead."""
    path = (home if home is not None else Path(os.environ.get("HOME", "~")).expanduser()) / ".claude" / "settings.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    found: dict[str, Any] = {}
    if isinstance(data.get("apiKeyHelper"), str) and data["apiKeyHelper"].strip():
        found["apiKeyHelper"] = data["apiKeyHelper"]
    env = data.get("env")
    if isinstance(env, dict):
        login = {
            k: v
            for k, v in env.items()
            if isinstance(v, str) and (k.startswith("ANTHROPIC_") or k in CLAUDE_CODE_LOGIN_VARS)
        }
        if login:
            found["env"] = login
    return found


def _not_logged_in(stdout: str, binary: str) -> str | None:
    """The problem `claude auth status`'s JSON tells (`loggedIn: false`), else None."""
    try:
        status = json.loads(stdout)
    except ValueError:
        return None
    if not isinstance(status, dict) or status.get("loggedIn") is not False:
        return None
    method = status.get("authMethod")
    how = f", authMethod {method}" if isinstance(method, str) and method else ""
    return f"Claude Code ({binary}) is not logged in (`claude auth status`: loggedIn false{how})"


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


@dataclass
class ClaudeRunner:
    """Runs Claude Code sessions.

    `agent_home`: HOME for every session of the run (keep it for the run's life: --resume needs it);
    None uses the user's own HOME (their login and settings files; sessions still skip settings).
    `binary`: a path, a name on PATH, or an argv prefix (e.g. `[python, -m, pm_agent.testing.fake_agent]`).
    """

    agent_home: Path | None
    binary: str | Path | Sequence[str] | None = None
    model: str | None = None
    permission_mode: str = "acceptEdits"
    allowed_tools: Sequence[str] = DEFAULT_TOOLS
    max_retries: int = 2
    extra_args: Sequence[str] = ()
    scratch_root: Path | None = None  # where per-session scratch folders go; default agent_home or a temp dir
    inherit_env: bool = True  # False: only PASS_THROUGH_ENV from pm-agent's environment
    hook_python: str = sys.executable  # runs the confinement hook (guard_hook.py, standard library only)
    name: str = "claude"
    _argv0: list[str] = field(default_factory=list, init=False, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.binary, Sequence) and not isinstance(self.binary, str):
            if not self.binary:
                raise AgentError("agent binary argv prefix is empty")
            self._argv0 = [str(part) for part in self.binary]
        else:
            self._argv0 = [str(find_claude(self.binary))]

    @property
    def executable(self) -> list[str]:
        """The argv prefix that runs the agent."""
        return list(self._argv0)

    def tools(self) -> list[str]:
        """The allowed tools, with the signal tool always among them."""
        tools = [t for t in self.allowed_tools if t]
        return tools if SIGNAL_TOOL in tools else [*tools, SIGNAL_TOOL]

    def argv(
        self, request: SessionRequest, mcp_config_path: Path | None, settings_path: Path | None = None
    ) -> list[str]:
        """The command line for `request` (mcp config and confinement settings given as file paths)."""
        args = [*self._argv0, "-p", "--output-format", "stream-json", "--verbose"]
        if mcp_config_path is not None:
            args += [f"--mcp-config={mcp_config_path}", "--strict-mcp-config"]
        if settings_path is not None:
            args.append(f"--settings={settings_path}")
        args += [
            f"--allowedTools={','.join(self.tools())}",
            f"--permission-mode={self.permission_mode}",
            "--setting-sources",
            "",
            f"--max-turns={request.limits.max_turns}",
        ]
        if self.model:
            args.append(f"--model={self.model}")
        if request.system_prompt:
            args.append(f"--append-system-prompt={request.system_prompt}")
        if request.resume_id:
            args.append(f"--resume={request.resume_id}")
        args += [*self.extra_args, "--", request.prompt]
        return args

    def login_problem(self) -> str | None:
        """What `claude auth status` (offline, ~0.2 s) says when the CLI is not logged in, with the HOME and environment
        its sessions get; None when it is, or when the answer is not that command's JSON (another CLI, an older one)."""
        with tempfile.TemporaryDirectory(prefix="pm-agent-login-") as tmp:
            # An isolated agent home not made yet is an empty one: the check must not make it (nothing is written
            # before a run starts), and it is what the first session would find.
            home = self.agent_home
            if home is not None and not home.is_dir():
                home = Path(tmp) / "home"
                home.mkdir()
            env = agent_env(home, Path(tmp), {}, self.max_retries, inherit=self.inherit_env)
            # Sessions read no settings file (`--setting-sources ""`) but get the login's own settings, so the
            # question is asked that way; when the answer is no, asking again with the files tells whether the
            # login lives in one in a form sessions do not get.
            as_sessions = ["--setting-sources", ""]
            login = login_settings(home)
            if login:
                _write_private(Path(tmp) / "login.json", json.dumps(login))
                as_sessions.append(f"--settings={Path(tmp) / 'login.json'}")
            problem = _not_logged_in(self._auth_status(env, tmp, as_sessions), " ".join(self._argv0))
            if problem is not None and _not_logged_in(self._auth_status(env, tmp, []), "") is None:
                problem += (
                    ", as its sessions see it: its login comes from a part of its settings files that pm-agent's "
                    "sessions do not get (they get only the apiKeyHelper and the ANTHROPIC_* env of "
                    "~/.claude/settings.json)"
                )
        return problem

    def _auth_status(self, env: Mapping[str, str], cwd: str, options: list[str]) -> str:
        """`claude [options] auth status`'s output; "" when it cannot run or does not answer in time."""
        try:
            return subprocess.run(
                [*self._argv0, *options, "auth", "status"],
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=LOGIN_CHECK_TIMEOUT_S,
                check=False,
            ).stdout
        except (OSError, subprocess.TimeoutExpired):
            return ""

    def _scratch(self) -> Path:
        root = self.scratch_root or self.agent_home
        if root is None:
            return Path(tempfile.mkdtemp(prefix="pm-agent-session-"))
        return session_scratch(root)

    async def start(self, request: SessionRequest) -> ProcessSession:
        """Spawn `claude` for `request` in `request.workdir`."""
        if not request.workdir.is_dir():
            raise AgentError(f"agent workdir does not exist: {request.workdir}")
        if self.agent_home is not None:
            self.agent_home.mkdir(parents=True, exist_ok=True)
        scratch = self._scratch()
        config_path: Path | None = None
        if request.mcp_config is not None:
            config_path = scratch / "mcp.json"
            _write_private(config_path, json.dumps(request.mcp_config))
        settings_path: Path | None = None
        settings = login_settings(self.agent_home)
        if request.confinement is not None:
            settings.update(claude_settings(request.confinement, self.hook_python))
        if settings:
            settings_path = scratch / "settings.json"
            _write_private(settings_path, json.dumps(settings))
        env = agent_env(self.agent_home, scratch, request.env, self.max_retries, inherit=self.inherit_env)
        return await spawn(
            self.argv(request, config_path, settings_path),
            cwd=request.workdir,
            env=env,
            previous_cost_usd=request.previous_cost_usd,
            cleanup=lambda: shutil.rmtree(scratch, ignore_errors=True),
        )
