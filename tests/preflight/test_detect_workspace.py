"""A uv workspace whose root pyproject.toml has no [project], only `[tool.uv.workspace] members` (as in
full-stack-fastapi-template): its members are the Python projects, each run from its folder with the workspace's
.venv at the root, joined with the root's other projects (its package.json: folder `.`). Before, init ran pytest
from the root (the template's settings read `../.env` from backend/, its CI runs the tests there) and never read
backend's own ruff and mypy settings."""

from __future__ import annotations

import shlex
from pathlib import Path

from pm_agent.gates.narrow import command_for_test_files, joined_parts
from pm_agent.preflight.detect import Slot

from .conftest import Machine, make_venv, package_json, rejected_for, write

WORKSPACE = '[tool.uv.workspace]\nmembers = ["backend", "packages/*"]\nexclude = ["packages/old"]\n'
# Imports `app` as backend/ sees it: only right when run from backend/.
BACKEND = {
    "backend/pyproject.toml": "[project]\nname = 'app'\n\n[tool.pytest.ini_options]\n\n[tool.ruff]\n",
    "backend/app/__init__.py": "def answer():\n    return 42\n",
    "backend/tests/test_app.py": "from app import answer\n\n\ndef test_answer():\n    assert answer() == 42\n",
}
LIB = {
    "packages/lib/pyproject.toml": "[project]\nname = 'lib'\n",
    "packages/lib/tests/test_lib.py": "def test_lib():\n    assert True\n",
    # Excluded from the workspace: not one of its projects.
    "packages/old/pyproject.toml": "[project]\nname = 'old'\n",
    "packages/old/tests/test_old.py": "def test_old():\n    assert False\n",
    # Matched by `packages/*` but no pyproject.toml: no member (uv requires one).
    "packages/emails/package.json": package_json(),
}
ROOT_NODE = {"package.json": package_json({"test": "node --test"}), "node_modules/.keep": ""}


def test_the_members_run_from_their_folders_with_the_workspace_venv(repo: Path, machine: Machine) -> None:
    write(repo, {"pyproject.toml": WORKSPACE, **ROOT_NODE, **BACKEND, **LIB})
    python = shlex.quote(str(make_venv(repo / ".venv", tooled=True)))
    detection = machine.script("npm", 'echo "npm $* in $PWD"').detect(repo)
    chosen = detection.chosen[Slot.TEST]
    assert chosen.command == (
        f"status=0; (cd . && npm test) || status=$?; (cd backend && {python} -m pytest -q) || status=$?;"
        f" (cd packages/lib && {python} -m pytest -q) || status=$?; exit $status"
    )
    assert chosen.reason.startswith("the root: package.json scripts.test (node --test); ")
    assert (
        "; backend/: pytest: [tool.pytest.ini_options] in pyproject.toml; importable by .venv/bin/python of the"
        " uv workspace at the repository's root;" in chosen.reason
    )
    assert chosen.problem is None
    assert rejected_for(detection, None)["pyproject.toml"] == (
        "a uv workspace root without [project]: its members (backend, packages/lib) are the Python projects, each run"
        " from its folder with the workspace's .venv at the root"
    )
    # backend's own ruff settings, read from its folder (the root's package.json has no lint script).
    assert detection.chosen[Slot.LINT].command == f"cd backend && {python} -m ruff check --no-fix ."
    result = machine.run(chosen.command, repo)
    assert result.ok, result.output_tail
    assert result.output_tail.count("1 passed") == 2
    assert f"npm test in {repo}\n" in result.output_tail
    assert not machine.run(f"{python} -m pytest -q", repo).ok, "from the root backend's tests cannot import app"


