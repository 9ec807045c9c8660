"""Python linters configured only as pre-commit hooks (`.pre-commit-config.yaml`): found, run as checks that fix
nothing, with the hook's own flags and folders.

The configs are the shapes public projects use (astral-sh/ruff-pre-commit's `ruff` and `ruff-check` with
`args: [--fix]`, mirrors-mypy with `--strict` or no args, pycqa/flake8 with a line length, local hooks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.preflight.detect import Slot

from .conftest import Machine, write

RUFF_HOOK = """\
repos:
  - repo: https://github.com/pre-commit/pre-commit-hooks
    rev: v5.0.0
    hooks:
      - id: trailing-whitespace
  - repo: https://github.com/astral-sh/ruff-pre-commit
    rev: v0.13.0
    hooks:
      # Run the linter.
      - id: {id}
        args: [ --fix, --exit-non-zero-on-fix, --line-length=100 ]
      - id: ruff-format
"""


@pytest.mark.parametrize("hook_id", ["ruff-check", "ruff"])
def test_ruff_hook_runs_ruff_check_with_its_flags_and_no_fix(
    repo: Path, machine: Machine, tooled_python: Path, hook_id: str
) -> None:
    write(repo, {".pre-commit-config.yaml": RUFF_HOOK.format(id=hook_id), "app.py": "import os\n"})
    chosen = machine.add("python", tooled_python).detect(repo).chosen[Slot.LINT]
    assert chosen.command == "python -m ruff check --no-fix --line-length=100 ."
    # The hook pins ruff 0.13.0: the note on another version is test_detect_python's to check.
    assert chosen.reason.startswith(f"ruff: hook {hook_id} in .pre-commit-config.yaml line 10; importable by python")
    result = machine.run(chosen.command, repo)
    assert result.exit_code == 1
    assert "F401" in result.output_tail  # the unused import: found, not fixed
    assert (repo / "app.py").read_text(encoding="utf-8") == "import os\n"


def test_a_ruff_settings_file_wins_over_the_hook(repo: Path, machine: Machine, tooled_python: Path) -> None:
    write(repo, {".pre-commit-config.yaml": RUFF_HOOK.format(id="ruff"), "ruff.toml": "line-length = 90\n"})
    chosen = machine.add("python", tooled_python).detect(repo).chosen[Slot.LINT]
    assert chosen.command == "python -m ruff check --no-fix ."
    assert chosen.reason.startswith("ruff: ruff.toml; importable by python")


@pytest.mark.parametrize(
    ("hook", "command", "line"),
    [
        ("      - id: mypy\n        args: [--strict]\n        files: ^src/\n", "python -m mypy --strict src", 5),
        # mirrors-mypy's own default args when the config gives none; a src layout's src, as with [tool.mypy]
        ("      - id: mypy\n", "python -m mypy --ignore-missing-imports src", 5),
        (
            "      - id: mypy\n        files: ^(src|tests)/.*\\.py$\n",
            "python -m mypy --ignore-missing-imports src tests",
            5,
        ),
    ],
)
def test_mypy_hook_is_the_typecheck(
    repo: Path, machine: Machine, tooled_python: Path, hook: str, command: str, line: int
) -> None:
    config = "repos:\n  - repo: https://github.com/pre-commit/mirrors-mypy\n    rev: v1.13.0\n    hooks:\n" + hook
    write(repo, {".pre-commit-config.yaml": config, "src/app.py": "x: int = 1\n", "tests/t.py": "y: int = 2\n"})
    chosen = machine.add("python", tooled_python).detect(repo).chosen[Slot.TYPECHECK]
    assert chosen.command == command
    assert chosen.reason.startswith(f"mypy: hook mypy in .pre-commit-config.yaml line {line}; importable by python")
    assert machine.run(chosen.command, repo).ok


def test_flake8_hook_keeps_its_flags(repo: Path, machine: Machine, bare_python: Path) -> None:
    config = (
        "repos:\n- repo: https://github.com/pycqa/flake8\n  rev: 7.1.1\n  hooks:\n"
        "  - id: flake8\n    args: ['--max-line-length=100', '--extend-ignore=E203 W503']\n"
    )
    write(repo, {".pre-commit-config.yaml": config, "app.py": "x = 1\n"})
    machine.script("flake8", "exit 0")
    chosen = machine.add("python", bare_python).detect(repo).chosen[Slot.LINT]
    assert chosen.command == "flake8 --max-line-length=100 '--extend-ignore=E203 W503'"
    assert chosen.reason.startswith("flake8: hook flake8 in .pre-commit-config.yaml line 5; flake8 on PATH")


def test_local_hooks_give_their_entry_s_flags_or_nothing(repo: Path, machine: Machine, tooled_python: Path) -> None:
    config = """\
