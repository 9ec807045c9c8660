"""The Python rows of the `pm-agent init` detection table: interpreter, tests, lint, typecheck."""

from __future__ import annotations

import shlex
import subprocess
import sysconfig
from pathlib import Path

import pytest

from pm_agent.preflight.detect import Slot

from .conftest import Machine, make_venv, rejected_for, write

UNITTEST = "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_one(self):\n        self.assertEqual(1, 1)\n"
PYTEST_STYLE = "def test_one():\n    assert 1 == 1\n"


def venv_command(repo: Path) -> str:
    return shlex.quote(str(repo / ".venv" / "bin" / "python"))


# ---------------------------------------------------------------- interpreter


def test_repository_venv_by_absolute_path_runs_its_pytest(repo: Path, machine: Machine) -> None:
    write(repo, {"pyproject.toml": "[tool.pytest.ini_options]\n", "tests/test_a.py": PYTEST_STYLE})
    make_venv(repo / ".venv", tooled=True)
    detection = machine.real("make").detect(repo)
    chosen = detection.chosen[Slot.TEST]
    assert chosen.command == f"{venv_command(repo)} -m pytest -q"
    assert "[tool.pytest.ini_options] in pyproject.toml" in chosen.reason
    assert ".venv/bin/python (the repository's own)" in chosen.reason
    assert chosen.problem is None
    result = machine.run(chosen.command, repo)
    assert result.ok, result.output_tail
    assert "1 passed" in result.output_tail


def test_python3_when_python_is_not_on_path(repo: Path, machine: Machine, tooled_python: Path) -> None:
    write(repo, {"setup.py": "", "tests/test_a.py": PYTEST_STYLE})
    detection = machine.add("python3", tooled_python).detect(repo)
    assert detection.environment.test_command == "python3 -m pytest -q"
    assert rejected_for(detection, None) == {"python": "not on PATH"}
    assert machine.run("python3 -m pytest -q", repo).ok


def test_a_python_shim_that_does_not_run_is_passed_over(repo: Path, machine: Machine, tooled_python: Path) -> None:
    write(repo, {"pyproject.toml": "[tool.pytest.ini_options]\n"})
    machine.script("python", "echo 'pyenv: python: command not found' >&2; exit 127")
    detection = machine.add("python3", tooled_python).detect(repo)
    assert detection.environment.test_command == "python3 -m pytest -q"
    assert "pyenv: python: command not found" in rejected_for(detection, None)["python"]


def test_no_python_at_all_still_suggests_python3_marked(repo: Path, machine: Machine) -> None:
    write(repo, {"pyproject.toml": "[tool.pytest.ini_options]\n"})
    chosen = machine.detect(repo).chosen[Slot.TEST]
    assert chosen.command == "python3 -m pytest -q"
    assert chosen.problem is not None
    assert "no Python 3 interpreter" in chosen.problem


# ---------------------------------------------------------------- tests


@pytest.mark.parametrize(
    ("files", "fragment"),
    [
        (
            {"pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-q'\n"},
            "[tool.pytest.ini_options] in pyproject.toml",
        ),
        ({"pytest.ini": "[pytest]\n"}, "pytest.ini"),
        ({"tox.ini": "[tox]\nenvlist = py311\n\n[pytest]\n"}, "[pytest] in tox.ini line 4"),
        ({"setup.cfg": "[metadata]\nname = x\n[tool:pytest]\n"}, "[tool:pytest] in setup.cfg line 3"),
        ({"setup.py": "", "conftest.py": ""}, "conftest.py"),
        ({"requirements.txt": "", "tests/test_a.py": PYTEST_STYLE}, "tests/test_a.py"),
        ({"pkg/test_b.py": PYTEST_STYLE, "pkg/c_test.py": PYTEST_STYLE}, "pkg/c_test.py, pkg/test_b.py"),
    ],
)
def test_pytest_when_configured_or_tests_exist(
    repo: Path, machine: Machine, tooled_python: Path, files: dict[str, str], fragment: str
) -> None:
    write(repo, files)
    chosen = machine.add("python", tooled_python).detect(repo).chosen[Slot.TEST]
    assert chosen.command == "python -m pytest -q"
    assert chosen.reason.startswith(f"pytest: {fragment}")
    assert "importable by python" in chosen.reason
    assert chosen.problem is None


