"""Ward: run an environment-contract command the way pm-agent trusts it (its own, not the agent's).

The command runs through the shell in its own session (process group), with pm-agent's environment less
its secrets (`gate_env`: API keys, tokens, pm-agent's own variables; see `pm_agent.redaction`); the
variables the configuration lets through (`environment.pass_env`, `allowed_env`) come back as `env`.
On timeout the whole group gets SIGTERM, then SIGKILL after a grace period; leftovers (background
children) are killed when the command ends too. Output (stdout and stderr merged) is read as it comes
into a rolling tail with a size cap, so a chatty command never holds unbounded output in memory.
"""

from __future__ import annotations

import contextlib
import fnmatch
import math
import os
import re
import select
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from pm_agent.redaction import is_secret_env

TAIL_LINES = 60
MAX_LINE_CHARS = 2000
KILL_GRACE_S = 1.0
_CHUNK = 65536

_SUMMARY_WORD = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?|rerun)\b")
_SUMMARY_TIME = re.compile(r"\bin [\d.]+s\b|no tests ran")


class TestCounts(BaseModel):
    """Counts from pytest's summary line ("3 passed, 1 failed, 2 skipped in 0.12s")."""

    __test__ = False  # not a pytest test class
    model_config = ConfigDict(extra="forbid", frozen=True)

    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    xfailed: int = 0
    xpassed: int = 0
    deselected: int = 0
    warnings: int = 0
    rerun: int = 0


class CommandResult(BaseModel):
    """One command as pm-agent ran it: exit code, duration, the tail of its output."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cmd: str
    cwd: str = ""
    exit_code: int
    duration_ms: int
    output_tail: str  # the last TAIL_LINES lines (long lines cut)
    timed_out: bool = False
    output_bytes: int = 0  # total output size, kept or not
    truncated: bool = False  # True when output_tail is not the whole output
    test_counts: TestCounts | None = None
    # The whole output up to `keep_output_bytes`, for parsing findings; in memory only, never stored.
    output: str | None = Field(default=None, exclude=True, repr=False)
    output_complete: bool = True  # False when `output` was cut at `keep_output_bytes`

    @property
    def ok(self) -> bool:
        """Exit code 0 and not timed out."""
        return self.exit_code == 0 and not self.timed_out

    def tail(self, lines: int = 20) -> str:
        """The last `lines` lines of output."""
        return "\n".join(self.output_tail.splitlines()[-lines:])


def parse_pytest_summary(output: str) -> TestCounts | None:
    """Counts from the last pytest summary line in `output`, None when there is none."""
    for line in reversed(output.splitlines()):
        if not _SUMMARY_TIME.search(line):
            continue
        found = _SUMMARY_WORD.findall(line)
        if not found and "no tests ran" not in line:
            continue
        counts: dict[str, int] = {}
        for number, word in found:
            key = {"error": "errors", "warning": "warnings"}.get(word, word)
            counts[key] = counts.get(key, 0) + int(number)
        return TestCounts(**counts)
    return None


class _Tail:
    """A rolling tail of decoded lines with a per-line cap; counts everything it sees."""

    def __init__(self, max_lines: int, max_line_chars: int, keep_bytes: int = 0) -> None:
        self.lines: deque[str] = deque(maxlen=max_lines)
        self.keep_bytes = keep_bytes
        self.kept = bytearray()
        self.partial = ""
        self.max_line_chars = max_line_chars
        self.total_bytes = 0
        self.total_lines = 0
        self.cut = False

    def _cap(self, line: str) -> str:
        if len(line) <= self.max_line_chars:
            return line
        self.cut = True
        half = self.max_line_chars // 2
        return f"{line[:half]} [...] {line[-half:]}"

    def feed(self, data: bytes) -> None:
        self.total_bytes += len(data)
        room = self.keep_bytes - len(self.kept)
        if room > 0:
            self.kept += data[:room]
        text = self.partial + data.decode("utf-8", errors="replace")
        *complete, self.partial = text.split("\n")
        if len(self.partial) > 2 * self.max_line_chars:  # an endless line: keep its ends
            self.partial = self._cap(self.partial)
        for line in complete:
            self.total_lines += 1
            self.lines.append(self._cap(line.rstrip("\r")))

    def text(self) -> str:
        lines = list(self.lines)
        if self.partial:
            lines.append(self._cap(self.partial))
        return "\n".join(lines)

    def truncated(self) -> bool:
        return self.cut or self.total_lines > len(self.lines)


def _reader(fd: int, tail: _Tail) -> None:
    while True:
        try:
            data = os.read(fd, _CHUNK)
        except OSError:
            return
        if not data:
            return
        tail.feed(data)


def _exited(pid: int) -> bool:
    """Whether the child exited, without reaping it (its pid, hence its group id, stays reserved)."""
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None


def _kill_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _wait_exit(pid: int, deadline: float) -> bool:
    """Whether the child exited by `deadline`, left unreaped. A pidfd wakes us the moment it exits (a gate is
    on the path from an agent's signal to the next dispatch, so polling's up to 50 ms a command showed);
    without pidfd (an older kernel) we poll with a growing delay."""
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        return _poll_exit(pid, deadline)
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        while not _exited(pid):
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            poller.poll(max(1, math.ceil(left * 1000)))
        return True
    finally:
        os.close(pidfd)


def _poll_exit(pid: int, deadline: float) -> bool:
    delay = 0.002
    while not _exited(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(delay)
        delay = min(delay * 2, 0.05)
    return True


def gate_env(extra: Mapping[str, str] | None = None, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a gate command: pm-agent's own (`environ`) without its secrets, then `extra`."""
    source = os.environ if environ is None else environ
    kept = {name: value for name, value in source.items() if not is_secret_env(name, value)}
    return {**kept, **(extra or {})}


