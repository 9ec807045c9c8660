"""hatch environment scripts as the project's own commands, and unittest suites named `*_tests.py` or `tests.py`.

mkdocs (the repository that showed it) keeps its suite in `mkdocs/tests/*_tests.py`, which pytest's default
python_files does not collect, and runs it as `[tool.hatch.envs.test.scripts] test = 'python -m unittest discover -s
mkdocs -p "*tests.py"'`; its typecheck is `[tool.hatch.envs.types.scripts] check = "mypy mkdocs"` and its lint
`[tool.hatch.envs.style.scripts]` (isort, black, then the `lint` script's ruff). Scripts run with the interpreter
init chose (a real venv here), not through `hatch run`.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from pm_agent.gates.narrow import command_for_test_files
from pm_agent.preflight.detect import Slot

from .conftest import Machine, make_venv, rejected_for, write

UNITTEST = "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_one(self):\n        self.assertEqual(1, 1)\n"
PYTEST_STYLE = "def test_one():\n    assert 1 == 1\n"
# mkdocs' layout: a package whose tests are `<name>_tests.py` modules in a tests package.
SUITE = {
    "pkg/__init__.py": "",
    "pkg/core.py": "def one() -> int:\n    return 1\n",
    "pkg/tests/__init__.py": "",
    "pkg/tests/build_tests.py": UNITTEST,
    "pkg/tests/config/__init__.py": "",
    "pkg/tests/config/base_tests.py": UNITTEST,
}
MKDOCS_HATCH = """[project]
name = "pkg"

[tool.hatch.envs.default.scripts]
all = ["hatch run style:fix", "hatch run test:test"]

[tool.hatch.envs.test.scripts]
test = 'python -m unittest discover -s pkg -p "*tests.py"'

[tool.hatch.envs.types.scripts]
check = "mypy pkg"

[tool.hatch.envs.style]
detached = true
[tool.hatch.envs.style.scripts]
check = ["isort --check-only --diff pkg", "black -q --check --diff pkg", "lint"]
lint = ["ruff check pkg {args}"]

