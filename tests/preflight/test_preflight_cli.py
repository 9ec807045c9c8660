"""The preflight as a user meets it: `pm-agent run` on a repository whose environment cannot run.

Every case stops before any agent session with exit 2, names the config key, the command, the error
and the fix, and leaves nothing behind: no `.pm-agent/`, no working branch, no worktree.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import pm_agent

PY = sys.executable

PLAN = textwrap.dedent(
    """\
    # tiny

    ### Task 1: Greeting

    **Files:**
    - Create: `src/tiny/greet.py`

    **Acceptance criteria:**
    - greet() returns hello
    """
)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


LOGGED_IN = {"ANTHROPIC_API_KEY": "unused", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}


def pm(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("pm-agent", path=str(Path(sys.executable).parent))
    assert exe is not None
    # No model server on purpose: a session that starts would fail loudly, not pass silently. The key makes the CLI
    # logged in as far as `claude auth status` can tell, which asks no server.
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd)} | LOGGED_IN
    return subprocess.run([exe, *args], capture_output=True, text=True, cwd=cwd, timeout=120, check=False, env=env)


def make_repo(tmp_path: Path, config: str) -> Path:
    repo = tmp_path / "tiny"
    (repo / "src" / "tiny").mkdir(parents=True)
    (repo / "src" / "tiny" / "__init__.py").write_text("import os\n", encoding="utf-8")  # one lint finding
    (repo / "docs").mkdir()
    (repo / "docs" / "plan.md").write_text(PLAN, encoding="utf-8")
    (repo / "pm-agent.yaml").write_text(config, encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "Test User")
    git(repo, "config", "user.email", "test@example.com")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial")
    return repo


def assert_left_nothing(repo: Path) -> None:
    assert not (repo / ".pm-agent").exists(), "a failed preflight must leave no state behind"
    assert git(repo, "branch", "--list", "pm/*").strip() == "", "a failed preflight must create no branch"
    assert len(git(repo, "worktree", "list").splitlines()) == 1, "a failed preflight must leave no worktree"


@pytest.mark.parametrize(
    ("key", "command", "error", "fix"),
    [
        ("lint_command", "ruff-not-installed check .", "exit 127", "install ruff-not-installed, or set"),
        ("typecheck_command", f"{PY} -m no_such_checker src", "No module named no_such_checker", "install no_such"),
        ("test_command", "make test", "the Makefile has no target test", "add the target to the Makefile"),
    ],
)
def test_a_command_that_cannot_run_stops_the_run_before_any_session(
    tmp_path: Path, key: str, command: str, error: str, fix: str
) -> None:
    if command == "make test":
        (tmp_path / "Makefile").write_text("", encoding="utf-8")
    repo = make_repo(tmp_path, f"environment:\n  {key}: {command}\n")
    if command == "make test":
        (repo / "Makefile").write_text("all:\n\ttrue\n", encoding="utf-8")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "makefile")
    result = pm("run", "docs/plan.md", cwd=repo)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"pm-agent.yaml:2: environment.{key} cannot run on the baseline commit" in result.stderr
    assert f"`{command}`" in result.stderr
    assert error in result.stderr
    assert f"fix: {fix}" in result.stderr
    assert f"set environment.{key}: null" in result.stderr or "Makefile" in fix
    assert "session" not in result.stdout.lower()
    assert_left_nothing(repo)


def test_a_command_that_times_out_on_the_baseline_stops_the_run(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "environment:\n  gate_timeout_s: 1\n  build_command: sleep 30\n")
    result = pm("run", "docs/plan.md", cwd=repo)
    assert result.returncode == 2, result.stderr
    assert "environment.build_command cannot run" in result.stderr
    assert "timed out after 1s" in result.stderr
    assert "raise environment.gate_timeout_s (now 1)" in result.stderr
    assert_left_nothing(repo)


def test_strict_mode_refuses_a_baseline_that_already_fails(tmp_path: Path) -> None:
    lint = f"{PY} -m ruff check --no-cache src"
    repo = make_repo(tmp_path, f"environment:\n  lint_command: {lint}\n  baseline: strict\n")
    result = pm("run", "docs/plan.md", cwd=repo)
    assert result.returncode == 2, result.stderr
    assert "environment.lint_command already fails on the baseline commit" in result.stderr
    assert "environment.baseline is strict" in result.stderr
    assert "F401" in result.stderr, "the failing output's tail is shown"
    assert "set environment.baseline: ratchet" in result.stderr
    assert_left_nothing(repo)


def test_a_failing_baseline_is_not_a_blocker_in_ratchet_mode(tmp_path: Path) -> None:
    """The same repository under the default (ratchet) passes the preflight: the failure is the baseline."""
    lint = f"{PY} -m ruff check --no-cache src"
    # runner: command with a command that fails at once: the run gets past the preflight, then the task fails.
    agent = 'agent:\n  runner: command\n  command: [/bin/false, "{prompt}"]\n'
    config = f"environment:\n  lint_command: {lint}\n" + agent
    repo = make_repo(tmp_path, config)
    result = pm("run", "docs/plan.md", cwd=repo)
    assert "cannot run" not in result.stderr
    assert "already failing, gates compare with it (ratchet): lint (exit 1, 1 finding(s) (ruff))" in result.stdout
    assert (repo / ".pm-agent" / "state.db").exists()


def test_a_failing_baseline_pm_agent_cannot_read_is_said_to_hide_new_failures(tmp_path: Path) -> None:
    """A command failing on the baseline with output no parser reads: its gate can see only its exit status change,
    and `run` says so (`init` too), rather than promising that only new findings fail."""
    check = "sh -c 'echo 3 checks broke; exit 1'"
    agent = 'agent:\n  runner: command\n  command: [/bin/false, "{prompt}"]\n'
    repo = make_repo(tmp_path, f"environment:\n  test_command: {check}\n" + agent)
    result = pm("run", "docs/plan.md", cwd=repo)
    assert "already failing, gates compare with it (ratchet): tests (exit 1)" in result.stdout
    said = " ".join(result.stdout.split())  # the console may wrap the line
    assert (
        f"baseline: tests: `{check}` fails already; pm-agent reads no findings in its output, so its gate sees only "
        "a change of exit status, not a new failure inside it" in said
    )
    lint = f"{PY} -m ruff check --no-cache src"  # ruff's findings are read: no such warning for it
    repo = make_repo(tmp_path / "read", f"environment:\n  lint_command: {lint}\n" + agent)
    assert "fails already; pm-agent reads no findings" not in pm("run", "docs/plan.md", cwd=repo).stdout


def test_a_kill_during_the_baseline_leaves_no_worktree_after_resume(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "environment:\n  build_command: sleep 60\n")
    exe = shutil.which("pm-agent", path=str(Path(sys.executable).parent))
    assert exe is not None
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)} | LOGGED_IN
    proc = subprocess.Popen([exe, "run", "docs/plan.md"], cwd=repo, env=env, stdout=subprocess.DEVNULL)
    try:
        scratch = repo / ".pm-agent" / "preflight" / "baseline"
        for _ in range(600):  # the baseline worktree appears, then `sleep 60` runs in it
            if (scratch / "pm-agent.yaml").exists():
                break
            time.sleep(0.05)
        assert (scratch / "pm-agent.yaml").exists()
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert len(git(repo, "worktree", "list").splitlines()) == 2, "the kill left the baseline worktree"
    result = pm("resume", cwd=repo)
    assert result.returncode == 2
    assert "nothing to resume" in result.stderr
    assert len(git(repo, "worktree", "list").splitlines()) == 1
    assert not (repo / ".pm-agent" / "preflight").exists()


def test_init_runs_the_preflight_on_what_it_wrote(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "")
    (repo / "pyproject.toml").write_text("[project]\nname = 'tiny'\n\n[tool.ruff]\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "ruff settings")
    exe = shutil.which("pm-agent", path=str(Path(sys.executable).parent))
    assert exe is not None
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(tmp_path)}
    result = subprocess.run(
        [exe, "init", "--force"], cwd=repo, capture_output=True, text=True, timeout=120, check=False, env=env
    )
    assert result.returncode == 0, result.stderr
    head = git(repo, "rev-parse", "HEAD").strip()
    assert f"preflight on {head[:12]} (what `pm-agent run` checks before any agent starts):" in result.stdout
    assert "  lint: exit 1, 1 finding(s) (ruff): already failing; gates will fail only on new findings" in result.stdout
    assert not (repo / ".pm-agent").exists(), "init's preflight leaves no state behind"
    # The agent as a run will find it: the wheel's Claude Code, logged out here; logged in by a key, nothing to say.
    assert "agent: NOT READY: Claude Code (" in result.stdout
    assert "is not logged in (`claude auth status`: loggedIn false, authMethod none)" in result.stdout
    assert "    fix: log it in (run `claude`, then /login), or export ANTHROPIC_API_KEY" in result.stdout
    again = subprocess.run(
        [exe, "init", "--force"], cwd=repo, capture_output=True, text=True, timeout=120, check=False,
        env=env | LOGGED_IN,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "agent:" not in again.stdout
    assert not (repo / ".pm-agent").exists()


def test_a_clone_missing_objects_is_said_so_by_init_and_refused_by_run(tmp_path: Path) -> None:
    """A partial clone offline, or a damaged one: git cannot check out the baseline, so no command can run on it."""
    repo = make_repo(tmp_path, "environment:\n  test_command: 'true'\n")
    (repo / "data.bin").write_text("large\n", encoding="utf-8")
    (repo / "Makefile").write_text("test:\n\ttrue\n", encoding="utf-8")  # what init finds to run
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "data")
    blob = git(repo, "rev-parse", "HEAD:data.bin").strip()
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    head = git(repo, "rev-parse", "HEAD").strip()[:12]
    said = f"cannot check out {head} to run the environment commands on it: git says 'error: unable to read sha1 file"
    result = pm("run", "docs/plan.md", cwd=repo)
    assert result.returncode == 2, result.stdout + result.stderr
    assert said in result.stderr
    assert "(missing objects? `git fsck` names them; fetch them or clone again)" in result.stderr
    assert "Traceback" not in result.stderr
    assert_left_nothing(repo)
    init = pm("init", "--force", cwd=repo)
    assert init.returncode == 0, init.stderr
    assert f"  NOT READY: {said}" in init.stdout
    assert "Traceback" not in init.stderr
    assert not (repo / ".pm-agent").exists()


def test_init_prints_the_format_check_and_its_preflight_runs_it_on_the_baseline(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "")
    pyproject = "[project]\nname = 'tiny'\n\n[tool.ruff.format]\n\n[tool.black]\n"
    (repo / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    (repo / "tiny.py").write_text("x = {  'a':1 }\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "unformatted")
    exe = shutil.which("pm-agent", path=str(Path(sys.executable).parent))
    assert exe is not None
    # The code under test, not whichever checkout the venv's pm-agent was installed from.
    code = str(Path(pm_agent.__file__).resolve().parents[1])
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": code}
    env |= LOGGED_IN
    result = subprocess.run(
        [exe, "init", "--force"], cwd=repo, capture_output=True, text=True, timeout=120, check=False, env=env
    )
    assert result.returncode == 0, result.stderr
    assert "  format_command: python -m ruff format --check --extend-exclude '*.md' .\n" in result.stdout
    assert "      why: ruff: [tool.ruff.format] in pyproject.toml; importable by python\n" in result.stdout
    assert "  python -m black --check .: [tool.black] in pyproject.toml, but ruff format comes first" in result.stdout
    written = (repo / "pm-agent.yaml").read_text(encoding="utf-8")
    assert "format_command: python -m ruff format --check --extend-exclude '*.md' ." in written
    assert "  format: exit 1" in result.stdout, result.stdout  # runs on the baseline, where tiny.py is unformatted
    # A formatter that is not installed cannot run: said so, with the fix, as for the other tools.
    (repo / "pyproject.toml").write_text("[project]\nname = 'tiny'\n\n[tool.black]\n", encoding="utf-8")
    git(repo, "commit", "-q", "-am", "black")
    result = subprocess.run(
        [exe, "init", "--force"], cwd=repo, capture_output=True, text=True, timeout=120, check=False, env=env
    )
    assert result.returncode == 0, result.stderr
    assert "  format_command: python -m black --check .\n" in result.stdout
    assert "      NOT READY: not installed: black is not importable by python" in result.stdout
    assert "  format: CANNOT RUN: No module named black" in result.stdout, result.stdout
    assert "install black, or set environment.format_command: null" in result.stdout
    assert not (repo / ".pm-agent").exists()