def test_configured_pytest_without_tests_says_it_exits_5_until_there_are_some(
    repo: Path, machine: Machine, tooled_python: Path
) -> None:
    write(repo, {"pytest.ini": "[pytest]\n"})
    chosen = machine.add("python", tooled_python).detect(repo).chosen[Slot.TEST]
    assert "pytest exits 5 until the first test exists" in chosen.reason


def test_unittest_discovery_when_pytest_is_missing_and_tests_use_unittest(
    repo: Path, machine: Machine, bare_python: Path
) -> None:
    write(repo, {"setup.py": "", "tests/__init__.py": "", "tests/test_a.py": UNITTEST})
    detection = machine.add("python", bare_python).detect(repo)
    chosen = detection.chosen[Slot.TEST]
    assert chosen.command == "python -m unittest"
    assert chosen.problem is None
    assert rejected_for(detection, Slot.TEST) == {"python -m pytest -q": "pytest is not importable by python"}
    whole = machine.run(chosen.command, repo)
    assert whole.ok, whole.output_tail
    assert "Ran 1 test" in whole.output_tail
    one_file = machine.run(f"{chosen.command} tests/test_a.py", repo)  # the gates append changed test files
    assert one_file.ok, one_file.output_tail
    assert not machine.run("python -m pytest -q", repo).ok, "the rejected command must really fail"


@pytest.mark.parametrize(
    ("files", "blocker"),
    [
        ({"tests/test_a.py": PYTEST_STYLE}, "tests/test_a.py is not a unittest test (pytest style)"),
        ({"tests/test_a.py": UNITTEST}, "tests/ has no __init__.py, so unittest discovery from the root"),
        ({"a_test.py": UNITTEST}, "a_test.py does not match unittest's default pattern test*.py"),
    ],
)
def test_pytest_marked_not_installed_when_bare_unittest_would_miss_the_tests(
    repo: Path, machine: Machine, bare_python: Path, files: dict[str, str], blocker: str
) -> None:
    write(repo, {"setup.py": "", **files})
    detection = machine.add("python", bare_python).detect(repo)
    chosen = detection.chosen[Slot.TEST]
    assert chosen.command == "python -m pytest -q"
    assert chosen.problem is not None
    assert chosen.problem.startswith("not installed: pytest is not importable by python")
    assert rejected_for(detection, Slot.TEST)["python -m unittest"].startswith(blocker)


def test_no_test_command_without_tests(repo: Path, machine: Machine, tooled_python: Path) -> None:
    write(repo, {"pyproject.toml": "[project]\nname = 'x'\n", "x.py": ""})
    detection = machine.add("python", tooled_python).detect(repo)
    assert detection.environment.test_command is None
    assert rejected_for(detection, Slot.TEST)["python -m pytest -q"].startswith("no tests")


def test_src_layout_imports_the_worktree_code_not_an_installed_copy(
    repo: Path, machine: Machine, tooled_python: Path
) -> None:
    write(
        repo,
        {
            "pyproject.toml": "[tool.pytest.ini_options]\n",
            "src/calc/__init__.py": "def add(a, b):\n    return a + b\n",
            "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
        },
    )
    chosen = machine.add("python", tooled_python).detect(repo).chosen[Slot.TEST]
    assert chosen.command == "PYTHONPATH=src python -m pytest -q"
    assert "src layout" in chosen.reason
    assert machine.run(chosen.command, repo).ok
    write(repo, {"pyproject.toml": "[tool.pytest.ini_options]\npythonpath = ['src']\n"})
    assert machine.detect(repo).environment.test_command == "python -m pytest -q"


# ---------------------------------------------------------------- lint


