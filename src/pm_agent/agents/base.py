"""The one seam between pm-agent and an agent CLI: `AgentRunner` starts an `AgentSession`.

A session is one agent process. Its stdout arrives as `AgentEvent`s (one per line, parsed when it
is JSON); when the process has ended, `wait()` gives the `Outcome`: exit code, the agent's own
session id (what `--resume` takes), cost and usage, whether a result event was seen, the last
output lines for crash reports, and the flags the monitor sets (stuck, crashed, tampered, escapes
from the worktree, ...). A `Confinement` tells a runner where the session may write; runners that
can (Claude Code) enforce it, the monitor checks it afterwards for every runner.

Runners: `claude.ClaudeRunner` (Claude Code), `command.CommandRunner` (any CLI from a template).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "AgentEvent",
    "AgentRunner",
    "AgentSession",
    "Confinement",
    "Denial",
    "EventKind",
    "Outcome",
    "SessionLimits",
    "SessionRequest",
    "StopReason",
]


class EventKind(StrEnum):
    """What one line of agent output was. JSON events keep their own type in `AgentEvent.type`."""

    INIT = "init"  # Claude Code's {"type":"system","subtype":"init"}: session id, MCP servers
    ASSISTANT = "assistant"
    USER = "user"  # tool results
    RESULT = "result"  # end of a turn: is_error, usage, total_cost_usd
    SYSTEM = "system"  # other system events (api_retry, permission_denied, hooks, ...)
    OTHER = "other"  # any other JSON object
    TEXT = "text"  # a line that is not a JSON object (plain-text agents, garbage)
    OVERSIZE = "oversize"  # a line longer than the cap: only its start is kept


class StopReason(StrEnum):
    """Why pm-agent ended a session itself."""

    STUCK = "stuck"  # no output for stuck_after
    SIGNAL = "signal"  # a non-complete signal arrived: the session ends so the PM can route
    TIMEOUT = "timeout"  # the session's time budget ran out
    CANCELLED = "cancelled"  # the caller stopped it (shutdown, cancellation)


@dataclass(frozen=True)
class AgentEvent:
    """One line of the agent's stdout."""

    seq: int
    kind: EventKind
    at: datetime
    line: str  # the line as received (only its start when oversize)
    size: int  # the line's full length in bytes
    data: dict[str, Any] | None = None  # the parsed JSON object, when the line was one

    @property
    def type(self) -> str:
        """`type` or `type/subtype` of a JSON event (e.g. `system/init`); the kind otherwise."""
        if self.data is None:
            return self.kind.value
        kind = str(self.data.get("type", ""))
        subtype = self.data.get("subtype")
        return f"{kind}/{subtype}" if kind == "system" and subtype else kind


@dataclass(frozen=True)
class SessionLimits:
    """Bounds of one session."""

    max_turns: int = 60
    stuck_after_s: float = 600.0
    startup_s: float = 30.0  # before the first line, allow at least this long (MCP servers start first)
    time_budget_s: float | None = None
    signal_grace_s: float = 5.0  # after a non-complete signal, time for the agent to end its turn


@dataclass(frozen=True)
class Confinement:
    """Where one session may write: its worktree only, never the main checkout or pm-agent's state."""

    worktree: Path
    checkout: Path | None = None  # the main checkout the worktree belongs to (None: the session works in it)
    state_dir: Path | None = None  # pm-agent's own folder (`<repo>/.pm-agent`)
    protected: tuple[Path, ...] = ()  # files no tool may write at all: the store and its -wal/-shm
    denial_log: Path | None = None  # where the PreToolUse hook appends what it refused (JSON lines)


@dataclass(frozen=True)
class Denial:
    """A tool call the agent CLI refused because of the session's confinement."""

    tool: str
    target: str  # the path or the command
    by: str  # "guard-hook" (pm-agent's PreToolUse hook) or "permission-rules" (the CLI's own rules)
    reason: str
    tool_use_id: str | None = None


