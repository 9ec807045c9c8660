"""What the findings parsers produce and what a ratchet decides: frozen pydantic models.

A `Finding` is one diagnostic (lint, type check, compiler) or one failing test. Its `key` is the
identity the ratchet compares: it leaves out line and column, and the message is normalised so a
finding whose code only moved (or whose message names a line that moved) keeps its key.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict

MAX_FINDINGS = 10_000
"""At most this many findings are kept in a `FindingSet` or in each list of a `Ratchet`."""

MAX_MESSAGE_CHARS = 500

_WS = re.compile(r"\s+")
# "line 12", "on line 12", "lines 3-5", "line: 12", "(line 6)": line references inside a message.
_LINE_WORD = re.compile(r"\b(lines?)(?:\s+|\s*[:#]\s*)\d+(?:\s*(?:-|–|to|and|,)\s*\d+)*", re.IGNORECASE)
# "add_test.go:18", "src/lib.rs:25:9", "a.py:3": a file reference with a line (and column).
_FILE_LINE = re.compile(r"(\.[A-Za-z][A-Za-z0-9]{0,5})(?::\d+){1,2}\b")
# pylint's duplicate-code spans: "==pkg.a:[3:10]".
_SPAN = re.compile(r"\[\d+:\d+\]")


def normalise_message(message: str) -> str:
    """Collapse whitespace and replace line references with `N`, keeping the rest of the text."""
    text = _WS.sub(" ", message).strip()
    text = _LINE_WORD.sub(lambda m: f"{m.group(1)} N", text)
    text = _FILE_LINE.sub(r"\1:N", text)
    return _SPAN.sub("[N:N]", text)


def finding_key(tool: str, path: str | None, code: str | None, message: str, test_id: str | None) -> str:
    """The ratchet identity of a finding (see `Finding.key`)."""
    if test_id is not None:
        return f"{tool}|{normalise_message(test_id)}"
    return f"{tool}|{path or ''}|{code or ''}|{normalise_message(message)}"


def one_line(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """`text` on one line (whitespace collapsed), cut to `limit` characters."""
    flat = _WS.sub(" ", text).strip()
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


class Finding(BaseModel):
    """One diagnostic or one failing test, as a tool printed it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str
    """The parser's tool name: "pytest", "ruff", "mypy", "tsc", "go-vet", "clippy", ..."""
    path: str | None
    """Repo-relative with forward slashes and no leading "./" (absolute when no root was known)."""
    line: int | None
    code: str | None
    """Rule or error code: F401, arg-type, TS2322, clippy::needless_return, C0114; FAILED/ERROR for tests."""
    message: str
    """As printed, on one line."""
    test_id: str | None = None
    """For a failing test: its id (pytest node id, unittest id, `pkg::TestName`); the key is built from it."""

    @property
    def key(self) -> str:
        """Identity that survives shifted lines and columns: tool|path|code|normalised message (tests: the id)."""
        return finding_key(self.tool, self.path, self.code, self.message, self.test_id)


class FindingSet(BaseModel):
    """The findings parsed from one command's output."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    parser: str | None
    """Which parser(s) understood the output ("ruff", "ruff+mypy"); None = not parsed."""
    findings: tuple[Finding, ...] = ()
    total: int = 0
    """How many findings were parsed, including those past the cap."""
    truncated: bool = False
    """True when `findings` holds only the first MAX_FINDINGS of `total`."""
    note: str = ""
    """Why the output was not parsed, or what was left out."""

    @property
    def parsed(self) -> bool:
        """Whether a parser understood the output."""
        return self.parser is not None


Rule = Literal["clean", "findings", "exit-status"]


class Ratchet(BaseModel):
    """A command's current run compared with its baseline run: fail only on what got worse."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    passed: bool
    rule: Rule
    """clean: current exit 0; findings: compared finding sets; exit-status: not parsed, exit codes compared."""
    new: tuple[Finding, ...] = ()
    """In the current run and not in the baseline (as a multiset: 3 of a key where the baseline had 2 is 1 new)."""
    preexisting: tuple[Finding, ...] = ()
    """In both runs (the current run's instances)."""
    fixed: tuple[Finding, ...] = ()
    """In the baseline and no longer in the current run."""
    explanation: str
    """One or two lines for the evidence: which rule, the counts."""
    parser: str | None = None
    """The parser the comparison used, None when the outputs were not parsed."""
    new_count: int = 0
    preexisting_count: int = 0
    fixed_count: int = 0
    """Full counts: each tuple above holds at most MAX_FINDINGS."""


__all__ = [
    "MAX_FINDINGS",
    "Finding",
    "FindingSet",
    "Ratchet",
    "Rule",
    "finding_key",
    "normalise_message",
    "one_line",
]
