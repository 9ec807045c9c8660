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
