"""One agent process: spawned in its own session, read as NDJSON with bounded memory, killed as a group.

`spawn()` starts the process with stdin closed (or fed once), in a new session (so `os.killpg`
reaches every tool process it starts) and, on Linux, with a parent-death signal so it cannot
outlive pm-agent. `ProcessSession` reads stdout in chunks: a line longer than `line_cap` is not held
whole, only its start is kept and the event is marked oversize. The last lines of stdout and stderr
are kept for crash reports.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import shutil
import signal
import sys
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pm_agent.agents.base import AgentEvent, EventKind, Outcome, StopReason
from pm_agent.agents.stream import parse_line
from pm_agent.errors import AgentError

__all__ = ["LINE_CAP", "ProcessSession", "group_alive", "group_members", "kill_group", "spawn"]

log = logging.getLogger(__name__)

LINE_CAP = 1 << 20  # a stdout line longer than this is oversize
OVERSIZE_KEEP = 4096  # bytes kept of an oversize line
TAIL_LINES = 50  # lines kept for crash reports
TAIL_LINE_CHARS = 2000  # characters kept of each of those lines
QUEUE_MAX = 1000  # unconsumed events: with a consumer, reading pauses (backpressure); without, the oldest go
KILL_GRACE_S = 3.0  # SIGTERM to SIGKILL
READ_CHUNK = 1 << 16

_PR_SET_PDEATHSIG = 1


def _load_prctl() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:  # resolved in the parent: the child only calls it
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _load_prctl()


def _child_setup(parent_pid: int) -> Callable[[], None]:
    def setup() -> None:
        if _PRCTL is not None:
            _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if os.getppid() != parent_pid:  # the parent died before prctl ran
                os._exit(1)

    return setup


# util-linux's setpriv sets the parent-death signal and execs the agent in place. A Python preexec_fn
# does the same but forces a full fork of pm-agent (subprocess can only vfork without one): ~3 ms of
# pm-agent's CPU and ~25 ms of the event loop's time per agent, measured on a 2-core machine under load.
_SETPRIV = shutil.which("setpriv") if _PRCTL is not None else None


def _dying_with_parent(argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> tuple[list[str], Any]:
    """(argv, preexec_fn) that start `argv` with the parent-death signal: through setpriv when both it and
    the program are found, else through a preexec_fn (and a missing program fails the spawn as before)."""
    if _SETPRIV is not None and argv:
        program = argv[0]
        found = shutil.which(program, path=env.get("PATH", os.defpath)) if os.sep not in program else None
        exe = Path(found) if found else cwd / program  # an absolute program stays itself
        if (found or os.sep in program) and exe.is_file() and os.access(exe, os.X_OK):
            return [_SETPRIV, "--pdeathsig", "KILL", "--", str(exe), *argv[1:]], None
    return list(argv), _child_setup(os.getpid())


def kill_group(pgid: int, sig: signal.Signals = signal.SIGKILL) -> bool:
    """Send `sig` to process group `pgid`; False when no such group exists any more."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False
    return True


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes of group `pgid`, read from /proc (Linux)."""
    members: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 2 and fields[0] not in ("Z", "X") and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members


def group_alive(pgid: int) -> bool:
    """Whether any live process of group `pgid` still exists (zombies awaiting a reaper do not count)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if Path("/proc/self/stat").exists():
        return bool(group_members(pgid))
    return True


async def spawn(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    stdin_data: bytes | None = None,
    json_lines: bool = True,
    previous_cost_usd: float = 0.0,
    cleanup: Callable[[], None] | None = None,
) -> ProcessSession:
    """Start `argv` in `cwd` with exactly `env`; raise AgentError when it cannot start."""
    started_at = datetime.now(UTC)
    command, preexec = _dying_with_parent(argv, cwd, env)
    try:
        proc = await asyncio.create_subprocess_exec(
            *command,
            cwd=str(cwd),
            env=dict(env),
            stdin=asyncio.subprocess.PIPE if stdin_data is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            preexec_fn=preexec,
        )
    except OSError as exc:
        if cleanup is not None:
            cleanup()
        raise AgentError(f"cannot start agent {argv[0]!r} in {cwd}: {exc}") from exc
    session = ProcessSession(
        proc,
        started_at=started_at,
        json_lines=json_lines,
        previous_cost_usd=previous_cost_usd,
        cleanup=cleanup,
    )
    session._begin(stdin_data)
    return session


