"""A uv workspace whose root is no Python project of its own: its members are the Python projects.

A root pyproject.toml with `[tool.uv.workspace] members = ["backend"]` and no `[project]` (a "virtual" root, as in
tiangolo's full-stack-fastapi-template) only groups its members: each member is a project with its own settings
(`backend/pyproject.toml`'s [tool.ruff], [tool.mypy]) whose tests run from its folder (the template's settings read
`../.env` relative to the working directory; its CI runs them with `working-directory: backend`). uv keeps one
environment for all members, in the root's .venv (measured with uv 0.13.9: `uv sync` run in a member creates
`<root>/.venv`), so a member's commands use that interpreter.

A root that is also a project (`[project]`, `[tool.poetry]`, setup.py, setup.cfg), that configures a Python test,
lint or typecheck tool itself (say `[tool.pytest.ini_options] testpaths = ["packages/*/tests"]` or a ruff
configuration shared by the members, which their own folders would not see) or that has a Makefile (the project's
own entry point, which may run every member's checks already) is read as one project at the root, as before: its
tools run from the root over every member.
"""

from __future__ import annotations

import fnmatch
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pm_agent.preflight._probe import MAKEFILES

# Files that make the root a project of its own, or give it its own entry point.
_NOT_VIRTUAL = ("setup.py", "setup.cfg", *MAKEFILES)


def uv_workspace(repo: Path, tool_config: Callable[[Path], str | None]) -> list[str] | None:
    """The members of the uv workspace `repo`'s pyproject.toml declares (folders relative to `repo`, sorted), when
    the root is no Python project of its own and configures no Python tool (`tool_config(repo)`: where it does, or
    None); else None."""
    if not (repo / "pyproject.toml").is_file() or any((repo / name).is_file() for name in _NOT_VIRTUAL):
        return None
    try:
        pyproject: Any = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    tool = pyproject.get("tool")
    tool = tool if isinstance(tool, dict) else {}
    if "project" in pyproject or "poetry" in tool:
        return None
    workspace = tool.get("uv", {}).get("workspace") if isinstance(tool.get("uv"), dict) else None
    if not isinstance(workspace, dict):
        return None
    members = _globs(workspace.get("members"))
    excluded = _globs(workspace.get("exclude"))
    found = {m for pattern in members for m in _matches(repo, pattern)}
    kept = sorted(m for m in found if not any(fnmatch.fnmatchcase(m, pattern) for pattern in excluded))
    return kept if kept and tool_config(repo) is None else None


def _globs(value: object) -> list[str]:
    return [v.strip("/") for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _matches(repo: Path, pattern: str) -> list[str]:
    """The folders inside `repo` other than the root itself that `pattern` matches and that hold a pyproject.toml
    (uv requires one of every member)."""
    if not pattern or Path(pattern).is_absolute():
        return []
    found = []
    for path in repo.glob(pattern):
        try:
            rel = path.resolve().relative_to(repo)
        except ValueError:
            continue  # outside the repository (`../shared`): not one of its projects
        if rel != Path() and (path / "pyproject.toml").is_file():
            found.append(rel.as_posix())
    return found


__all__ = ["uv_workspace"]
