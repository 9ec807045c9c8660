"""The ratchet with real tools: a command's run in a task judged against its run on the baseline."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pm_agent.gates.environment import (
    KEEP_OUTPUT_BYTES,
    BaselineCommand,
    baseline_entry,
    cannot_run_reason,
    judge,
)
from pm_agent.gates.ward import CommandResult, run_command

PY = sys.executable
RUFF = f"{PY} -m ruff check --no-cache --output-format concise ."
LEGACY = 'import os\n\n\ndef legacy() -> int:\n    return 1\n'


def run(cmd: str, cwd: Path, timeout_s: float = 60) -> CommandResult:
    return run_command(cmd, cwd, timeout_s, keep_output_bytes=KEEP_OUTPUT_BYTES)


def baseline_of(cmd: str, cwd: Path) -> BaselineCommand:
    return baseline_entry("lint_command", "lint", run(cmd, cwd), 60)


@pytest.fixture
def legacy(tmp_path: Path) -> Path:
    """Two copies of a project with one pre-existing ruff finding: the baseline and a task's worktree."""
    for name in ("base", "task"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "legacy.py").write_text(LEGACY, encoding="utf-8")
    return tmp_path


def test_a_pre_existing_finding_does_not_fail_the_task_even_when_its_line_moves(legacy: Path) -> None:
    before = baseline_of(RUFF, legacy / "base")
    assert (before.exit_code, before.parser, before.findings) == (1, "ruff", 1)
    (legacy / "task" / "legacy.py").write_text('"""Docs."""\n\n\n' + LEGACY, encoding="utf-8")
    verdict = judge(run(RUFF, legacy / "task"), before, mode="ratchet", timeout_s=60)
    assert verdict.passed, verdict.lines
    assert (verdict.rule, verdict.new, verdict.preexisting) == ("findings", 0, 1)
    assert any("pre-existing findings (1)" in line for line in verdict.lines)


def test_one_new_finding_fails_and_is_the_only_one_named_as_new(legacy: Path) -> None:
    before = baseline_of(RUFF, legacy / "base")
    (legacy / "task" / "feature.py").write_text("import sys\n\n\ndef f() -> int:\n    return 2\n", encoding="utf-8")
    verdict = judge(run(RUFF, legacy / "task"), before, mode="ratchet", timeout_s=60)
    assert not verdict.passed
    assert (verdict.rule, verdict.new, verdict.preexisting) == ("findings", 1, 1)
    new_at = next(i for i, line in enumerate(verdict.lines) if line.startswith("NEW findings (1)"))
    old_at = next(i for i, line in enumerate(verdict.lines) if line.startswith("pre-existing findings (1)"))
    assert "feature.py" in verdict.lines[new_at + 1]
    assert "F401" in verdict.lines[new_at + 1]
    assert "legacy.py" in verdict.lines[old_at + 1]
    assert all("legacy.py" not in line for line in verdict.lines[new_at + 1 : old_at])


def test_paths_of_another_worktree_compare_equal(legacy: Path) -> None:
    """Tools that print absolute paths (the baseline ran in another worktree) still match the same finding."""
    cmd = "echo \"$PWD/legacy.py:1:8: F401 'os' imported but unused\"; exit 1"  # as pyright or eslint print paths
    before = baseline_of(cmd, legacy / "base")
    assert str(legacy / "base") not in before.output, "the baseline's own worktree path is not stored"
    after = run(cmd, legacy / "task")
    assert str(legacy / "task") in (after.output or "")
    verdict = judge(after, before, mode="ratchet", timeout_s=60)
    assert verdict.passed, verdict.lines
    assert (verdict.rule, verdict.preexisting, verdict.new) == ("findings", 1, 0)


def test_strict_mode_fails_on_any_failure(legacy: Path) -> None:
    before = baseline_of(RUFF, legacy / "base")
    verdict = judge(run(RUFF, legacy / "task"), before, mode="strict", timeout_s=60)
    assert not verdict.passed
    assert verdict.rule == "strict"
    assert "environment.baseline is strict" in verdict.lines[0]


def test_a_command_that_passed_on_the_baseline_must_still_pass(tmp_path: Path) -> None:
    (tmp_path / "ok.py").write_text("X = 1\n", encoding="utf-8")
    before = baseline_of(RUFF, tmp_path)
    assert before.ok
    (tmp_path / "bad.py").write_text("import os\n", encoding="utf-8")
    verdict = judge(run(RUFF, tmp_path), before, mode="ratchet", timeout_s=60)
    assert not verdict.passed
    assert "it passed on the baseline" in verdict.lines[0]


def test_clean_now_passes_and_counts_what_was_fixed(legacy: Path) -> None:
    before = baseline_of(RUFF, legacy / "base")
    (legacy / "task" / "legacy.py").write_text(LEGACY.replace("import os\n", ""), encoding="utf-8")
    verdict = judge(run(RUFF, legacy / "task"), before, mode="ratchet", timeout_s=60)
    assert (verdict.passed, verdict.rule) == (True, "clean")
    assert "fixed 1 pre-existing finding(s)" in verdict.lines[0]


def test_unparsable_output_falls_back_to_exit_status_and_says_so(tmp_path: Path) -> None:
    cmd = "echo 'something odd happened'; exit 3"
    before = baseline_entry("build_command", "build", run(cmd, tmp_path), 60)
    assert before.parser is None
    verdict = judge(run(cmd, tmp_path), before, mode="ratchet", timeout_s=60)
    assert (verdict.passed, verdict.rule) == (True, "exit-status")
    worse = judge(run("echo 'something odd happened'; exit 0", tmp_path), before, mode="ratchet", timeout_s=60)
    assert worse.rule == "clean"


@pytest.mark.parametrize(
    ("cmd", "reason"),
    [
        ("no-such-tool-xyz --check", "exit 127"),
        (f"{PY} -m no_such_module_xyz", "No module named no_such_module_xyz"),
        ("printf 'npm error Missing script: \"lint\"\\n'; exit 1", 'package.json has no script "lint"'),
        ("printf \"make: *** No rule to make target 'test'.  Stop.\\n\"; exit 2", "the Makefile has no target test"),
        ("printf 'error: no such command: `clippy`\\n'; exit 101", "no such command: clippy"),
    ],
)
def test_commands_that_cannot_run_are_environment_failures(tmp_path: Path, cmd: str, reason: str) -> None:
    result = run(cmd, tmp_path)
    assert reason in (cannot_run_reason(result, 60) or "")
    verdict = judge(result, None, mode="ratchet", timeout_s=60)
    assert (verdict.passed, verdict.rule) == (False, "environment")
    assert verdict.environment_failure is not None


def test_an_import_error_inside_the_code_under_test_is_a_failure_not_an_environment_failure(tmp_path: Path) -> None:
    (tmp_path / "test_x.py").write_text("import missing_dependency_xyz\n\n\ndef test_x():\n    pass\n")
    result = run(f"{PY} -m pytest -q -p no:cacheprovider", tmp_path)
    assert result.exit_code != 0
    assert "No module named 'missing_dependency_xyz'" in (result.output or "")
    assert cannot_run_reason(result, 60) is None


def test_a_time_out_is_an_environment_failure(tmp_path: Path) -> None:
    result = run_command("sleep 5", tmp_path, 0.3)
    assert cannot_run_reason(result, 0.3) == "timed out after 0.3s"