def allowed_env(pass_env: Sequence[str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables of pm-agent's environment that `pass_env` (names, or globs such as `MYAPP_*`) lets through."""
    source = os.environ if environ is None else environ
    return {
        name: value
        for name, value in source.items()
        if any(name == pattern or fnmatch.fnmatchcase(name, pattern) for pattern in pass_env)
    }


def run_command(
    cmd: str,
    cwd: Path | str,
    timeout_s: float,
    env: Mapping[str, str] | None = None,
    *,
    tail_lines: int = TAIL_LINES,
    kill_grace_s: float = KILL_GRACE_S,
    kill_leftovers: bool = True,
    keep_output_bytes: int = 0,
) -> CommandResult:
    """Run `cmd` through the shell in `cwd`; `env` adds to (overrides) the inherited one, secrets removed.

    With `keep_output_bytes`, the result's `output` holds the first that many bytes of the whole output."""
    full_env = gate_env(env)
    tail = _Tail(tail_lines, MAX_LINE_CHARS, keep_output_bytes)
    read_fd, write_fd = os.pipe()
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            cmd,
            shell=True,
            cwd=cwd,
            env=full_env,
            stdin=subprocess.DEVNULL,
            stdout=write_fd,
            stderr=write_fd,
            start_new_session=True,
        )
    except OSError as exc:
        os.close(read_fd)
        os.close(write_fd)
        return CommandResult(cmd=cmd, cwd=str(cwd), exit_code=127, duration_ms=0, output_tail=f"cannot start: {exc}")
    os.close(write_fd)
    thread = threading.Thread(target=_reader, args=(read_fd, tail), daemon=True)
    thread.start()
    timed_out = not _wait_exit(proc.pid, start + timeout_s)
    if timed_out:
        _kill_group(proc.pid, signal.SIGTERM)
        if not _wait_exit(proc.pid, time.monotonic() + kill_grace_s):
            _kill_group(proc.pid, signal.SIGKILL)
    if timed_out or kill_leftovers:
        _kill_group(proc.pid, signal.SIGKILL)  # the leader is unreaped, so the group id is still ours
    exit_code = proc.wait()
    duration_ms = int((time.monotonic() - start) * 1000)
    thread.join(timeout=2.0)
    if not thread.is_alive():
        os.close(read_fd)
    output = tail.text()
    if timed_out:
        output += f"\n[pm-agent: timed out after {timeout_s:g}s; process group killed]"
    return CommandResult(
        cmd=cmd,
        cwd=str(cwd),
        exit_code=exit_code,
        duration_ms=duration_ms,
        output_tail=output,
        timed_out=timed_out,
        output_bytes=tail.total_bytes,
        truncated=tail.truncated(),
        test_counts=parse_pytest_summary(output),
        output=tail.kept.decode("utf-8", errors="replace") if keep_output_bytes else None,
        output_complete=tail.total_bytes <= keep_output_bytes if keep_output_bytes else False,
    )


__all__ = ["CommandResult", "TestCounts", "allowed_env", "gate_env", "parse_pytest_summary", "run_command"]
