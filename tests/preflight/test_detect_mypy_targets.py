"""What mypy checks when its settings name no files: the paths the project's own `scripts/lint.sh` gives it, or its
`modules`/`packages` settings. Seen on full-stack-fastapi-template: backend/scripts/lint.sh runs `mypy app` with
`strict = true`; init wrote `mypy .`, which also checks tests/ (the project does not type them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.preflight.detect import Slot

from .conftest import Machine, write

LINT_SH = "#!/usr/bin/env bash\n\nset -e\nset -x\n\nmypy app\nruff check app\nruff format app --check\n"
APP = {
    "pyproject.toml": "[tool.mypy]\nstrict = true\n",
    "app/__init__.py": "def answer() -> int:\n    return 42\n",
    "tests/test_app.py": "def test_answer():\n    assert 42\n",  # untyped: strict mypy refuses it
}


def test_the_lint_script_s_paths_are_what_mypy_checks(repo: Path, machine: Machine, tooled_python: Path) -> None:
    write(repo, {**APP, "scripts/lint.sh": LINT_SH})
    chosen = machine.add("python", tooled_python).detect(repo).chosen[Slot.TYPECHECK]
    assert chosen.command == "python -m mypy app"
    assert chosen.reason == (
        "mypy: [tool.mypy] in pyproject.toml; its targets as scripts/lint.sh line 6 (`mypy app`); importable by python"
    )
    result = machine.run(chosen.command, repo)
    assert result.ok, result.output_tail
    everything = machine.run("python -m mypy .", repo)
    assert not everything.ok
    assert "tests/test_app.py" in everything.output_tail


@pytest.mark.parametrize(
    "line",
    [
        "uv run mypy app --strict",  # a flag: pm-agent adds nothing it cannot vouch for
        "mypy $PACKAGE",  # a variable
        "mypy lib",  # no such folder
        "mypy ../app",  # outside the project
        "mypy app && mypy tests",  # two commands
    ],
)
def test_a_lint_script_line_that_is_not_paths_only_is_not_read(
    repo: Path, machine: Machine, tooled_python: Path, line: str
) -> None:
    write(repo, {**APP, "scripts/lint.sh": f"set -e\n{line}\n"})
    assert machine.add("python", tooled_python).detect(repo).chosen[Slot.TYPECHECK].command == "python -m mypy ."


def test_uv_run_before_mypy_in_the_lint_script(repo: Path, machine: Machine, tooled_python: Path) -> None:
    write(repo, {**APP, "scripts/lint.sh": "uv run mypy app  # the package only\n"})
    chosen = machine.add("python", tooled_python).detect(repo).chosen[Slot.TYPECHECK]
    assert chosen.command == "python -m mypy app"


@pytest.mark.parametrize("setting", ["packages = ['app']", "modules = ['app']", "files = ['app']"])
def test_mypy_settings_that_name_what_to_check_take_no_target(
    repo: Path, machine: Machine, tooled_python: Path, setting: str
) -> None:
    write(repo, {**APP, "pyproject.toml": f"[tool.mypy]\nstrict = true\n{setting}\n", "scripts/lint.sh": LINT_SH})
    chosen = machine.add("python", tooled_python).detect(repo).chosen[Slot.TYPECHECK]
    assert chosen.command == "python -m mypy"
    result = machine.run(chosen.command, repo)
    assert result.ok, result.output_tail
