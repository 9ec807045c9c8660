"""The vocabulary of detection: slots, sources, candidates, rejections, one source's finding."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

# Folders of a repository's top that hold no project of its own: what installs and builds make, and the docs.
NOT_PROJECTS = frozenset({"node_modules", "vendor", "venv", "env", "site-packages", "build", "dist", "target", "docs"})


def project_folders(repo: Path) -> list[Path]:
    """The folders of `repo`'s top that may hold a project of their own (not hidden, not `NOT_PROJECTS`), sorted."""
    try:
        return sorted(p for p in repo.iterdir() if p.is_dir() and p.name[0] != "." and p.name not in NOT_PROJECTS)
    except OSError:
        return []


class Slot(StrEnum):
    """An environment-contract command, named as its pm-agent.yaml key."""

    SETUP = "setup_command"
    LINT = "lint_command"
    TYPECHECK = "typecheck_command"
    FORMAT = "format_command"
    TEST = "test_command"
    BUILD = "build_command"

    @property
    def label(self) -> str:
        """`setup`, `lint`, `typecheck`, `test`, `build`."""
        return self.value.removesuffix("_command")


class Source(StrEnum):
    """Where a candidate comes from."""

    MAKE = "make"
    PYTHON = "python"
    NODE = "node"
    GO = "go"
    RUST = "rust"
    MAVEN = "maven"
    GRADLE = "gradle"
    RUBY = "ruby"
    PHP = "php"


@dataclass(frozen=True)
class Candidate:
    """A command that fits a slot, why, and what still stands in its way (None: nothing known)."""

    slot: Slot
    command: str
    reason: str
    problem: str | None = None


@dataclass(frozen=True)
class Rejected:
    """A command considered and not written, and why; `slot` None for a tool or file (`python`)."""

    command: str
    why: str
    slot: Slot | None = None


@dataclass
class Finding:
    """What one source found: candidates in its order of preference, and what it dropped."""

    candidates: list[Candidate] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)


def read_manifest(path: Path, found: Finding) -> dict[str, Any] | None:
    """A JSON manifest's object (package.json, composer.json), or None with the reason in `found.rejected`."""
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        line = f" line {exc.lineno}" if isinstance(exc, json.JSONDecodeError) else ""
        found.rejected.append(Rejected(path.name, f"not valid JSON{line} ({exc}); its scripts were not read"))
        return None
    if not isinstance(data, dict):
        found.rejected.append(Rejected(path.name, "not a JSON object; its scripts were not read"))
        return None
    return data
