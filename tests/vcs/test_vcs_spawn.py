"""The posix_spawn git runner gives what `subprocess.run(text=True)` gave: output, input, exit codes, time-outs.

Every test runs with both ways of spawning: the C library's `posix_spawnp` through ctypes (Linux) and
`os.posix_spawnp`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pm_agent import environ
from pm_agent.vcs import Git, GitCommandError, _spawn
from pm_agent.vcs._core import _git_env

SPAWNERS = ["os"] + (["libc"] if sys.platform.startswith("linux") else [])


@pytest.fixture(autouse=True, params=SPAWNERS)
def spawner(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> _spawn.Spawner:
    """Each test once per way of spawning."""
    chosen = _spawn._os_spawnp if request.param == "os" else _spawn._spawner()
    if request.param == "libc":
        assert isinstance(chosen, _spawn._LibcSpawn)
    monkeypatch.setattr(_spawn, "_SPAWN", chosen)
    return chosen


def _subprocess(git: Git, *args: str, stdin_text: str | None = None) -> subprocess.CompletedProcess[str]:
    """The call as it was made before the runner: the reference the runner must match."""
    return subprocess.run(
        ["git", "-c", "core.quotepath=off", *args],
        cwd=git.path,
        input=stdin_text,
        stdin=None if stdin_text is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        env=environ.derived(_git_env),
        check=False,
    )


def test_output_and_exit_code_match_subprocess(repo: Git) -> None:
    (repo.path / "crlf.txt").write_bytes(b"one\r\ntwo\rthree\n\xff\n")
    for args in (("status", "--porcelain"), ("diff", "--no-index", "--", "README.md", "crlf.txt"), ("nope",)):
        mine, ref = repo.try_run(*args), _subprocess(repo, *args)
        assert (mine.returncode, mine.stdout, mine.stderr) == (ref.returncode, ref.stdout, ref.stderr)
    assert repo.try_run("nope").returncode != 0


def test_large_input_is_written_while_output_is_read(repo: Git) -> None:
    # More than a pipe buffer both ways: the runner must not deadlock writing stdin while git's stdout fills.
    text = "".join(f"line {i} é\n" for i in range(200_000))
    blob = repo.run("hash-object", "-w", "--stdin", stdin_text=text).strip()
    assert blob == _subprocess(repo, "hash-object", "--stdin", stdin_text=text).stdout.strip()
    assert repo.run("cat-file", "blob", blob) == text
    many = repo.run("cat-file", "--batch", stdin_text=f"{blob}\n" * 4)  # megabytes in and out at once
    assert many.count(text) == 4


def test_input_git_does_not_read_is_not_an_error(repo: Git) -> None:
    proc = repo.try_run("rev-parse", "HEAD", stdin_text="x" * 1_000_000)
    assert proc.returncode == 0
    assert proc.stdout.strip() == repo.head_sha()


def test_environment_overrides_reach_git(repo: Git, tmp_path: Path) -> None:
    index = tmp_path / "other-index"
    repo.run("read-tree", "HEAD", env={"GIT_INDEX_FILE": str(index)})
    assert index.exists()


def test_missing_directory_raises_like_subprocess(tmp_path: Path) -> None:
    with pytest.raises(GitCommandError, match="No such file or directory"):
        Git(tmp_path / "gone").run("status")


def test_time_out_kills_git(repo: Git) -> None:
    text = "x\n" * 5_000_000  # hashing 10 MB takes longer than the time-out
    with pytest.raises(GitCommandError, match="timed out") as info:
        repo.run("hash-object", "--stdin", stdin_text=text, timeout_s=0.01)
    assert info.value.timed_out


def test_fallback_and_spawned_paths_agree(repo: Git) -> None:
    env = environ.derived(_git_env)
    spawned = _spawn.run_git(["log", "--format=%s"], cwd=repo.path, env=env, stdin_text=None, timeout_s=10)
    assert spawned.stdout == _subprocess(repo, "log", "--format=%s").stdout


def _sig_masks(spawn: _spawn.Spawner, tmp_path: Path) -> str:
    out = tmp_path / "status"
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    actions: list[_spawn.FileAction] = [(os.POSIX_SPAWN_OPEN, 1, str(out), flags, 0o600)]
    pid = spawn("grep", ["grep", "-E", "^Sig(Ign|Blk)", "/proc/self/status"], {"PATH": os.environ["PATH"]}, actions)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return out.read_text()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_child_gets_sigpipe_back_and_the_same_signal_state(spawner: _spawn.Spawner, tmp_path: Path) -> None:
    # Python ignores SIGPIPE; git must not inherit that (a `git log | head` style write would not stop).
    masks = _sig_masks(spawner, tmp_path)
    ignored = int(masks.split("SigIgn:")[1].split()[0], 16)
    assert not ignored & (1 << (int(signal.SIGPIPE) - 1))
    assert masks == _sig_masks(_spawn._os_spawnp, tmp_path)


def test_a_missing_program_raises_file_not_found(spawner: _spawn.Spawner) -> None:
    with pytest.raises(FileNotFoundError):
        spawner("no-such-program-pm-agent", ["no-such-program-pm-agent"], {"PATH": os.environ["PATH"]}, [])