@pytest.mark.parametrize(
    ("files", "fragment"),
    [
        ({"pyproject.toml": "[tool.ruff]\nline-length = 100\n"}, "[tool.ruff] in pyproject.toml"),
        ({"pyproject.toml": "[tool.ruff.lint]\nselect = ['E']\n"}, "[tool.ruff] in pyproject.toml"),
        ({"ruff.toml": "line-length = 100\n"}, "ruff.toml"),
        ({".ruff.toml": "line-length = 100\n"}, ".ruff.toml"),
    ],
)
def test_ruff_when_configured_and_importable(
    repo: Path, machine: Machine, tooled_python: Path, files: dict[str, str], fragment: str
) -> None:
    write(repo, {"app.py": "x = 1\n", **files})
    chosen = machine.add("python", tooled_python).detect(repo).chosen[Slot.LINT]
    assert chosen.command == "python -m ruff check --no-fix ."
    assert chosen.reason == f"ruff: {fragment}; importable by python"
    assert machine.run(chosen.command, repo).ok


def test_ruff_from_path_when_the_interpreter_lacks_it(repo: Path, machine: Machine, bare_python: Path) -> None:
    write(repo, {"ruff.toml": "", "app.py": "x = 1\n"})
    ruff = Path(sysconfig.get_paths()["scripts"]) / "ruff"
    chosen = machine.add("python", bare_python).add("ruff", ruff).detect(repo).chosen[Slot.LINT]
    assert chosen.command == "ruff check --no-fix ."
    assert chosen.problem is None


def test_ruff_nowhere_is_suggested_and_marked_not_installed(repo: Path, machine: Machine, bare_python: Path) -> None:
    write(repo, {"ruff.toml": ""})
    machine.script("ruff", "echo 'pyenv: ruff: command not found' >&2; exit 127")  # a shim is not a ruff
    chosen = machine.add("python", bare_python).detect(repo).chosen[Slot.LINT]
    assert chosen.command == "python -m ruff check --no-fix ."
    assert chosen.problem is not None
    assert chosen.problem.startswith("not installed: ruff is not importable by python")


@pytest.mark.parametrize(
    ("files", "fragment"),
    [
        ({".flake8": "[flake8]\n"}, ".flake8"),
        ({"setup.cfg": "[metadata]\n\n[flake8]\nmax-line-length = 100\n"}, "[flake8] in setup.cfg line 3"),
        ({"tox.ini": "[flake8]\n"}, "[flake8] in tox.ini line 1"),
    ],
)
def test_flake8_when_configured(
    repo: Path, machine: Machine, bare_python: Path, files: dict[str, str], fragment: str
) -> None:
    write(repo, files)
    machine.script("flake8", "exit 0")
    chosen = machine.add("python", bare_python).detect(repo).chosen[Slot.LINT]
    assert chosen.command == "flake8"
    assert chosen.reason.startswith(f"flake8: {fragment}; flake8 on PATH")


def test_installed_flake8_wins_over_configured_but_missing_ruff(
    repo: Path, machine: Machine, bare_python: Path
) -> None:
    write(repo, {"ruff.toml": "", ".flake8": "[flake8]\n"})
    machine.script("flake8", "exit 0")
    detection = machine.add("python", bare_python).detect(repo)
    assert detection.environment.lint_command == "flake8"
    assert rejected_for(detection, Slot.LINT)["python -m ruff check --no-fix ."].startswith("not installed: ruff")


def test_makefile_lint_target_next_to_pyproject_wins(repo: Path, machine: Machine, tooled_python: Path) -> None:
    write(repo, {"pyproject.toml": "[tool.ruff]\n", "Makefile": "lint:\n\truff check src\n"})
    detection = machine.add("python", tooled_python).script("ruff", "exit 0").real("make").detect(repo)
    assert detection.environment.lint_command == "make lint"
    assert detection.chosen[Slot.LINT].reason == "Makefile: make -n lint succeeds"
    assert (
        "the Makefile target is the project's own entry point"
        in rejected_for(detection, Slot.LINT)["python -m ruff check --no-fix ."]
    )


def test_makefile_target_whose_recipe_runs_a_program_not_on_path_gives_way(
    repo: Path, machine: Machine, tooled_python: Path
) -> None:
    """Seen on rich and pydantic-settings: `make typecheck` runs a bare `mypy` (or `uv run`) that only the project's
    virtualenv has; make then exits 2 at once, which the preflight took for a check already failing."""
    makefile = "lint:\n\tFOO=1 ruff check src\n\t@echo done\ntypecheck:\n\tcd src && true\n"
    write(repo, {"pyproject.toml": "[tool.ruff]\n", "Makefile": makefile})
    detection = machine.add("python", tooled_python).real("make").detect(repo)
    assert detection.environment.lint_command == "python -m ruff check --no-fix ."
    assert rejected_for(detection, Slot.LINT)["make lint"] == (
        "not installed: its recipe runs ruff, which is not on PATH; python -m ruff check --no-fix . works"
    )
    assert detection.environment.typecheck_command == "make typecheck"  # `cd` and `true`: no program missing


