"""Projects whose environment poetry or pipenv keeps outside the repository (`~/.cache/pypoetry/virtualenvs/...`):
their interpreter by absolute path, not the `python` on PATH that lacks the project's dependencies.

The `poetry` and `pipenv` here are stand-ins on the test's PATH that answer as the real ones do (measured with
poetry 2.5.1 and pipenv 2026.10.3: `poetry env info --executable` prints the interpreter, or nothing with exit 1
before `poetry install`; `pipenv --py` prints it, or says "No virtualenv has been created for this project ...
yet!" with exit 1); the environment they name is a real venv, whose pytest runs the tests.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from pm_agent.preflight.detect import Slot

from .conftest import Machine, make_venv, rejected_for, write

PYPROJECT = '[tool.poetry]\nname = "calc"\nversion = "0.1.0"\n\n[tool.pytest.ini_options]\n'
TEST = "def test_one():\n    assert 1 == 1\n"
HATCH = '[project]\nname = "calc"\n\n[tool.hatch.envs.default]\ndependencies = ["pytest"]\n'
# What the real tools do with an activated virtualenv (pm-agent's own, say): report it instead of the project's.
LEAK_CHECK = '[ -z "$VIRTUAL_ENV" ] || { echo "$VIRTUAL_ENV/bin/python"; exit 0; }\n'


@pytest.fixture(scope="module")
def project_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The environment the manager keeps for the project, outside it, with pytest."""
    return make_venv(tmp_path_factory.mktemp("pypoetry") / "virtualenvs" / "calc-HmtJqRnM-py3.11", tooled=True)


@pytest.mark.parametrize(
    ("manager", "files", "answer"),
    [
        ("poetry", {"pyproject.toml": PYPROJECT, "poetry.lock": ""}, 'shift 3; echo "{exe}"'),
        ("poetry", {"pyproject.toml": PYPROJECT}, 'echo "{exe}"'),  # [tool.poetry], no lock file yet
        (
            "pipenv",
            {"Pipfile": "[packages]\n", "pytest.ini": "[pytest]\n"},
            '[ "$PIPENV_IGNORE_VIRTUALENVS" = 1 ] || exit 9; echo "{exe}"',
        ),
        # hatch prints the environment's folder (`hatch env find`)
        ("hatch", {"pyproject.toml": HATCH, "pytest.ini": "[pytest]\n"}, 'echo "{folder}"'),
    ],
)
def test_the_managers_environment_runs_the_tests_by_absolute_path(
    repo: Path,
    machine: Machine,
    tooled_python: Path,
    project_env: Path,
    manager: str,
    files: dict[str, str],
    answer: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("VIRTUAL_ENV", str(tooled_python.parent.parent))  # pm-agent run from an activated venv
    write(repo, {**files, "tests/test_one.py": TEST})
    answer = answer.format(exe=project_env, folder=project_env.parent.parent)
    machine.script(manager, LEAK_CHECK + answer).add("python", tooled_python)
    chosen = machine.detect(repo).chosen[Slot.TEST]
    assert chosen.command == f"{shlex.quote(str(project_env))} -m pytest -q"
    assert f"importable by {manager}'s environment ({project_env})" in chosen.reason
    assert chosen.problem is None
    result = machine.run(chosen.command, repo)
    assert "1 passed" in result.output_tail


@pytest.mark.parametrize(
    ("manager", "files", "problem"),
    [
        (
            "poetry",
            {"pyproject.toml": PYPROJECT, "poetry.lock": ""},
            "poetry.lock: poetry has no environment for this project yet (`poetry env info --executable`: exit 1);"
            " run `poetry install`",
        ),
        (
            "pipenv",
            {"Pipfile": "[packages]\n"},
            "Pipfile: pipenv has no environment for this project yet (`pipenv --py`: exit 1);"
            " run `pipenv install --dev`",
        ),
        (
            "hatch",
            {"pyproject.toml": HATCH},
            "[tool.hatch.envs] in pyproject.toml: hatch has no environment for this project yet (`hatch env find`:"
            " /nowhere/calc/bin/python does not exist); run `hatch env create`",
        ),
    ],
)
def test_no_environment_yet_says_how_to_make_it(
    repo: Path, machine: Machine, tooled_python: Path, manager: str, files: dict[str, str], problem: str
) -> None:
    write(repo, {**files, "tests/test_one.py": TEST})
    said = (
        "echo /nowhere/calc"
        if manager == "hatch"
        else "echo 'No virtualenv has been created for this project yet!' >&2; exit 1"
    )
    machine.script(manager, said)
    chosen = machine.add("python", tooled_python).detect(repo).chosen[Slot.TEST]
    assert chosen.command == "python -m pytest -q"  # what runs meanwhile: the tests fail on their imports
    assert chosen.problem == problem


def test_without_the_manager_on_path_the_interpreter_on_path_is_used(
    repo: Path, machine: Machine, tooled_python: Path
) -> None:
    write(repo, {"pyproject.toml": PYPROJECT, "poetry.lock": "", "tests/test_one.py": TEST})
    detection = machine.add("python", tooled_python).detect(repo)
    assert detection.chosen[Slot.TEST].command == "python -m pytest -q"
    assert detection.chosen[Slot.TEST].problem is None
    why = "poetry.lock, but poetry is not on PATH: its environment cannot be found"
    assert rejected_for(detection, None) == {"poetry": why}


def test_the_repository_s_own_venv_comes_first(repo: Path, machine: Machine, project_env: Path) -> None:
    """poetry with `virtualenvs.in-project`, uv and pdm keep it in .venv: no need to ask."""
    write(repo, {"pyproject.toml": PYPROJECT, "poetry.lock": "", "tests/test_one.py": TEST})
    make_venv(repo / ".venv", tooled=True)
    machine.script("poetry", f'echo "{project_env}"')
    chosen = machine.detect(repo).chosen[Slot.TEST]
    assert chosen.command == f"{shlex.quote(str(repo / '.venv' / 'bin' / 'python'))} -m pytest -q"


def test_a_uv_project_without_its_venv_says_to_sync(repo: Path, machine: Machine, tooled_python: Path) -> None:
    write(repo, {"pyproject.toml": '[project]\nname = "calc"\n', "uv.lock": "version = 1\n", "tests/test_one.py": TEST})
    chosen = machine.add("python", tooled_python).detect(repo).chosen[Slot.TEST]
    assert chosen.command == "python -m pytest -q"
    assert (
        chosen.problem
        == "uv.lock: uv keeps the project's environment in .venv, which does not exist yet; run `uv sync`"
    )
    make_venv(repo / ".venv", tooled=True)  # after `uv sync`
    chosen = machine.detect(repo).chosen[Slot.TEST]
    assert (chosen.command, chosen.problem) == (
        f"{shlex.quote(str(repo / '.venv' / 'bin' / 'python'))} -m pytest -q",
        None,
    )
