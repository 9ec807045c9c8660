"""What `pm-agent init` writes as the environment contract, and why: `detect_environment(repo)`.

Detection never suggests a command that cannot work: it asks the machine (`make -n`, what the
interpreter imports, PATH) instead of trusting file names, and says for every command why it was
chosen and for every candidate it dropped why not. A command whose tool is missing is still suggested
when the repository configures it, with a `problem` the preflight turns into a fix message.

Sources per slot, first source with a candidate wins:
- lint, typecheck, format: Makefile target, Python, Node, Go, Rust, Maven, Gradle, Ruby, PHP. A `make lint` that
  dry-runs is the project's own entry point with its own flags and paths. The format command only checks (`ruff format
  --check`, `prettier --check`, `gofmt -l`, `cargo fmt --check`): a formatter that rewrote files would pass its gate
  by editing the agent's work.
- test, build: Python, Node, Go, Rust, Maven, Gradle, Ruby, PHP, Makefile. pm-agent narrows a test command to
  the changed test files where its runner allows (gates/narrow.py); `make test` cannot be narrowed, so it is
  the fallback of Makefile-only repositories.
Within one source the first candidate without a problem wins, else the first (ruff over flake8).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from pm_agent.environment_config import EnvironmentConfig
from pm_agent.gates.narrow import joined_command
from pm_agent.preflight._candidates import Candidate, Finding, Rejected, Slot, Source, project_folders
from pm_agent.preflight._make import detect_make
from pm_agent.preflight._native import detect_go, detect_gradle, detect_maven, detect_rust
from pm_agent.preflight._node import detect_node
from pm_agent.preflight._probe import MAKEFILES, Probe
from pm_agent.preflight._python import detect_python, tool_config
from pm_agent.preflight._ruby_php import detect_php, detect_ruby
from pm_agent.preflight._workspace import uv_workspace


@dataclass(frozen=True)
class Detection:
    """The environment pm-agent init writes, with the reason for each command and the rejected ones."""

    environment: EnvironmentConfig
    chosen: Mapping[Slot, Candidate]
    rejected: tuple[Rejected, ...]

    @property
    def problems(self) -> dict[Slot, str]:
        """Slots whose chosen command is known not to work yet, with what to fix."""
        return {slot: c.problem for slot, c in self.chosen.items() if c.problem is not None}


_LANGUAGES = (Source.PYTHON, Source.NODE, Source.GO, Source.RUST, Source.MAVEN, Source.GRADLE, Source.RUBY, Source.PHP)
_FIRST_MAKE = (Source.MAKE, *_LANGUAGES)
_LAST_MAKE = (*_LANGUAGES, Source.MAKE)
ORDER: dict[Slot, tuple[Source, ...]] = {
    Slot.SETUP: _LANGUAGES,
    Slot.LINT: _FIRST_MAKE,
    Slot.TYPECHECK: _FIRST_MAKE,
    Slot.FORMAT: _FIRST_MAKE,
    Slot.TEST: _LAST_MAKE,
    Slot.BUILD: _LAST_MAKE,
}


_DETECTORS: dict[Source, Callable[[Probe], Finding | None]] = {
    Source.MAKE: detect_make,
    Source.PYTHON: detect_python,
    Source.NODE: detect_node,
    Source.GO: detect_go,
    Source.RUST: detect_rust,
    Source.MAVEN: detect_maven,
    Source.GRADLE: detect_gradle,
    Source.RUBY: detect_ruby,
    Source.PHP: detect_php,
}
# Files that make a folder a project's root, in any of the languages above.
PROJECT_FILES = (
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "requirements.txt",
    "Pipfile",
    "manage.py",
    "package.json",
    "go.mod",
    "Cargo.toml",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "settings.gradle",
    "settings.gradle.kts",
    "Gemfile",
    "composer.json",
)
# The Python ones: a uv workspace root that is no Python project holds the root's other projects only.
_PYTHON_FILES = frozenset({"pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "Pipfile", "manage.py"})
_MAX_PROJECTS = 8


def detect_environment(repo: Path, *, path: str | None = None) -> Detection:
    """The environment contract for `repo`, looking tools up on `path` (default: this process's PATH).

    A repository whose projects live in folders of its root (`backend/`, `frontend/`), none at the root itself,
    gets each slot's command of every such project, each run from its folder, all of them even when one fails
    (`gates.narrow.joined_command`, in folder order). So does a uv workspace root that is no Python project of its
    own (`_workspace.py`): its members are the Python projects, joined with the root's other projects (folder `.`)."""
    repo = repo.resolve()
    path = os.environ.get("PATH", os.defpath) if path is None else path
    if (members := uv_workspace(repo, tool_config)) is not None:
        return _workspace(repo, path, members)
    folders = _project_folders(repo)
    if not folders:
        return _detect(Probe(repo=repo, path=path))
    return _combined([(folder, _detect(Probe(repo=repo / folder, path=path))) for folder in folders])


def _workspace(repo: Path, path: str, members: list[str]) -> Detection:
    """The members of a uv workspace, each from its folder with the workspace's .venv, after the root's other
    projects (its package.json, its go.mod: all but Python); with none at the root, the root's project folders as
    for a root without projects."""
    note = Rejected(
        "pyproject.toml",
        f"a uv workspace root without [project]: its members ({', '.join(members)}) are the Python projects,"
        " each run from its folder with the workspace's .venv at the root",
    )
    others = [name for name in PROJECT_FILES if name not in _PYTHON_FILES and (repo / name).is_file()]
    parts = [(".", _detect(Probe(repo=repo, path=path), without=Source.PYTHON))] if others else []
    folders = [f for f in _top_projects(repo) if f not in members] if not others else []
    for folder in sorted([*members, *folders])[:_MAX_PROJECTS]:
        workspace = repo if folder in members else None
        parts.append((folder, _detect(Probe(repo=repo / folder, path=path, workspace=workspace))))
    detection = _combined(parts)
    return Detection(detection.environment, detection.chosen, (note, *detection.rejected))


def _combined(parts: list[tuple[str, Detection]]) -> Detection:
    """Each slot's commands of the projects, each run from its folder (`_joined`)."""
    chosen: dict[Slot, Candidate] = {}
    rejected: list[Rejected] = []
    for slot in Slot:
        mine = [(folder, d.chosen[slot]) for folder, d in parts if slot in d.chosen]
        if mine:
            chosen[slot] = _joined(slot, mine)
    for folder, d in parts:
        rejected += [Rejected(f"(in {_label(folder)}) {r.command}", r.why, r.slot) for r in d.rejected]
    return _detection(chosen, rejected)


def _detect(probe: Probe, *, without: Source | None = None) -> Detection:
    detectors = [(source, detect) for source, detect in _DETECTORS.items() if source is not without]
    findings = {source: found for source, detect in detectors if (found := detect(probe)) is not None}
    rejected = [r for found in findings.values() for r in found.rejected]
    chosen: dict[Slot, Candidate] = {}
    for slot in Slot:
        winner, dropped = _choose(slot, [(s, findings[s]) for s in ORDER[slot] if s in findings])
        if winner is not None:
            chosen[slot] = winner
        rejected += dropped
    return _detection(chosen, rejected)


def _detection(chosen: dict[Slot, Candidate], rejected: list[Rejected]) -> Detection:
    """The contract the chosen commands make, with them and the rejections."""
    environment = EnvironmentConfig(**{slot.value: c.command for slot, c in chosen.items()})
    return Detection(environment=environment, chosen=chosen, rejected=tuple(rejected))


def _project_folders(repo: Path) -> list[str]:
    """The folders of the root that hold a project, when the root itself holds none (and no Makefile)."""
    if any((repo / name).is_file() for name in (*PROJECT_FILES, *MAKEFILES)):
        return []
    return _top_projects(repo)[:_MAX_PROJECTS]


def _top_projects(repo: Path) -> list[str]:
    """The folders of the root that hold a project file, sorted."""
    return [p.name for p in project_folders(repo) if any((p / f).is_file() for f in PROJECT_FILES)]


def _joined(slot: Slot, commands: list[tuple[str, Candidate]]) -> Candidate:
    """One command for the slot from each project's, each run from its folder, every one of them even when one
    before failed (`joined_command`); the root's alone (a workspace's root project, folder `.`) as it is."""
    if [folder for folder, _ in commands] == ["."]:
        return commands[0][1]
    command = joined_command([(folder, c.command) for folder, c in commands])
    reason = "; ".join(f"{_label(folder)}: {c.reason}" for folder, c in commands)
    problem = "; ".join(f"{_label(folder)}: {c.problem}" for folder, c in commands if c.problem) or None
    return Candidate(slot, command, reason, problem)


def _label(folder: str) -> str:
    """How reasons name a project's folder: `backend/`, `the root` for `.`."""
    return "the root" if folder == "." else f"{folder}/"


def _choose(slot: Slot, findings: list[tuple[Source, Finding]]) -> tuple[Candidate | None, list[Rejected]]:
    """The winner for `slot` across sources in order (a Makefile target that cannot run gives way to a later source's
    working command: its recipe runs a program not on PATH, which the virtualenv has), and every other candidate
    with why it lost."""
    picks: list[tuple[Source, Candidate, list[Candidate]]] = []
    for source, found in findings:
        own = [c for c in found.candidates if c.slot == slot]
        if own:
            picks.append((source, next((c for c in own if c.problem is None), own[0]), own))
    if not picks:
        return None, []
    # Only a Makefile target gives way: it wraps a tool a later source runs itself. A broken Python or Node command
    # stays the choice, marked, for the user to set up (npm's tests are no stand-in for pytest's).
    chosen = 0
    for i, (source, pick, _) in enumerate(picks):
        if pick.problem is None or source is not Source.MAKE:
            chosen = i if pick.problem is None else 0
            break
    winner = picks[chosen][:2]
    dropped: list[Rejected] = []
    for i, (source, pick, own) in enumerate(picks):
        if i < chosen:  # every candidate of an earlier source is broken: the working one wins
            dropped += [Rejected(c.command, f"{c.problem}; {winner[1].command} works", slot) for c in own]
        elif i > chosen:
            dropped += [Rejected(c.command, _why_first(slot, winner, source), slot) for c in own]
        else:
            for c in own:
                if c is not pick:
                    # Lost for being broken only when the winner works; otherwise it lost on order.
                    broken = c.problem is not None and pick.problem is None
                    why = c.problem if broken and c.problem else f"{pick.command} is preferred ({pick.reason})"
                    dropped.append(Rejected(c.command, why, slot))
    return winner[1], dropped


def _why_first(slot: Slot, winner: tuple[Source, Candidate], loser: Source) -> str:
    source, chosen = winner
    if source is Source.MAKE:
        return f"{chosen.command} comes first: the Makefile target is the project's own entry point, with its flags"
    if loser is Source.MAKE and slot is Slot.TEST:
        return f"{chosen.command} comes first: pm-agent narrows it to a task's tests; make cannot be narrowed"
    return (
        f"{chosen.command} ({source.value}) comes first and pm-agent runs one {slot.label} command"
        " (join them with && in pm-agent.yaml to run both)"
    )


__all__ = ["ORDER", "Candidate", "Detection", "Finding", "Rejected", "Slot", "Source", "detect_environment"]
