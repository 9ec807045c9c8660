"""The CLI as users run it: a real subprocess of the installed console script."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "examples" / "sample"
BAD = ROOT / "tests" / "plan" / "fixtures" / "bad"


def pm(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("pm-agent", path=str(Path(sys.executable).parent))
    assert exe is not None
    return subprocess.run([exe, *args], capture_output=True, text=True, cwd=cwd, timeout=120, check=False)


def test_help_explains_the_commands() -> None:
    result = pm("--help")
    assert result.returncode == 0
    for command in ("plan", "workflow", "status", "log", "init"):
        assert command in result.stdout


def test_python_m_pm_agent_is_the_same_command_line() -> None:
    module = subprocess.run(
        [sys.executable, "-m", "pm_agent", "--help"], capture_output=True, text=True, timeout=120, check=False
    )
    assert module.returncode == 0, module.stderr
    script = pm("--help")
    commands = ["plan", "status", "reports", "log", "init", "run", "resume", "escalations", "answer", "demo"]
    commands.append("workflow")  # groups are listed after the commands
    for output in (module.stdout, script.stdout):
        # A command's row starts with its name; a wrapped description line starts with blanks.
        rows = [line.split() for line in output.splitlines() if line.startswith("│ ") and line[2] != " "]
        assert [row[1] for row in rows if row[1] in commands] == commands


def test_plan_prints_tasks_tiers_and_queue(tmp_path: Path) -> None:
    result = pm("plan", str(SAMPLE / "plan.md"), "--design", str(SAMPLE / "design.md"), "-C", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "Execution queue: task-4 → " in result.stdout
    assert "CRITICAL: keyword 'public api'" in result.stdout
    data = json.loads(
        pm("plan", str(SAMPLE / "plan.md"), "--json", "-C", str(tmp_path)).stdout,
    )
    assert data["queue"][0] == "task-4"
    assert len(data["tasks"]) == 7
    assert not (tmp_path / ".pm-agent").exists(), "pm-agent plan must write nothing"


@pytest.mark.parametrize(
    ("fixture", "line", "fragment"),
    [
        ("cycle.md", 8, "dependency cycle: Task 2 -> Task 4 -> Task 2"),
        ("unknown_ref.md", None, "unknown"),
        ("duplicate.md", None, "duplicate"),
        ("no_tasks.md", None, "no tasks"),
        ("latin1-plan.txt", None, "UTF-8"),
    ],
)
def test_bad_plans_exit_2_naming_file_and_line(fixture: str, line: int | None, fragment: str, tmp_path: Path) -> None:
    result = pm("plan", str(BAD / fixture), "-C", str(tmp_path))
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: {BAD / fixture}:")
    if line is not None:
        assert f"{fixture}:{line}:" in result.stderr
    assert fragment.lower() in result.stderr.lower()
    assert not (tmp_path / ".pm-agent").exists()


def test_missing_plan_file_is_a_clear_error(tmp_path: Path) -> None:
    result = pm("plan", str(tmp_path / "nope.md"), "-C", str(tmp_path))
    assert result.returncode == 2
    assert "nope.md" in result.stderr


def test_workflow_check_default_passes_and_seed003_fails() -> None:
    ok = pm("workflow", "check")
    assert ok.returncode == 0
    assert "all checks pass" in ok.stdout
    raw = ROOT / "src" / "pm_agent" / "lifecycle" / "workflows" / "seed003.yaml"
    bad = pm("workflow", "check", str(raw))
    assert bad.returncode == 1
    for state in ("planning_approach", "validating_solution", "addressing_feedback"):
        assert f"{state}: unreachable" in bad.stderr


def test_init_writes_config_prints_why_and_refuses_to_overwrite(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\n[tool.pytest.ini_options]\n", encoding="utf-8")
    (tmp_path / "Makefile").write_text("build:\n\t@echo built\n", encoding="utf-8")
    first = pm("init", "-C", str(tmp_path))
    assert first.returncode == 0, first.stderr
    text = (tmp_path / "pm-agent.yaml").read_text(encoding="utf-8")
    assert "-m pytest -q" in text
    assert "      why: pytest: [tool.pytest.ini_options] in pyproject.toml" in first.stdout
    assert "  make test: Makefile has no test target (make -n test failed)" in first.stdout
    again = pm("init", "-C", str(tmp_path))
    assert again.returncode == 2
    assert "exists" in again.stderr


def test_status_without_state_says_how_to_start(tmp_path: Path) -> None:
    result = pm("status", "-C", str(tmp_path))
    assert result.returncode == 0
    assert "pm-agent run" in result.stdout
    assert json.loads(pm("status", "--json", "-C", str(tmp_path)).stdout) == {"run": None, "runs": []}


@pytest.mark.parametrize("command", [["log", "1"], ["reports"]])
def test_log_and_reports_without_state_fail_clearly_and_create_nothing(tmp_path: Path, command: list[str]) -> None:
    result = pm(*command, "-C", str(tmp_path))
    assert result.returncode == 2
    assert "no pm-agent state" in result.stderr
    assert not (tmp_path / ".pm-agent").exists()


# ---------------------------------------------------------------- bad input at the front door

NOTES_PLAN = """\
# notes

