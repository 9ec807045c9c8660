"""A repository whose projects live in folders of its root (`backend/` in Python, `frontend/` in Node), none at the
root: each slot's command runs every project's from its folder, all of them even when one fails, and a task's test
files are narrowed to the projects that hold them (gates/narrow.py). Before, `init` ran pytest from the root (which
imports the backend's tests as the root sees them) and never ran the frontend's; then it joined the projects with
`&&`, and a backend that failed (say, before any task) hid every frontend test, the narrowed ones too."""

from __future__ import annotations

from pathlib import Path

from pm_agent.gates.narrow import command_for_test_files
from pm_agent.preflight.detect import Slot

from .conftest import Machine, package_json, rejected_for, write

BACKEND = {
    "backend/pyproject.toml": "[project]\nname = 'api'\n\n[tool.pytest.ini_options]\n",
    "backend/app/__init__.py": "def answer():\n    return 42\n",
    # Imports `app` as the backend's own folder sees it: only right when run from backend/.
    "backend/tests/test_app.py": "from app import answer\n\n\ndef test_answer():\n    assert answer() == 42\n",
}
FRONTEND = {"frontend/package.json": package_json({"test": "node --test"}), "frontend/node_modules/.keep": ""}


def test_each_project_s_command_runs_from_its_folder(repo: Path, machine: Machine, tooled_python: Path) -> None:
    docs_site = {"docs/package.json": package_json({"test": "exit 1"})}  # a docs site is not a project of the code
    write(repo, {**BACKEND, **FRONTEND, **docs_site, "README.md": "# shop\n"})
    detection = machine.add("python", tooled_python).script("npm", 'echo "npm $* in $PWD"').detect(repo)
    chosen = detection.chosen[Slot.TEST]
    assert chosen.command == (
        "status=0; (cd backend && python -m pytest -q) || status=$?;"
        " (cd frontend && npm test) || status=$?; exit $status"
    )
    assert chosen.reason.startswith("backend/: pytest: [tool.pytest.ini_options] in pyproject.toml")
    assert "; frontend/: package.json scripts.test (node --test)" in chosen.reason
    assert chosen.problem is None
    result = machine.run(chosen.command, repo)
    assert result.ok, result.output_tail
    assert "1 passed" in result.output_tail
    assert f"npm test in {repo}/frontend" in result.output_tail
    assert not machine.run("python -m pytest -q", repo).ok, "from the root the backend's tests cannot import app"
    assert "(in frontend/) npm test" not in rejected_for(detection, Slot.TEST)
    narrowed = command_for_test_files(chosen.command, ["frontend/src/cart.test.js"], repo)
    assert narrowed == "cd frontend && npm test src/cart.test.js"
    both = command_for_test_files(chosen.command, ["frontend/src/cart.test.js", "backend/tests/test_app.py"], repo)
    assert both == (
        "status=0; (cd backend && python -m pytest -q tests/test_app.py) || status=$?;"
        " (cd frontend && npm test src/cart.test.js) || status=$?; exit $status"
    )
    assert command_for_test_files(chosen.command, ["tests/test_top.py"], repo) == chosen.command  # in neither
    # A backend that fails still lets the frontend's tests run, and the whole command fails.
    write(repo, {"backend/tests/test_app.py": "def test_answer():\n    assert False\n"})
    result = machine.run(chosen.command, repo)
    assert not result.ok
    assert "1 failed" in result.output_tail
    assert f"npm test in {repo}/frontend" in result.output_tail


def test_a_root_project_or_makefile_keeps_the_root_s_commands(
    repo: Path, machine: Machine, tooled_python: Path
) -> None:
    write(repo, {**BACKEND, **FRONTEND, "pyproject.toml": "[project]\nname = 'shop'\n"})
    assert machine.add("python", tooled_python).detect(repo).chosen[Slot.TEST].command == "python -m pytest -q"
    (repo / "pyproject.toml").unlink()
    write(repo, {"Makefile": "test:\n\tcd backend && pytest\n"})  # the project's own entry point, as before
    detection = machine.real("make").detect(repo)
    assert "cd backend" not in detection.chosen[Slot.TEST].command


def test_a_project_s_problem_names_its_folder(repo: Path, machine: Machine, tooled_python: Path) -> None:
    write(repo, {**BACKEND, "frontend/package.json": package_json({"test": "node --test"})})
    chosen = machine.add("python", tooled_python).script("npm", "exit 0").detect(repo).chosen[Slot.TEST]
    assert chosen.problem == "frontend/: dependencies not installed: no node_modules/ (run `npm install`)"