repos:
  - repo: local
    hooks:
      - id: ruff
        name: ruff
        entry: ruff check --fix --select=E,F
        language: system
        types: [python]
      - id: mypy
        name: mypy
        entry: poetry run mypy
        language: system
  - repo: https://github.com/pre-commit/mirrors-mypy
    rev: v1.3.0
    hooks:
      - id: pyright
        entry: bash -c 'poetry run pyright .'
        language: system
"""
    write(repo, {".pre-commit-config.yaml": config, "app.py": "x = 1\n"})
    detection = machine.add("python", tooled_python).detect(repo)
    assert detection.chosen[Slot.LINT].command == "python -m ruff check --no-fix --select=E,F ."
    # `poetry run mypy`, `bash -c '...'` (an entry replacing the hook repository's own): not commands to take apart
    assert Slot.TYPECHECK not in detection.chosen


def test_local_hooks_running_ruff_through_the_projects_runner(
    repo: Path, machine: Machine, tooled_python: Path
) -> None:
    """full-stack-fastapi-template's hooks: ids of their own, ruff through `uv run`; mypy through a runner stays
    unread (what it checks depends on the files pre-commit passes)."""
    config = """\
repos:
  - repo: local
    hooks:
      - id: local-ruff-check
        entry: uv run ruff check --force-exclude --fix --exit-non-zero-on-fix
        language: unsupported
      - id: local-ruff-format
        entry: uv run ruff format --force-exclude --exit-non-zero-on-format
        language: unsupported
      - id: local-mypy
        entry: uv run mypy backend/app
        language: unsupported
"""
    write(repo, {".pre-commit-config.yaml": config, "app.py": "x = 1\n"})
    detection = machine.add("python", tooled_python).detect(repo)
    lint, fmt = detection.chosen[Slot.LINT], detection.chosen[Slot.FORMAT]
    assert lint.command == "python -m ruff check --no-fix --force-exclude ."
    assert lint.reason.startswith("ruff: hook local-ruff-check in .pre-commit-config.yaml line 4;")
    assert fmt.command == (
        "python -m ruff format --check --extend-exclude '*.md' --force-exclude --exit-non-zero-on-format ."
    )
    assert fmt.reason.startswith("ruff: hook local-ruff-format in .pre-commit-config.yaml line 7;")
    assert Slot.TYPECHECK not in detection.chosen


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("repos:\n  - repo: x\n    hooks: [\n", "not valid YAML (while parsing a flow node)"),
        ("- id: ruff\n", "no `repos:` list; its hooks were not read"),
    ],
)
def test_a_config_that_cannot_be_read_is_said_and_skipped(
    repo: Path, machine: Machine, tooled_python: Path, text: str, why: str
) -> None:
    write(repo, {".pre-commit-config.yaml": text, "pyproject.toml": "[project]\nname = 'x'\n"})
    detection = machine.add("python", tooled_python).detect(repo)
    assert Slot.LINT not in detection.chosen
    notes = {r.command: r.why for r in detection.rejected}
    assert notes[".pre-commit-config.yaml"].startswith(why)