@dataclass(frozen=True)
class SessionRequest:
    """Everything a runner needs to start (or resume) one agent session."""

    prompt: str
    workdir: Path
    role: str
    system_prompt: str | None = None  # role instructions, appended to the agent's own
    resume_id: str | None = None  # the agent's session id to continue (Claude's --resume)
    env: Mapping[str, str] = field(default_factory=dict)  # extra environment, wins over defaults
    limits: SessionLimits = field(default_factory=SessionLimits)
    mcp_config: Mapping[str, Any] | None = None  # {"mcpServers": {...}}: the signal_back server
    previous_cost_usd: float = 0.0  # cost already reported for resume_id (cost is cumulative)
    confinement: Confinement | None = None  # None: the runner's defaults only


@dataclass
class Outcome:
    """How a session ended. Runners fill the process facts; the monitor adds its verdict."""

    exit_code: int | None
    agent_session_id: str | None = None
    result_seen: bool = False
    is_error: bool = False
    result_subtype: str | None = None
    terminal_reason: str | None = None
    num_turns: int | None = None
    total_cost_usd: float | None = None  # as the agent reported it (cumulative across --resume)
    cost_usd: float = 0.0  # this process's share
    input_tokens: int = 0
    output_tokens: int = 0
    mcp_servers: dict[str, str] = field(default_factory=dict)  # name -> status from the init event
    last_lines: list[str] = field(default_factory=list, repr=False)
    stderr_tail: list[str] = field(default_factory=list, repr=False)
    lines: int = 0
    non_json_lines: int = 0
    oversize_lines: int = 0
    pid: int | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    stopped: StopReason | None = None  # set when pm-agent ended the session itself
    stuck: bool = False
    crashed: bool = False
    tampered: bool = False
    tamper_reason: str | None = None
    denials: list[Denial] = field(default_factory=list)  # calls refused by the confinement (prevented)
    escapes: list[str] = field(default_factory=list)  # changes found outside the worktree afterwards
    unrestored: list[str] = field(default_factory=list)  # those of the escapes pm-agent could not undo
    error: str | None = None  # a short human-readable reason when the session failed
    # The agent's account cannot work (Claude Code's `authentication_failed`, `billing_error`): no session can.
    account_error: str | None = None

    @property
    def ok(self) -> bool:
        """The process ended by itself, successfully, and the monitor found nothing wrong."""
        return (
            self.exit_code == 0
            and not self.is_error
            and self.stopped is None
            and not (self.stuck or self.crashed or self.tampered or self.escapes)
        )

    def report_lines(self) -> list[str]:
        """Last stdout lines, then the stderr tail: what a crash report shows."""
        if not self.stderr_tail:
            return list(self.last_lines)
        return [*self.last_lines, "--- stderr ---", *self.stderr_tail]


@runtime_checkable
class AgentSession(Protocol):
    """A running agent process."""

    @property
    def pid(self) -> int:
        """The process id (also its process group id)."""

    @property
    def agent_session_id(self) -> str | None:
        """The agent's own session id, once its init event arrived."""

    @property
    def last_activity(self) -> float:
        """`time.monotonic()` of the last output (stdout or stderr), or of the start."""

    @property
    def returncode(self) -> int | None:
        """The exit code once the process ended."""

    def events(self) -> AsyncIterator[AgentEvent]:
        """The stdout events as they arrive; ends when stdout closes. One consumer."""

    async def stop(self, reason: StopReason = StopReason.CANCELLED) -> None:
        """End the whole process group: SIGTERM, then SIGKILL after a short grace."""

    async def wait(self) -> Outcome:
        """Wait for the process to end and its output to be read; the outcome."""


@runtime_checkable
class AgentRunner(Protocol):
    """Starts agent sessions; one implementation per agent CLI."""

    name: str

    async def start(self, request: SessionRequest) -> AgentSession:
        """Spawn the agent for `request`; raises AgentError when it cannot start."""

    def login_problem(self) -> str | None:
        """Why the agent CLI could not work a session (not logged in), asked of it before a run; None when it can,
        or when it cannot tell."""