def _now() -> datetime:
    return datetime.now(UTC)


class ProcessSession:
    """A running agent process; implements `AgentSession`."""

    def __init__(
        self,
        proc: asyncio.subprocess.Process,
        *,
        started_at: datetime,
        json_lines: bool = True,
        previous_cost_usd: float = 0.0,
        cleanup: Callable[[], None] | None = None,
    ) -> None:
        self._proc = proc
        self._json_lines = json_lines
        self._previous_cost = previous_cost_usd
        self._cleanup = cleanup
        self._outcome = Outcome(exit_code=None, pid=proc.pid, started_at=started_at)
        self._tail: deque[str] = deque(maxlen=TAIL_LINES)
        self._stderr_tail: deque[str] = deque(maxlen=TAIL_LINES)
        self._queue: deque[AgentEvent] = deque()
        self._dropped = 0
        self._wakeup = asyncio.Event()
        self._drained = asyncio.Event()
        self._consumer = False
        self._closed = False
        self._seq = 0
        self._last_activity = time.monotonic()
        self._tasks: list[asyncio.Task[None]] = []
        self._final: Outcome | None = None
        self._finishing: asyncio.Task[Outcome] | None = None
        self._stop_lock = asyncio.Lock()

    # -- AgentSession --------------------------------------------------------------------------
    @property
    def pid(self) -> int:
        """Process id and process group id."""
        return self._proc.pid

    @property
    def agent_session_id(self) -> str | None:
        """The agent's session id from its init (or any) event."""
        return self._outcome.agent_session_id

    @property
    def last_activity(self) -> float:
        """Monotonic time of the last output line."""
        return self._last_activity

    @property
    def returncode(self) -> int | None:
        """Exit code once ended (negative: killed by that signal)."""
        return self._proc.returncode

    @property
    def outcome_so_far(self) -> Outcome:
        """The outcome as collected up to now (live object; do not change it)."""
        return self._outcome

    @property
    def dropped_events(self) -> int:
        """Events dropped from the iterator because nobody consumed them."""
        return self._dropped

    async def events(self) -> AsyncIterator[AgentEvent]:
        """The stdout events as they arrive; ends when stdout is closed and everything was read."""
        self._consumer = True
        try:
            while True:
                if self._queue:
                    event = self._queue.popleft()
                    if len(self._queue) < QUEUE_MAX // 2:
                        self._drained.set()
                    yield event
                    continue
                if self._closed:
                    return
                self._wakeup.clear()
                await self._wakeup.wait()
        finally:  # a consumer that walks away must not stall the reader
            self._consumer = False
            self._drained.set()

    async def stop(self, reason: StopReason = StopReason.CANCELLED) -> None:
        """SIGTERM the process group, SIGKILL it after KILL_GRACE_S; idempotent, first reason wins."""
        async with self._stop_lock:
            if self._outcome.stopped is None and self._proc.returncode is None:
                self._outcome.stopped = reason
            if self._proc.returncode is None:
                kill_group(self._proc.pid, signal.SIGTERM)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(self._proc.wait()), KILL_GRACE_S)
            kill_group(self._proc.pid, signal.SIGKILL)

    async def wait(self) -> Outcome:
        """Wait for the end of the process and of its output; the final outcome."""
        if self._finishing is None:
            self._finishing = asyncio.ensure_future(self._finish())
        return await asyncio.shield(self._finishing)

    # -- internals -----------------------------------------------------------------------------
    def _begin(self, stdin_data: bytes | None) -> None:
        assert self._proc.stdout is not None
        assert self._proc.stderr is not None
        self._tasks.append(asyncio.ensure_future(self._read_stdout(self._proc.stdout)))
        self._tasks.append(asyncio.ensure_future(self._read_stderr(self._proc.stderr)))
        if stdin_data is not None:
            self._tasks.append(asyncio.ensure_future(self._write_stdin(stdin_data)))

    async def _write_stdin(self, data: bytes) -> None:
        stdin = self._proc.stdin
        assert stdin is not None
        with contextlib.suppress(OSError):  # BrokenPipe/ConnectionReset: the agent did not read it
            stdin.write(data)
            await stdin.drain()
        with contextlib.suppress(OSError):
            stdin.close()
            await stdin.wait_closed()

    async def _finish(self) -> Outcome:
        try:
            await self._proc.wait()
            # Tool processes left in the group (a background job, a stuck MCP server) go too.
            kill_group(self._proc.pid, signal.SIGKILL)
            done, pending = await asyncio.wait(self._tasks, timeout=5.0)
            for task in pending:  # a process outside the group still holds the pipe: stop reading
                task.cancel()
            if pending:
                await asyncio.wait(pending)
            for task in done:
                if not task.cancelled() and task.exception() is not None:
                    log.error("agent %s: output reader failed", self._proc.pid, exc_info=task.exception())
        finally:
            self._close_queue()
            if self._cleanup is not None:
                with contextlib.suppress(OSError):
                    self._cleanup()
        out = self._outcome
        out.exit_code = self._proc.returncode
        out.ended_at = _now()
        out.last_lines = list(self._tail)
        out.stderr_tail = list(self._stderr_tail)
        if out.total_cost_usd is not None:
            out.cost_usd = max(0.0, out.total_cost_usd - self._previous_cost)
        self._final = out
        return out

    def _close_queue(self) -> None:
        self._closed = True
        self._wakeup.set()

    async def _read_stdout(self, stream: asyncio.StreamReader) -> None:
        buf = bytearray()
        size = 0  # full length of the current line, also past the cap
        try:
            while True:
                chunk = await stream.read(READ_CHUNK)
                if not chunk:
                    break
                while self._consumer and len(self._queue) >= QUEUE_MAX:
                    self._drained.clear()
                    await self._drained.wait()
                start = 0
                while True:
                    end = chunk.find(b"\n", start)
                    piece = chunk[start:] if end < 0 else chunk[start:end]
                    room = LINE_CAP + 1 - len(buf)
                    if room > 0:
                        buf += piece[:room]
                    size += len(piece)
                    if end < 0:
                        break
                    self._line(bytes(buf), size)
                    buf.clear()
                    size = 0
                    start = end + 1
            if size:
                self._line(bytes(buf), size)
        finally:
            self._close_queue()

    async def _read_stderr(self, stream: asyncio.StreamReader) -> None:
        pending = b""
        while True:
            chunk = await stream.read(READ_CHUNK)
            if not chunk:
                break
            self._last_activity = time.monotonic()
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for raw in lines:
                self._stderr_tail.append(raw[:TAIL_LINE_CHARS].decode("utf-8", "replace"))
            if len(pending) > LINE_CAP:
                pending = pending[:TAIL_LINE_CHARS]
        if pending:
            self._stderr_tail.append(pending[:TAIL_LINE_CHARS].decode("utf-8", "replace"))

    def _line(self, raw: bytes, size: int) -> None:
        self._last_activity = time.monotonic()
        out = self._outcome
        out.lines += 1
        raw = raw.rstrip(b"\r")
        if not raw.strip():
            return
        self._seq += 1
        if size > LINE_CAP:
            out.oversize_lines += 1
            text = raw[:OVERSIZE_KEEP].decode("utf-8", "replace")
            event = AgentEvent(self._seq, EventKind.OVERSIZE, _now(), text, size)
            self._tail.append(f"[oversize line: {size} bytes] {text[:200]}")
        else:
            text = raw.decode("utf-8", "replace")
            event = parse_line(self._outcome, self._seq, text, size, json_lines=self._json_lines)
            self._tail.append(text[:TAIL_LINE_CHARS])
        if not self._consumer and len(self._queue) >= QUEUE_MAX:
            self._queue.popleft()
            self._dropped += 1
        self._queue.append(event)
        self._wakeup.set()
