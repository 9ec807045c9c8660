"""The vocabulary of detection: slots, sources, candidates, rejections, one source's finding."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Slot(StrEnum):
    """An environment-contract command, named as its pm-agent.yaml key."""

    LINT = "lint_command"
    TYPECHECK = "typecheck_command"
    TEST = "test_command"
    BUILD = "build_command"

    @property
    def label(self) -> str:
        """`lint`, `typecheck`, `test`, `build`."""
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
