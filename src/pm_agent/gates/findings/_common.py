"""Shared pieces of the parsers: the raw finding, a parser's result, path and line clean-up.

Parsers build light `Raw` tuples, not pydantic models: an output of megabytes can hold a hundred
thousand findings and only the first MAX_FINDINGS ever become `Finding`s.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from pm_agent.gates.findings.models import one_line

MAX_LINE_CHARS = 4000
"""Longer output lines are cut before matching, so each regex sees a bounded line."""

HARD_CAP = 100_000
"""A parser stops collecting past this many findings; the set is then too large to compare."""

# CSI (colours), OSC (links) and charset selection (`ESC ( B`, which rustfmt's terminal library prints after colours).
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]")


class Raw(NamedTuple):
    """A finding before it becomes a `Finding`; `at` is the output line it came from."""

    tool: str
    path: str | None
    line: int | None
    code: str | None
    message: str
    test_id: str | None = None
    at: int = -1


@dataclass
class Out:
    """What one parser found: its findings, and the count the tool's own summary announced, if any."""

    raws: list[Raw] = field(default_factory=list)
    expected: int | None = None
    """The tool's own count of failing findings (mypy "Found 4 errors"), None when it printed none."""
    counted: int | None = None
    """What to compare with `expected` when it is not len(raws) (e.g. eslint's total counts warnings too)."""
    capped: bool = False
    problem: str | None = None
    """Why this output cannot be trusted even though it parsed (a crash report, a missing closing line)."""

    def add(self, raw: Raw) -> None:
        """Keep `raw` unless the hard cap is reached."""
        if len(self.raws) >= HARD_CAP:
            self.capped = True
            return
        self.raws.append(raw)

    def mismatch(self) -> str | None:
        """A sentence when the parsed count disagrees with the tool's own summary."""
        if self.problem is not None:
            return self.problem
        if self.expected is None or self.capped:
            return None
        got = len(self.raws) if self.counted is None else self.counted
        if got == self.expected:
            return None
        return f"its summary reports {self.expected} but {got} were parsed (output cut or in an unknown format)"


@dataclass(frozen=True)
class Ctx:
    """How to clean paths and messages: `root` is the directory the command ran in, when known.

    `command` lets a parser see options that change what fails (eslint's --max-warnings).
    """

    tool: str
    root: str | None = None
    command: str = ""

    def path(self, raw_path: str) -> str:
        """Forward slashes, no leading "./", relative to `root` when under it."""
        p = raw_path.strip().replace("\\", "/")
        if self.root and p.startswith(self.root):
            p = p[len(self.root) :]
        while p.startswith("./"):
            p = p[2:]
        return p

    def message(self, text: str) -> str:
        """One line, with the root directory taken out of any path it names."""
        if self.root:
            text = text.replace(self.root, "")
        return one_line(text)


def norm_root(root: str | None) -> str | None:
    """`root` with forward slashes and one trailing slash; None stays None."""
    if not root:
        return None
    return root.replace("\\", "/").rstrip("/") + "/"


def split_lines(output: str) -> list[str]:
    """Output lines without ANSI colours, each cut to MAX_LINE_CHARS."""
    text = _ANSI.sub("", output) if "\x1b" in output else output
    return [line[:MAX_LINE_CHARS] for line in text.splitlines()]


def as_int(text: str | None) -> int | None:
    """`text` as an int, None for None or an empty string."""
    return int(text) if text else None


def located(ctx: Ctx, found: re.Match[str], code: str | None, index: int, line: str = "line") -> Raw:
    """A finding at the match's `path` and line (the group named `line`), with its `msg`, from output line `index`."""
    path, row = ctx.path(found.group("path")), as_int(found.group(line))
    return Raw(ctx.tool, path, row, code, ctx.message(found.group("msg")), at=index)


ParseFn = Callable[[Sequence[str], Ctx], Out]

__all__ = [
    "HARD_CAP",
    "MAX_LINE_CHARS",
    "Ctx",
    "Out",
    "ParseFn",
    "Raw",
    "as_int",
    "located",
    "norm_root",
    "split_lines",
]
