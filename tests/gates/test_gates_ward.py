"""Ward: commands run in their own process group, killed as a group, output kept as a capped tail."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from pm_agent.gates import parse_pytest_summary, run_command
from pm_agent.gates.ward import MAX_LINE_CHARS, TAIL_LINES


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for a reaper counts as gone)."""
    status = Path(f"/proc/{pid}/status")
    try:
        state = next(line for line in status.read_text().splitlines() if line.startswith("State:"))
    except (FileNotFoundError, ProcessLookupError, StopIteration):
        return False
    return "Z" not in state.split()[1]


def _wait_gone(pid: int, within_s: float = 2.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.02)
    return False


def test_exit_code_merged_output_cwd_and_env(tmp_path: Path) -> None:
    result = run_command('echo out; echo err >&2; echo "$WARD_X"; pwd; exit 3', tmp_path, 10, {"WARD_X": "set"})
    assert result.exit_code == 3
    assert not result.ok
    assert not result.timed_out
    assert result.output_tail.splitlines() == ["out", "err", "set", str(tmp_path)]
    assert result.duration_ms >= 0
    assert not result.truncated
    assert result.test_counts is None
    assert run_command("true", tmp_path, 10).ok


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")
def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    started = time.monotonic()
    result = run_command(f"sleep 30 & echo $! > {pid_file}; echo started; wait", tmp_path, 0.5)
    assert time.monotonic() - started < 5
    assert result.timed_out
    assert not result.ok
    assert "started" in result.output_tail
    assert "timed out after 0.5s" in result.output_tail
    child = int(pid_file.read_text())
    assert _wait_gone(child), f"background child {child} survived the timeout"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")
def test_term_ignoring_child_is_killed_after_grace(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    # An ignored signal stays ignored across exec: the sleep ignores SIGTERM as well.
    cmd = f"trap '' TERM; sleep 30 & echo $! > {pid_file}; echo ready; wait"
    started = time.monotonic()
    result = run_command(cmd, tmp_path, 0.3, kill_grace_s=0.2)
    assert result.timed_out
    assert "ready" in result.output_tail
    assert time.monotonic() - started >= 0.5  # waited the grace period: SIGTERM did not end it
    assert _wait_gone(int(pid_file.read_text()))


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")
def test_leftover_background_children_are_killed_when_the_command_ends(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    result = run_command(f"sleep 30 > /dev/null 2>&1 & echo $! > {pid_file}; echo done", tmp_path, 10)
    assert result.ok
    assert result.output_tail == "done"
    assert _wait_gone(int(pid_file.read_text()))


def test_output_is_a_capped_rolling_tail(tmp_path: Path) -> None:
    result = run_command("seq 1 200000", tmp_path, 20)
    lines = result.output_tail.splitlines()
    assert len(lines) == TAIL_LINES
    assert lines[-1] == "200000"
    assert lines[0] == str(200000 - TAIL_LINES + 1)
    assert result.truncated
    assert result.output_bytes == len("\n".join(map(str, range(1, 200001)))) + 1

    long_line = run_command(f"{sys.executable} -c \"print('x' * 5_000_000)\"", tmp_path, 20)
    assert long_line.ok
    assert long_line.output_bytes == 5_000_001
    assert len(long_line.output_tail) <= MAX_LINE_CHARS + 20
    assert "[...]" in long_line.output_tail


def test_missing_command_is_a_failure_not_an_exception(tmp_path: Path) -> None:
    result = run_command("definitely-not-a-command-xyz", tmp_path, 10)
    assert result.exit_code == 127
    assert not result.ok


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("==== 3 passed, 1 failed, 2 skipped in 0.12s ====", {"passed": 3, "failed": 1, "skipped": 2}),
        ("5 passed, 1 warning in 1.02s", {"passed": 5, "warnings": 1}),
        ("1 failed, 2 errors in 0.50s", {"failed": 1, "errors": 2}),
        (
            "= 1 passed, 1 xfailed, 1 xpassed, 3 deselected in 0.1s =",
            {"passed": 1, "xfailed": 1, "xpassed": 1, "deselected": 3},
        ),
        ("no tests ran in 0.01s", {}),
    ],
)
def test_parse_pytest_summary(output: str, expected: dict[str, int]) -> None:
    counts = parse_pytest_summary(f"collecting...\nsome 9 passed words\n{output}\n")
    assert counts is not None
    assert {k: v for k, v in counts.model_dump().items() if v} == expected


def test_parse_pytest_summary_absent() -> None:
    assert parse_pytest_summary("All checks passed!\n") is None


def test_real_pytest_run_is_counted(tmp_path: Path, test_cmd: str, test_env: dict[str, str]) -> None:
    (tmp_path / "test_x.py").write_text("def test_a():\n    assert True\n\ndef test_b():\n    assert False\n")
    result = run_command(test_cmd, tmp_path, 60, test_env)
    assert result.exit_code == 1
    assert result.test_counts is not None
    assert (result.test_counts.passed, result.test_counts.failed) == (1, 1)
    assert not (tmp_path / ".pytest_cache").exists()


@pytest.fixture(params=["pidfd", "polling"])
def wait_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each run_command test below runs with a pidfd and, as on a kernel without one, by polling."""
    from pm_agent.gates import ward

    if request.param == "polling":

        def no_pidfd(pid: int) -> int:
            raise OSError(38, "Function not implemented")

        monkeypatch.setattr(ward.os, "pidfd_open", no_pidfd)
    else:
        # Patched on ward itself, not on `time`: the test's own wait for the grandchild sleeps too.
        def no_polling(pid: int, deadline: float) -> bool:
            raise AssertionError(f"polled for {pid} although a pidfd was available")

        monkeypatch.setattr(ward, "_poll_exit", no_polling)
    return str(request.param)


def test_exit_status_and_timeout_either_way(tmp_path: Path, wait_mode: str) -> None:
    done = run_command("echo hi; exit 4", tmp_path, 10)
    assert (done.exit_code, done.timed_out, done.output_tail) == (4, False, "hi")
    late = run_command("echo begun; sleep 30", tmp_path, 0.3, kill_grace_s=0.2)
    assert late.timed_out
    assert not late.ok
    assert "begun" in late.output_tail


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")
def test_term_ignoring_group_is_killed_either_way(tmp_path: Path, wait_mode: str) -> None:
    pid_file = tmp_path / "child.pid"
    result = run_command(f"trap '' TERM; sleep 30 & echo $! > {pid_file}; wait", tmp_path, 0.3, kill_grace_s=0.2)
    assert result.timed_out
    assert _wait_gone(int(pid_file.read_text()))