[tool.ruff]
line-length = 100
"""


def venv(repo: Path) -> str:
    return shlex.quote(str(repo / ".venv" / "bin" / "python"))


def test_mkdocs_hatch_scripts_run_with_the_repository_venv(repo: Path, machine: Machine) -> None:
    write(repo, {"pyproject.toml": MKDOCS_HATCH, **SUITE})
    make_venv(repo / ".venv", tooled=True)  # pytest, ruff, mypy; no isort, no black
    detection = machine.detect(repo)
    test = detection.chosen[Slot.TEST]
    assert test.command == f"{venv(repo)} -m unittest discover -s pkg -p '*tests.py'"
    assert test.reason.startswith(
        "hatch script test:test ([tool.hatch.envs.test.scripts] in pyproject.toml):"
        ' `python -m unittest discover -s pkg -p "*tests.py"`, the project\'s own; its commands run with'
        " .venv/bin/python (the repository's own), not through `hatch run test:test` (hatch is not on PATH)"
    )
    assert test.problem is None
    whole = machine.run(test.command, repo)
    assert whole.ok, whole.output_tail
    assert "Ran 2 tests" in whole.output_tail
    # A task's gate narrows it to its test files: discover would read them as its start folder.
    narrowed = command_for_test_files(test.command, ["pkg/tests/config/base_tests.py"], repo)
    assert narrowed == f"{venv(repo)} -m unittest pkg/tests/config/base_tests.py"
    one = machine.run(narrowed, repo)
    assert one.ok, one.output_tail
    assert "Ran 1 test" in one.output_tail

    typecheck = detection.chosen[Slot.TYPECHECK]
    assert typecheck.command == f"{venv(repo)} -m mypy pkg"
    assert typecheck.reason.startswith("hatch script types:check")
    # style:check needs isort and black, which hatch's detached `style` environment has and the venv has not:
    # its `lint` script alone (ruff, kept from fixing files) wins over [tool.ruff]'s whole-tree check.
    lint = detection.chosen[Slot.LINT]
    assert lint.command == f"{venv(repo)} -m ruff check --no-fix pkg"
    assert lint.reason.startswith("hatch script style:lint")
    style = rejected_for(detection, Slot.LINT)[
        f"{venv(repo)} -m isort --check-only --diff pkg && {venv(repo)} -m black -q --check --diff pkg"
        f" && {venv(repo)} -m ruff check --no-fix pkg"
    ]
    assert style.startswith("not installed: isort is not importable by .venv/bin/python")
    assert style.endswith("(hatch would run it in its `style` environment, with that environment's tools)")
    assert machine.run(lint.command, repo).ok


def test_a_script_of_scripts_is_joined_with_and(repo: Path, machine: Machine, tooled_python: Path) -> None:
    pyproject = (
        "[tool.hatch.envs.default.scripts]\n"
        "test = ['check-env', 'pytest {args:tests} -q']\n"
        "check-env = \"python -c 'import sys; print(sys.version_info[0])'\"\n"
    )
    write(repo, {"pyproject.toml": pyproject, "tests/test_a.py": PYTEST_STYLE})
    chosen = machine.add("python", tooled_python).detect(repo).chosen[Slot.TEST]
    assert chosen.command == "python -c 'import sys; print(sys.version_info[0])' && python -m pytest tests -q"
    assert chosen.problem is None
    result = machine.run(chosen.command, repo)
    assert result.ok, result.output_tail
    assert "1 passed" in result.output_tail
    assert command_for_test_files(chosen.command, ["tests/test_a.py"], repo).endswith(
        "&& python -m pytest -q tests/test_a.py"
    )


@pytest.mark.parametrize(
    ("scripts", "why"),
    [
        ('test = "pytest --basetemp={env:TMP}/x"', "`pytest --basetemp={env:TMP}/x` uses hatch's `{env:TMP}`"),
        ('test = "pytest | tee log"', "`pytest | tee log` uses shell syntax (pipes, redirections, `&&`)"),
        ("test = ['lint', 'pytest']\nlint = 'test'", "`test` refers to itself through `test`"),
        ("test = 3", "script `test` is neither a command nor a list of commands"),
    ],
)
def test_a_script_only_hatch_can_run_is_rejected_with_why(
    repo: Path, machine: Machine, tooled_python: Path, scripts: str, why: str
) -> None:
    write(repo, {"pyproject.toml": f"[tool.hatch.envs.default.scripts]\n{scripts}\n", "tests/test_a.py": PYTEST_STYLE})
    detection = machine.add("python", tooled_python).detect(repo)
    assert detection.environment.test_command == "python -m pytest -q"  # the test files' own detection
    assert rejected_for(detection, Slot.TEST)["hatch script default:test"].startswith(why)


def test_hatch_toml_scripts_and_a_program_not_on_path(repo: Path, machine: Machine, tooled_python: Path) -> None:
    hatch = "[envs.lint.scripts]\ncheck = 'pyflakes src'\n[envs.types.scripts]\ncheck = 'mypy src'\n"
    write(repo, {"hatch.toml": hatch, "setup.py": "", "src/app.py": "X = 1\n"})
    detection = machine.add("python", tooled_python).detect(repo)
    typecheck = detection.chosen[Slot.TYPECHECK]
    assert typecheck.command == "python -m mypy src"
    assert typecheck.reason.startswith("hatch script types:check ([envs.types.scripts] in hatch.toml): `mypy src`")
    lint = detection.chosen[Slot.LINT]
    assert lint.command == "pyflakes src"  # marked: the gate cannot run it until pyflakes is installed
    assert (
        lint.problem
        == "pyflakes is not on PATH (hatch would run it in its `lint` environment, with that environment's tools)"
    )


# ---------------------------------------------------------------- suites pytest does not collect


def test_tests_named_tests_py_run_by_unittest_discovery_not_pytest(
    repo: Path, machine: Machine, tooled_python: Path
) -> None:
    """pytest is importable, yet collects none of `*_tests.py`: it would exit 5 having run nothing."""
    write(repo, {"setup.py": "", **SUITE})
    detection = machine.add("python", tooled_python).detect(repo)
    chosen = detection.chosen[Slot.TEST]
    assert chosen.command == "python -m unittest discover -s pkg/tests -t . -p '*_tests.py'"
    assert chosen.reason == (
        "unittest discovery: pkg/tests/build_tests.py, pkg/tests/config/base_tests.py are unittest tests named"
        " *_tests.py, not collected by pytest"
    )
    assert rejected_for(detection, Slot.TEST)["python -m pytest -q"].startswith(
        "pytest collects test_*.py and *_test.py only (no python_files setting)"
    )
    result = machine.run(chosen.command, repo)
    assert result.ok, result.output_tail
    assert "Ran 2 tests" in result.output_tail
    assert machine.run("python -m pytest -q", repo).exit_code == 5, "the rejected command must really run nothing"


def test_a_tests_py_module_outside_django(repo: Path, machine: Machine, bare_python: Path) -> None:
    write(repo, {"setup.py": "", "app/tests.py": UNITTEST})  # no app/__init__.py: discovery starts in app/
    chosen = machine.add("python", bare_python).detect(repo).chosen[Slot.TEST]
    assert chosen.command == "python -m unittest discover -s app -p tests.py"
    result = machine.run(chosen.command, repo)
    assert result.ok, result.output_tail
    assert "Ran 1 test" in result.output_tail


def test_pytest_when_python_files_collects_them(repo: Path, machine: Machine, tooled_python: Path) -> None:
    write(repo, {"pytest.ini": "[pytest]\npython_files = *_tests.py\n", "tests/a_tests.py": PYTEST_STYLE})
    chosen = machine.add("python", tooled_python).detect(repo).chosen[Slot.TEST]
    assert chosen.command == "python -m pytest -q"
    assert chosen.problem is None
    assert "1 passed" in machine.run(chosen.command, repo).output_tail


def test_pytest_style_tests_pytest_does_not_collect_are_marked(
    repo: Path, machine: Machine, tooled_python: Path
) -> None:
    write(repo, {"setup.py": "", "tests/a_tests.py": PYTEST_STYLE})
    detection = machine.add("python", tooled_python).detect(repo)
    chosen = detection.chosen[Slot.TEST]
    assert chosen.command == "python -m pytest -q"
    assert chosen.problem == (
        "pytest collects test_*.py and *_test.py only (no python_files setting): it finds none of tests/a_tests.py;"
        " set python_files = test_*.py *_tests.py in its configuration"
    )
    why = rejected_for(detection, Slot.TEST)["python -m unittest discover -s tests -p '*_tests.py'"]
    assert why == "tests/a_tests.py is not a unittest test (pytest style)"