def test_a_task_s_tests_narrow_to_the_member_that_holds_them(repo: Path, machine: Machine) -> None:
    write(repo, {"pyproject.toml": WORKSPACE, **ROOT_NODE, **BACKEND, **LIB})
    python = shlex.quote(str(make_venv(repo / ".venv", tooled=True)))
    command = machine.script("npm", "exit 0").detect(repo).chosen[Slot.TEST].command
    assert joined_parts(command) == [
        (".", "npm test"),
        ("backend", f"{python} -m pytest -q"),
        ("packages/lib", f"{python} -m pytest -q"),
    ]
    narrowed = command_for_test_files(command, ["backend/tests/test_app.py"], repo)
    assert narrowed == f"cd backend && {python} -m pytest -q tests/test_app.py"
    result = machine.run(narrowed, repo)
    assert result.ok, result.output_tail
    two = command_for_test_files(command, ["packages/lib/tests/test_lib.py", "backend/tests/test_app.py"], repo)
    assert two == (
        f"status=0; (cd backend && {python} -m pytest -q tests/test_app.py) || status=$?;"
        f" (cd packages/lib && {python} -m pytest -q tests/test_lib.py) || status=$?; exit $status"
    )
    # A file of the root's project (or of no member) is in no member's folder: everything runs.
    assert command_for_test_files(command, ["web/cart.test.js"], repo) == command
    assert command_for_test_files(command, ["web/cart.test.js", "backend/tests/test_app.py"], repo) == command


def test_without_the_workspace_venv_uv_sync_runs_at_the_root(
    repo: Path, machine: Machine, tooled_python: Path
) -> None:
    write(repo, {"pyproject.toml": WORKSPACE, "uv.lock": "version = 1\n", **BACKEND})
    chosen = machine.add("python", tooled_python).detect(repo).chosen[Slot.TEST]
    assert chosen.command == "cd backend && python -m pytest -q"
    assert chosen.problem == (
        "backend/: [tool.uv.workspace] in the root's pyproject.toml: uv keeps its members' environment in the root's"
        " .venv, which does not exist yet; run `uv sync` at the repository's root"
    )


def test_with_nothing_else_at_the_root_its_project_folders_join_the_members(
    repo: Path, machine: Machine, tooled_python: Path
) -> None:
    frontend = {"frontend/package.json": package_json({"test": "node --test"}), "frontend/node_modules/.keep": ""}
    write(repo, {"pyproject.toml": WORKSPACE, **BACKEND, **frontend, "README.md": "# shop\n"})
    python = shlex.quote(str(make_venv(repo / ".venv", tooled=True)))
    chosen = machine.add("python", tooled_python).script("npm", "exit 0").detect(repo).chosen[Slot.TEST]
    assert chosen.command == (
        f"status=0; (cd backend && {python} -m pytest -q) || status=$?;"
        " (cd frontend && npm test) || status=$?; exit $status"
    )


def test_a_workspace_root_that_is_a_project_or_configures_tools_keeps_the_root_reading(
    repo: Path, machine: Machine, tooled_python: Path
) -> None:
    write(repo, {**BACKEND, "tests/test_top.py": "def test_top():\n    assert True\n"})
    machine.add("python", tooled_python)
    for root in (
        '[project]\nname = "shop"\n\n' + WORKSPACE,  # the root is a package too
        WORKSPACE + "\n[tool.pytest.ini_options]\ntestpaths = ['tests', 'backend/tests']\n",  # run from the root
        WORKSPACE + "\n[tool.ruff]\n",  # settings shared by the members, which their folders would not read
        '[tool.uv.workspace]\nmembers = ["libs/*"]\n',  # no member found
    ):
        write(repo, {"pyproject.toml": root})
        assert machine.detect(repo).chosen[Slot.TEST].command == "python -m pytest -q", root
    # A Makefile at the root is the project's own entry point (its `make test` may run every member already).
    write(repo, {"pyproject.toml": WORKSPACE, "Makefile": "lint:\n\truff check backend\n"})
    detection = machine.real("make").detect(repo)
    assert (detection.chosen[Slot.LINT].command, detection.chosen[Slot.TEST].command) == (
        "make lint",
        "python -m pytest -q",
    )
