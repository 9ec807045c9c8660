"""The ward's run of a command: stdin, undecodable kept output, the duration, a reader held open, its fds.

Written against mutmut's survivors (make mutation) in gates/ward.py: real subprocesses in tmp_path.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pm_agent.gates.ward import allowed_env, run_command

PY = sys.executable


def _open_fds() -> list[str]:
    return sorted(entry.name for entry in Path("/proc/self/fd").iterdir())


@pytest.fixture
def stdin_is_a_pipe() -> Iterator[None]:
    """This process's fd 0 replaced by a pipe nobody writes to, as when pm-agent is itself fed by a pipe."""
    read_end, write_end = os.pipe()
    saved = os.dup(0)
    os.dup2(read_end, 0)
    try:
        yield
    finally:
        os.dup2(saved, 0)
        for fd in (saved, read_end, write_end):
            os.close(fd)


@pytest.mark.usefixtures("stdin_is_a_pipe")
def test_a_command_reads_an_empty_stdin_instead_of_pm_agent_s() -> None:
    started = time.monotonic()
    result = run_command("cat; echo read-all", Path.cwd(), 5)
    assert result.ok, result.output_tail
    assert result.output_tail == "read-all"
    assert time.monotonic() - started < 4


def test_undecodable_bytes_in_the_kept_output_are_replaced(tmp_path: Path) -> None:
    script = f'{PY} -c "import sys; sys.stdout.buffer.write(bytes([97, 255, 98, 10]))"'
    result = run_command(script, tmp_path, 20, keep_output_bytes=100)
    assert result.output == "a\ufffdb\n"
    assert result.output_tail == "a\ufffdb"


def test_output_not_kept_is_never_complete_even_when_there_is_none(tmp_path: Path) -> None:
    silent = run_command("true", tmp_path, 20)
    assert silent.output is None
    assert silent.output_bytes == 0
    assert not silent.output_complete
    kept = run_command("true", tmp_path, 20, keep_output_bytes=10)
    assert kept.output == ""
    assert kept.output_complete


def test_the_duration_is_the_command_s_wall_time_in_milliseconds(tmp_path: Path) -> None:
    started = time.monotonic()
    result = run_command("sleep 0.3", tmp_path, 20)
    elapsed_ms = (time.monotonic() - started) * 1000
    assert 300 <= result.duration_ms <= elapsed_ms


def test_a_background_child_holding_the_output_open_does_not_hold_the_result(tmp_path: Path) -> None:
    """kill_leftovers=False: the child outlives the command with the output pipe; the reader is given 2 s."""
    pid_file = tmp_path / "child.pid"
    started = time.monotonic()
    result = run_command(f"sleep 8 & echo $! > {pid_file}; echo started", tmp_path, 20, kill_leftovers=False)
    waited = time.monotonic() - started
    os.kill(int(pid_file.read_text()), signal.SIGKILL)
    assert result.ok
    assert result.output_tail == "started"
    assert 1.5 < waited < 6


def test_a_finished_command_leaves_no_file_descriptor_open(tmp_path: Path) -> None:
    run_command("echo warm-up", tmp_path, 20)
    before = _open_fds()
    for _ in range(3):
        assert run_command("echo hello", tmp_path, 20).output_tail == "hello"
    assert _open_fds() == before


def test_a_line_ending_in_x_keeps_its_x_when_its_carriage_return_is_dropped(tmp_path: Path) -> None:
    result = run_command("printf 'SIX\\r\\nFIX\\r\\n'", tmp_path, 20)
    assert result.output_tail == "SIX\nFIX"


def test_allowed_env_reads_the_environment_it_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MYAPP_MODE", raising=False)
    monkeypatch.setenv("MYAPP_OTHER", "from-os")
    given = {"MYAPP_MODE": "test", "HOME": "/home/x"}
    assert allowed_env(["MYAPP_*"], given) == {"MYAPP_MODE": "test"}
    assert allowed_env(["MYAPP_*"]) == {"MYAPP_OTHER": "from-os"}
