"""Commands that cannot run must not pass for commands that fail on the baseline (their gate would then pass
whatever a task did): a make recipe's missing program, a package manager without its install in the checkout, a
test suite pytest stopped collecting for want of a third-party module. Found by running `pm-agent init` on public
repositories (rich, pydantic-settings, redux-thunk, vite-plugin-react, structlog)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.gates.environment import baseline_entry, judge
from pm_agent.gates.unrunnable import NOT_INSTALLED, baseline_cannot_run, cannot_run_reason
from pm_agent.gates.ward import CommandResult, run_command
from pm_agent.preflight.baseline import fix_hint


def result(output: str, exit_code: int, cwd: Path | None = None) -> CommandResult:
    return CommandResult(cmd="x", cwd=str(cwd or ""), exit_code=exit_code, duration_ms=5, output_tail=output)


def test_a_make_recipe_whose_program_is_missing_cannot_run_and_names_the_program(tmp_path: Path) -> None:
    """make exits 2, not 127, when a recipe's program is missing: the exit status alone read as "already failing"."""
    (tmp_path / "Makefile").write_text("lint:\n\tpm-agent-missing-uv run ruff check\n", encoding="utf-8")
    ran = run_command("make lint", tmp_path, 30)
    assert ran.exit_code == 2
    reason = cannot_run_reason(ran, 30)
    assert reason is not None
    assert reason.startswith("exit 127 in a make recipe: ")
    assert "pm-agent-missing-uv" in reason
    assert fix_hint("lint_command", "make lint", reason, 30) == (
        "install pm-agent-missing-uv, or set environment.lint_command: null"
    )
    entry = baseline_entry("lint_command", "lint", ran, 30)
    assert entry.cannot_run == reason
    assert not entry.blind


def test_a_make_recipe_that_fails_on_its_own_still_ran(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text("lint:\n\tsh -c 'exit 3'\n", encoding="utf-8")
    ran = run_command("make lint", tmp_path, 30)
    assert ran.exit_code == 2
    assert cannot_run_reason(ran, 30) is None


YARN_BERRY = (
    "\x1b[31m\x1b[1mUsage Error\x1b[22m\x1b[39m: Couldn't find the node_modules state file - running an install "
    "might help (findPackageLocation)\n\n$ yarn run [--inspect] [--inspect-brk] <scriptName> ...\n"
)  # Yarn 4.4 in a fresh worktree of a node-modules-linker project (redux-thunk), exit 1
PNPM = (
    " WARN  Local package.json exists, but node_modules missing, did you mean to install?\n"
    "sh: 1: vitest: not found\n ELIFECYCLE  Test failed. See above for more details.\n"
)  # pnpm 10 in a fresh worktree of a workspace (vite-plugin-react), exit 127 in a package's script


@pytest.mark.parametrize(
    ("output", "exit_code", "manager", "install"),
    [
        (YARN_BERRY, 1, "yarn", "yarn install --immutable"),
        (PNPM, 1, "pnpm", "pnpm install --frozen-lockfile --prefer-offline"),
        (PNPM, 127, "pnpm", "pnpm install --frozen-lockfile --prefer-offline"),
    ],
)
def test_a_package_manager_without_its_install_in_the_checkout_cannot_run(
    output: str, exit_code: int, manager: str, install: str
) -> None:
    reason = cannot_run_reason(result(output, exit_code), 30)
    assert reason is not None
    assert reason.startswith(f"{NOT_INSTALLED}: ")
    assert "\x1b" not in reason
    assert fix_hint("test_command", f"{manager} test", reason, 30) == (
        f"set environment.setup_command: {install} (it runs in every new worktree before the gates), "
        "or set environment.test_command: null"
    )


def test_pnpms_warning_on_a_command_that_passed_is_nothing() -> None:
    assert cannot_run_reason(result(" WARN  Local package.json exists, but node_modules missing\nok\n", 0), 30) is None


def test_the_line_naming_the_missing_program_is_kept_not_the_last_line() -> None:
    output = "sh: 1: vitest: not found\n ELIFECYCLE  Test failed. See above for more details.\n"
    assert cannot_run_reason(result(output, 127), 30) == "exit 127: sh: 1: vitest: not found"


COLLECTION = """\
==================================== ERRORS ====================================
_____________________ ERROR collecting tests/test_dev.py ______________________
ImportError while importing test module '/w/tests/test_dev.py'.
E   ModuleNotFoundError: No module named '{module}'
=========================== short test summary info ============================
ERROR tests/test_dev.py
!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
"""


def test_a_suite_stopped_for_a_third_party_module_cannot_run_on_the_baseline(tmp_path: Path) -> None:
    (tmp_path / "src" / "structlog").mkdir(parents=True)
    ran = result(COLLECTION.format(module="time_machine"), 2, tmp_path)
    assert baseline_cannot_run(ran, 30) == (
        "the test environment lacks time_machine (pytest stopped while collecting: no test ran)"
    )
    assert cannot_run_reason(ran, 30) is None  # in a task's gate run: an import the task added is the task's


@pytest.mark.parametrize("where", ["structlog", "src/structlog", "backend/structlog", "structlog.py"])
def test_the_projects_own_module_failing_to_import_is_a_failure_not_a_missing_install(
    tmp_path: Path, where: str
) -> None:
    target = tmp_path / where
    if where.endswith(".py"):
        target.write_text("", encoding="utf-8")
    else:
        target.mkdir(parents=True)
    ran = result(COLLECTION.format(module="structlog.dev"), 2, tmp_path)
    assert baseline_cannot_run(ran, 30) is None


def test_a_test_failure_is_not_a_collection_stop(tmp_path: Path) -> None:
    output = COLLECTION.format(module="time_machine").replace("Interrupted: 1 error during collection", "1 failed")
    assert baseline_cannot_run(result(output, 1, tmp_path), 30) is None
    assert baseline_cannot_run(result(output, 2, tmp_path), 30) is None


def test_the_gate_escalates_a_command_that_cannot_run_instead_of_comparing_exit_statuses() -> None:
    baseline = baseline_entry("test_command", "tests", result(YARN_BERRY, 1), 30)
    verdict = judge(result(YARN_BERRY, 1), baseline, mode="ratchet", timeout_s=30)
    assert not verdict.passed
    assert verdict.rule == "environment"
