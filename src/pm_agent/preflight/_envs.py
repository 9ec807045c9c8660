"""The environment a Python project's own tool keeps for it: poetry's, pipenv's and hatch's live outside the project
(keyed by its path), uv's in its .venv.

Each tool is asked where (as the real ones answer, measured with poetry 2.5.1, pipenv 2026.10.3 and hatch: `poetry env
info --executable` prints the interpreter, or nothing with exit 1 before `poetry install`; `pipenv --py` prints it,
or says "No virtualenv has been created for this project ... yet!" with exit 1; `hatch env find` prints the
environment's folder whether or not `hatch env create` has made it), with the caller's activated virtualenv hidden:
poetry and pipenv would report that one instead.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pm_agent.preflight._candidates import Finding, Rejected
from pm_agent.preflight._probe import Probe, PythonInfo


@dataclass(frozen=True)
class _Manager:
    """A tool that keeps a project's environment outside the project, and how it tells where the interpreter is."""

    name: str
    markers: tuple[str, ...]  # files that make a project its own
    where: tuple[str, ...]  # the command that prints the environment's python (or its folder)
    install: str  # the command that makes the environment
    table: tuple[str, ...] = ()  # or this [tool.*] table of pyproject.toml
    prints_folder: bool = False  # `where` prints the environment's folder, which may not exist yet


_MANAGERS = (
    _Manager("poetry", ("poetry.lock",), ("poetry", "env", "info", "--executable"), "poetry install", ("poetry",)),
    _Manager("pipenv", ("Pipfile.lock", "Pipfile"), ("pipenv", "--py"), "pipenv install --dev"),
    # hatch's own environments, when the project defines some (hatchling as the build backend alone does not).
    _Manager("hatch", (), ("hatch", "env", "find"), "hatch env create", ("hatch", "envs"), prints_folder=True),
)
# An activated virtualenv (pm-agent's own, say) is what poetry and pipenv would report: they must look for the
# project's.
_OWN_ENV = {"VIRTUAL_ENV": "", "PIPENV_IGNORE_VIRTUALENVS": "1", "PIPENV_VERBOSITY": "-1"}


def managed_interpreter(
    probe: Probe, tool: Callable[..., bool], found: Finding
) -> tuple[PythonInfo | None, str | None]:
    """The interpreter of the environment poetry, pipenv or hatch keeps for the project (outside it, keyed by its
    path: a task's worktree would get a new one, so the main checkout's is used by absolute path); else None, with
    what stands in the way when the tool is there but has made no environment yet (for uv: no .venv). `tool(*keys)`
    tells whether pyproject.toml has [tool.<keys>]."""
    for manager in _MANAGERS:
        marker = next((m for m in manager.markers if (probe.repo / m).is_file()), None)
        if marker is None and manager.table and tool(*manager.table):
            marker = f"[tool.{'.'.join(manager.table)}] in pyproject.toml"
        if marker is None:
            continue
        if probe.which(manager.name) is None:
            why = f"{marker}, but {manager.name} is not on PATH: its environment cannot be found"
            found.rejected.append(Rejected(manager.name, why))
            continue
        result = probe.run(list(manager.where), env=_OWN_ENV)
        paths = [line.strip() for line in result.output_tail.splitlines() if line.strip().startswith("/")]
        exe = paths[-1] if result.ok and paths else None
        if exe is not None and manager.prints_folder:
            exe = str(Path(exe) / "bin" / "python")
        if exe is None or not Path(exe).is_file():
            said = f"exit {result.exit_code}" if not result.ok else f"{exe} does not exist" if exe else "no path"
            return None, (
                f"{marker}: {manager.name} has no environment for this project yet (`{shlex.join(manager.where)}`:"
                f" {said}); run `{manager.install}`"
            )
        info = probe.python(exe)
        label = f"{manager.name}'s environment ({exe})"
        if isinstance(info, str):
            found.rejected.append(Rejected(label, info))
            continue
        return PythonInfo(shlex.quote(exe), label, info.modules), None
    if probe.workspace is not None:
        # uv keeps every member's environment in the workspace root's .venv: `uv sync` runs there.
        return None, (
            "[tool.uv.workspace] in the root's pyproject.toml: uv keeps its members' environment in the root's .venv,"
            " which does not exist yet; run `uv sync` at the repository's root"
        )
    if (probe.repo / "uv.lock").is_file():
        # uv keeps a project's environment in its .venv, which the caller looked for: none yet is a checkout
        # `uv sync` has not run in.
        return None, "uv.lock: uv keeps the project's environment in .venv, which does not exist yet; run `uv sync`"
    return None, None


__all__ = ["managed_interpreter"]