### Task 1: First note

**Tier:** low

**Files:**
- Create: `notes/one.md`

**Acceptance criteria:**
- notes/one.md exists
"""


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def notes_repo(path: Path, config: str | None = None, *, commit: bool = True) -> Path:
    """A repository with the notes plan committed (and pm-agent.yaml, left uncommitted, when given)."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "Test")
    git(path, "config", "user.email", "test@example.invalid")
    (path / "docs").mkdir()
    (path / "docs" / "notes.md").write_text(NOTES_PLAN, encoding="utf-8")
    if commit:
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", "plan")
    if config is not None:
        (path / "pm-agent.yaml").write_text(config, encoding="utf-8")
    return path


def branches(repo: Path) -> list[str]:
    return git(repo, "branch", "--format=%(refname:short)").split()


@pytest.mark.parametrize(
    ("config", "extra", "fragment"),
    [
        ("working_branch: main\n", [], "pm-agent.yaml:1: working_branch 'main' is protected"),
        ("retry_budget: 1\nworking_branch: 'pm/a..b'\n", [], "pm-agent.yaml:2: working_branch 'pm/a..b' is not"),
        ("agent:\n  runner: command\n", [], "pm-agent.yaml:1: agent: runner 'command' needs agent.command"),
        ("agent:\n  command: [my-agent]\n", [], "agent.command has no {prompt} placeholder"),
        ("agent:\n  binary: /nonexistent/claude\n", [], "agent: agent binary not found"),
        (None, ["--agent", "command"], "--agent command: agent: runner 'command' needs agent.command"),
        (None, ["--agent", "codex"], "--agent must be claude or command"),
    ],
)
def test_bad_run_input_exits_2_and_leaves_nothing(
    tmp_path: Path, config: str | None, extra: list[str], fragment: str
) -> None:
    repo = notes_repo(tmp_path / "repo", config)
    result = pm("run", "docs/notes.md", "--no-input", *extra, cwd=repo)
    assert result.returncode == 2, result.stdout + result.stderr
    assert fragment in result.stderr
    assert result.stderr.startswith("error: ")
    assert len(result.stderr.strip().splitlines()) == 1, "one clear line, no git output or traceback"
    assert not (repo / ".pm-agent").exists()
    assert branches(repo) == ["main"]


def test_run_outside_a_repository_or_before_the_first_commit_exits_2(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "notes.md").write_text(NOTES_PLAN, encoding="utf-8")
    result = pm("run", "notes.md", cwd=plain)
    assert result.returncode == 2
    assert f"error: {plain}: not a git repository" in result.stderr
    assert not (plain / ".pm-agent").exists()
    empty = notes_repo(tmp_path / "empty", commit=False)
    result = pm("run", "docs/notes.md", "-C", str(empty))
    assert result.returncode == 2
    assert "has no commits yet: agents work from HEAD, so commit your project first" in result.stderr
    assert not (empty / ".pm-agent").exists()
    assert git(empty, "branch", "--list").strip() == ""


def test_uncommitted_changes_are_listed_and_refused(tmp_path: Path) -> None:
    repo = notes_repo(tmp_path / "repo", "retry_budget: 1\n")
    (repo / "docs" / "notes.md").write_text(NOTES_PLAN + "\n", encoding="utf-8")  # the plan itself: fine
    (repo / "src").mkdir()
    (repo / "src" / "wip.py").write_text("x = 1\n", encoding="utf-8")  # untracked counts
    (repo / "README.md").write_text("# new\n", encoding="utf-8")
    result = pm("run", "docs/notes.md", cwd=repo)
    assert result.returncode == 2
    assert "uncommitted changes: README.md, src/wip.py. Agents work from HEAD" in result.stderr
    assert "--allow-dirty" in result.stderr
    assert not (repo / ".pm-agent").exists()
    assert branches(repo) == ["main"]


@pytest.mark.parametrize(
    ("command", "fragment"),
    [
        (["escalations"], "No open escalations."),
        (["answer", "7", "yes"], "there is no escalation #7 to answer"),
        (["resume"], "nothing to resume"),
        (["status"], "No pm-agent state"),
    ],
)
def test_read_only_commands_never_create_state(tmp_path: Path, command: list[str], fragment: str) -> None:
    repo = notes_repo(tmp_path / "repo")
    result = pm(*command, cwd=repo / "docs")  # from a subfolder: the repository's top is meant
    assert fragment in result.stdout + result.stderr
    assert result.returncode == (0 if command[0] in ("escalations", "status") else 2)
    assert not (repo / ".pm-agent").exists()
    assert not (repo / "docs" / ".pm-agent").exists()