def test_makes_own_warning_and_info_lines_are_no_recipe_programs(
    repo: Path, machine: Machine, tooled_python: Path
) -> None:
    """cobra's Makefile: `$(warning ...)` (printed as `Makefile:5: ...`) and `$(info *** ... ***)` come before the
    recipe in `make -n`'s output; the missing program is the recipe's, not `Makefile:5:` or `****`."""
    makefile = (
        "ifeq (, $(shell which pm-agent-absent-linter))\n$(warning could not find pm-agent-absent-linter)\nendif\n"
        "lint:\n\t$(info ******** running lint tools ********)\n\tpm-agent-absent-linter run -v\n"
    )
    write(repo, {"pyproject.toml": "[tool.ruff]\n", "Makefile": makefile})
    detection = machine.add("python", tooled_python).real("make").detect(repo)
    assert rejected_for(detection, Slot.LINT)["make lint"] == (
        "not installed: its recipe runs pm-agent-absent-linter, which is not on PATH;"
        " python -m ruff check --no-fix . works"
    )


def test_makefile_without_lint_target_leaves_ruff(repo: Path, machine: Machine, tooled_python: Path) -> None:
    write(repo, {"pyproject.toml": "[tool.ruff]\n", "Makefile": "build:\n\techo build\n"})
    detection = machine.add("python", tooled_python).real("make").detect(repo)
    assert detection.environment.lint_command == "python -m ruff check --no-fix ."
    assert rejected_for(detection, Slot.LINT) == {"make lint": "Makefile has no lint target (make -n lint failed)"}


# ---------------------------------------------------------------- typecheck


@pytest.mark.parametrize(
    ("files", "command", "fragment"),
    [
        ({"pyproject.toml": "[tool.mypy]\nstrict = true\n"}, "python -m mypy .", "[tool.mypy] in pyproject.toml"),
        ({"pyproject.toml": "[tool.mypy]\nfiles = ['app.py']\n"}, "python -m mypy", "[tool.mypy] in pyproject.toml"),
        ({"mypy.ini": "[mypy]\n"}, "python -m mypy .", "mypy.ini"),
        ({".mypy.ini": "[mypy]\nfiles = app.py\n"}, "python -m mypy", ".mypy.ini"),
        ({"setup.cfg": "[mypy]\n", "src/app.py": ""}, "python -m mypy src", "[mypy] in setup.cfg line 1"),
    ],
)
def test_mypy_when_configured(
    repo: Path, machine: Machine, tooled_python: Path, files: dict[str, str], command: str, fragment: str
) -> None:
    write(repo, {"app.py": "x: int = 1\n", **files})
    chosen = machine.add("python", tooled_python).detect(repo).chosen[Slot.TYPECHECK]
    assert (chosen.command, chosen.reason) == (command, f"mypy: {fragment}; importable by python")


@pytest.mark.parametrize(
    ("files", "fragment"),
    [
        ({"pyrightconfig.json": "{}"}, "pyrightconfig.json"),
        ({"pyproject.toml": "[tool.pyright]\n"}, "[tool.pyright] in pyproject.toml"),
    ],
)
def test_pyright_when_configured(
    repo: Path, machine: Machine, bare_python: Path, files: dict[str, str], fragment: str
) -> None:
    write(repo, files)
    chosen = machine.add("python", bare_python).detect(repo).chosen[Slot.TYPECHECK]
    assert chosen.command == "python -m pyright"
    assert chosen.reason.startswith(f"pyright: {fragment}")
    assert chosen.problem is not None
    assert "not installed" in chosen.problem


