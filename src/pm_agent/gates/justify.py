"""What a change adds that weakens a check, and whether the agent's review note justifies it.

A `Weakening` is one such addition: an inline suppression (`# noqa: F401` at `src/a.py:3`), a new ignore
or exclude entry in a linter's, type checker's or test runner's configuration, or a conftest hook that
deselects or skips tests. Each must be justified by the agent's `complete` signal, leniently read:

- where: an entry of `reviewNote.risks` or of the top-level `risks`, or a line (or `;`-separated part) of
  the review note's or the signal's `summary`;
- what: the entry names the file (its path or its file name) and either the line (`src/a.py:3`,
  `src/a.py:2-4`, `line 3`) or one of the codes the suppression names (`F401`, `attr-defined`, the glob of
  a per-file ignore); naming only the file is enough when the change adds a single weakening there;
- why: besides those references the entry says why in at least `MIN_REASON_WORDS` words.

Example: `"src/calc/api.py:3 noqa F401: the name is re-exported as part of the public API"`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from pm_agent.gates.models import AgentReport

MIN_REASON_WORDS = 3

_WORD = re.compile(r"[A-Za-z][A-Za-z'-]+")
_LINE_WORD = re.compile(r"\blines?\s+(\d+)(?:\s*(?:-|to)\s*(\d+))?", re.IGNORECASE)
# Words that only restate what the suppression is: they do not count towards the reason.
_NOT_REASON = frozenset(
    {"noqa", "type", "ignore", "ignores", "pyright", "pylint", "disable", "eslint", "nolint", "allow", "line", "lines"}
)


@dataclass(frozen=True)
class Weakening:
    """One weakening the change adds: `path:line`, the quoted line, what it does, the codes it names."""

    check: str  # "lint/type check" or "test runner": what it weakens
    path: str
    line: int | None
    text: str  # the line as written (stripped), or the setting as `key = value`
    what: str  # a short description: "inline suppression of F401", "ruff ignore += E501"
    codes: tuple[str, ...] = ()

    def where(self) -> str:
        """`path:line`, or `path` when the line is unknown."""
        return f"{self.path}:{self.line}" if self.line else self.path

    def quote(self) -> str:
        """One evidence line: where, what, and the line itself."""
        return f"{self.where()}: {self.what}: {self.text[:160]}"


@dataclass
class Judgement:
    """Weakenings split into those the review note justifies (with the entry) and those it does not."""

    justified: list[tuple[Weakening, str]] = field(default_factory=list)
    unjustified: list[Weakening] = field(default_factory=list)

    def lines(self) -> list[str]:
        """Evidence: each unjustified weakening quoted, then the justified ones with their reason."""
        out = [f"  UNJUSTIFIED {w.quote()}" for w in self.unjustified]
        out += [f"  justified   {w.quote()}\n      by: {why[:200]}" for w, why in self.justified]
        return out


def justification_entries(report: AgentReport) -> list[str]:
    """The texts that may justify a weakening: review note risks, signal risks, summary lines."""
    entries: list[str] = []
    note = report.review_note
    if note is not None:
        entries += [r for r in note.risks or [] if r.strip()]
    entries += [r for r in report.risks if r.strip()]
    for summary in (note.summary if note is not None else "", report.summary):
        entries += [part.strip() for part in re.split(r"\n|;\s", summary) if part.strip()]
    return entries


def _names(path: str) -> list[str]:
    pure = PurePosixPath(path)
    return [path] if pure.name == path else [path, pure.name]


def _mentions_file(entry: str, path: str) -> bool:
    return any(re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", entry) for name in _names(path))


def _lines_named(entry: str, path: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for name in _names(path):
        for match in re.finditer(rf"(?<![\w.-]){re.escape(name)}:(\d+)(?:-(\d+))?", entry):
            first = int(match[1])
            spans.append((first, int(match[2] or first)))
    for match in _LINE_WORD.finditer(entry):
        first = int(match[1])
        spans.append((first, int(match[2] or first)))
    return spans


def _codes_named(entry: str, codes: Sequence[str]) -> bool:
    return any(re.search(rf"(?<![\w-]){re.escape(code)}(?![\w-])", entry, re.IGNORECASE) for code in codes if code)


def reason_words(entry: str, weakening: Weakening) -> int:
    """How many words of `entry` say why, once file names, lines, codes and suppression words are removed."""
    text = entry
    for name in _names(weakening.path):
        text = text.replace(name, " ")
    for code in weakening.codes:
        text = re.sub(rf"(?<![\w-]){re.escape(code)}(?![\w-])", " ", text, flags=re.IGNORECASE)
    return sum(1 for word in _WORD.findall(text) if word.lower() not in _NOT_REASON)


def covers(entry: str, weakening: Weakening, alone_in_file: bool) -> bool:
    """Whether `entry` names this weakening (file, then line or code, or the file alone) and says why."""
    if not _mentions_file(entry, weakening.path):
        return False
    spans = _lines_named(entry, weakening.path)
    named_line = weakening.line is not None and any(a <= weakening.line <= b for a, b in spans)
    named_code = _codes_named(entry, weakening.codes)
    if not (named_line or named_code or (alone_in_file and not spans)):
        return False
    return reason_words(entry, weakening) >= MIN_REASON_WORDS


def judge_weakenings(weakenings: Sequence[Weakening], report: AgentReport) -> Judgement:
    """Split `weakenings` by whether the agent's report justifies each one (see the module docstring)."""
    entries = justification_entries(report)
    per_file = Counter(w.path for w in weakenings)
    judgement = Judgement()
    for weakening in weakenings:
        alone = per_file[weakening.path] == 1
        entry = next((e for e in entries if covers(e, weakening, alone)), None)
        if entry is None:
            judgement.unjustified.append(weakening)
        else:
            judgement.justified.append((weakening, entry))
    return judgement


JUSTIFY_HINT = (
    "To keep one, justify it in reviewNote.risks, one entry each: 'path:line CODE: why' "
    "(e.g. 'src/app.py:3 F401: re-exported as part of the public API'); otherwise remove it and fix the code."
)

__all__ = [
    "JUSTIFY_HINT",
    "MIN_REASON_WORDS",
    "Judgement",
    "Weakening",
    "covers",
    "judge_weakenings",
    "justification_entries",
    "reason_words",
]