def test_mypy_before_pyright_when_both_are_configured(repo: Path, machine: Machine, tooled_python: Path) -> None:
    write(repo, {"pyproject.toml": "[tool.mypy]\n[tool.pyright]\n", "tool.py": "tool: str = 'x'\n"})
    machine.script("pyright", "exit 0")
    detection = machine.add("python", tooled_python).detect(repo)
    assert detection.environment.typecheck_command == "python -m mypy ."
    assert rejected_for(detection, Slot.TYPECHECK)["pyright"].startswith("python -m mypy . is preferred")


def test_malformed_tool_table_is_ignored_not_fatal(repo: Path, machine: Machine, tooled_python: Path) -> None:
    write(repo, {"pyproject.toml": "tool = 3\n", "src/pkg/__init__.py": "", "tests/test_a.py": PYTEST_STYLE})
    detection = machine.add("python", tooled_python).detect(repo)
    assert detection.environment.test_command == "PYTHONPATH=src python -m pytest -q"
    assert detection.environment.lint_command is None


@pytest.mark.parametrize("target", ["typecheck", "mypy"])
def test_makefile_typecheck_target_wins(repo: Path, machine: Machine, tooled_python: Path, target: str) -> None:
    write(repo, {"pyproject.toml": "[tool.mypy]\n", "Makefile": f"{target}:\n\tmypy --strict src\n"})
    detection = machine.add("python", tooled_python).script("mypy", "exit 0").real("make").detect(repo)
    assert detection.environment.typecheck_command == f"make {target}"


def test_broken_pyproject_is_reported_with_its_line(repo: Path, machine: Machine, tooled_python: Path) -> None:
    write(repo, {"pyproject.toml": "[tool.ruff]\nline-length = \n", "tests/test_a.py": PYTEST_STYLE})
    detection = machine.add("python", tooled_python).detect(repo)
    assert "line 2" in rejected_for(detection, None)["pyproject.toml"]
    assert detection.environment.test_command == "python -m pytest -q"


def test_only_a_makefile_target_gives_way_to_a_later_working_command(
    repo: Path, machine: Machine, bare_python: Path
) -> None:
    """A Python project whose ruff is not installed keeps its ruff command, marked, even where a Node project of the
    same repository lints fine: eslint is no stand-in for ruff, and the user is told what to install."""
    pkg = '{"name": "x", "scripts": {"lint": "eslint ."}}'
    write(repo, {"pyproject.toml": "[tool.ruff]\n", "package.json": pkg, "node_modules/.keep": ""})
    detection = machine.add("python", bare_python).script("npm", "exit 0").detect(repo)
    chosen = detection.chosen[Slot.LINT]
    assert chosen.command == "python -m ruff check --no-fix ."
    assert chosen.problem is not None
    assert chosen.problem.startswith("not installed: ruff")
    write(repo, {"Makefile": "lint:\n\tpm-agent-missing-linter src\n"})  # broken make, broken ruff: make stays first
    assert machine.real("make").detect(repo).chosen[Slot.LINT].command == "make lint"


def test_a_ruff_other_than_the_pre_commit_pin_is_said(repo: Path, machine: Machine, tooled_python: Path) -> None:
    """structlog pins ruff v0.15.16 in its hooks; ruff 0.17 here reports a copyright finding on every new file, which
    the ratchet would fail each task for. init says so in the command's reason."""
    said = subprocess.run([str(tooled_python), "-m", "ruff", "--version"], capture_output=True, text=True, check=True)
    here = said.stdout.split()[-1]
    hooks = (
        "repos:\n  - repo: https://github.com/astral-sh/ruff-pre-commit\n    rev: {rev}\n    hooks:\n      - id: ruff\n"
    )
    write(repo, {"pyproject.toml": "[tool.ruff]\n", ".pre-commit-config.yaml": hooks.format(rev="v0.0.1")})
    reason = machine.add("python", tooled_python).detect(repo).chosen[Slot.LINT].reason
    assert reason.endswith(f"ruff {here} here, but .pre-commit-config.yaml pins 0.0.1: its findings may differ "
                           "(install ruff==0.0.1)")  # fmt: skip
    write(repo, {".pre-commit-config.yaml": hooks.format(rev=f"v{here}")})
    assert "pins" not in machine.detect(repo).chosen[Slot.LINT].reason
