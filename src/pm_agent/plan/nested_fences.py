"""A fenced block that holds fences of its own, as agents write a README into a plan: read as one block.

    ```markdown
    # My package
    ```bash
    pip install it
    ```
    ## Usage            <- by Markdown's rules the block ended at the ``` above: this heading ends the task
    ```

By CommonMark's rules the outer block ends at the first bare ``` (the inner block's close), so everything
after it is plan text again: its headings end the task early, its real closing ``` opens a code block that
swallows the task's next steps, and the rest of the task (often the commit) is lost. A public agent-written
plan does exactly this (a README in a ```markdown block).

`mend` finds such a block by its content ending inside an inner fence it opened (a fence line with an info
string, never closed), and its real close by what Markdown makes of the rest of the task (`_Finder`). The
block is then read up to that close by giving both of its fence lines a longer run of backticks; line
numbers do not change. Each mended block is reported, with its lines, in a warning; anything else is left as
Markdown reads it. The parser calls `mend` only when a task held such a block and its text after the block
was misread (parser.py, `cut_short`), so other plans pay nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Mended", "holds_open_fence", "mend"]

# Fence lines and ATX headings, the only lines that matter here (found by one C-speed scan).
_MARKS = re.compile(
    r"^ {0,3}(?:(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)|(?P<hashes>#{1,6})(?:[ \t]+(?P<title>[^\n]*))?)$", re.M
)
_MAX_ROUNDS = 50  # each round mends one block; a plan with more is left as it is after that many


@dataclass(frozen=True)
class Mended:
    """One block read as a whole: its opening line, where Markdown ended it, where it ends now (1-based)."""

    opened: int
    markdown_end: int
    end: int
    info: str
    task_id: str | None

    def warning(self) -> str:
        """What the plan's reader is told (the caller prefixes the file)."""
        fence = f"```{self.info}" if self.info else "```"
        task = f"Task {self.task_id}" if self.task_id else "the task"
        return (
            f"{self.opened}: the {fence} block holds ``` fences of its own; by Markdown's rules it ends at line "
            f"{self.markdown_end}, and the rest of {task} is misread after it (its headings would end the task, "
            f"its steps fall into code blocks). Read as one block up to line {self.end}; a longer fence "
            f"(````{self.info}) around such a block says so in Markdown itself"
        )


@dataclass
class _Mark:
    line: int  # 1-based
    start: int  # offset of the line in the text
    fence: str | None
    info: str
    level: int
    title: str


@dataclass
class _Fence:
    opener: _Mark
    char: str
    size: int
    inner_open: bool = False  # the content's own fence lines: an inner block opened and not closed


def holds_open_fence(content: str) -> bool:
    """Whether a fenced block's content (as Markdown read it) ends inside a fence it opened: a line such as
    ```bash with no close after it. The parser asks this of each task's fences (most hold no fence at all)."""
    if "```" not in content and "~~~" not in content:
        return False
    inner = False
    for mark in _marks(content):
        if mark.fence is not None:
            inner = bool(mark.info) or not inner
    return inner


def _marks(text: str) -> list[_Mark]:
    found: list[_Mark] = []
    line, pos = 1, 0
    for match in _MARKS.finditer(text):
        line += text.count("\n", pos, match.start())
        pos = match.start()
        fence = match.group("fence")
        if fence is not None:
            found.append(_Mark(line, pos, fence, match.group("info").strip(), 0, ""))
        else:
            title = (match.group("title") or "").strip().rstrip("#").strip()
            found.append(_Mark(line, pos, None, "", len(match.group("hashes")), title))
    return found


def _closes(mark: _Mark, fence: _Fence) -> bool:
    return mark.fence is not None and mark.fence[0] == fence.char and len(mark.fence) >= fence.size and not mark.info


class _Finder:
    """The first block to mend, read as Markdown reads it (a block ends at the first bare fence that can close it).

    A block that Markdown closed inside an inner fence of its own is suspect. Its real close is found in one of
    two ways within the task's section: a later block opened by a bare fence that itself ends inside an inner
    fence, or runs to the end of the plan, is the mirror image (the real close opened it, and the task's next
    fenced step is inside it); else, when headings at the task's level or above follow (they end the task), the
    first bare fence after the last of them."""

    def __init__(self, task_heading: Callable[[str], tuple[str, str] | None]) -> None:
        self.task_heading = task_heading
        self.task_id: str | None = None
        self.task_level: int | None = None
        self.fence: _Fence | None = None  # the block the scan is in
        self.suspect: tuple[_Fence, _Mark] | None = None  # a block closed while one of its inner blocks was open
        self.stray = False  # a heading after it ends the task
        self.close: _Mark | None = None  # the first bare fence after the last such heading

    def run(self, marks: list[_Mark]) -> Mended | None:
        for mark in marks:
            hit = self._in_block(mark, self.fence) if self.fence is not None else self._outside(mark)
            if hit is not None:
                return hit
        if self.fence is not None and self._mirror(self.fence):  # it runs to the end of the plan
            return self._found(self.fence.opener)
        return self._found(self.close) if self.close is not None else None

    def _found(self, end: _Mark) -> Mended:
        assert self.suspect is not None
        block, markdown_end = self.suspect
        return Mended(block.opener.line, markdown_end.line, end.line, block.opener.info, self.task_id)

    def _mirror(self, block: _Fence) -> bool:
        return self.suspect is not None and not block.opener.info and _closes(block.opener, self.suspect[0])

    def _in_block(self, mark: _Mark, block: _Fence) -> Mended | None:
        if not _closes(mark, block):
            if mark.fence is not None and mark.fence[0] == block.char:
                block.inner_open = bool(mark.info) or not block.inner_open
            return None
        self.fence = None
        if block.inner_open:
            if self._mirror(block):
                return self._found(block.opener)
            if self.suspect is None:
                self.suspect, self.stray, self.close = (block, mark), False, None
        return None

    def _outside(self, mark: _Mark) -> Mended | None:
        if mark.fence is not None:
            if self.suspect is not None and self.stray and self.close is None and _closes(mark, self.suspect[0]):
                self.close = mark
            self.fence = _Fence(mark, mark.fence[0], len(mark.fence))
            return None
        parsed = self.task_heading(mark.title)
        if parsed is not None:  # the task's section ends
            if self.close is not None:
                return self._found(self.close)
            self.task_level, self.task_id = mark.level, parsed[0]
            self.suspect, self.stray, self.close = None, False, None
        elif self.suspect is not None and self.task_level is not None and mark.level <= self.task_level:
            self.stray, self.close = True, None
        return None


def mend(text: str, task_heading: Callable[[str], tuple[str, str] | None]) -> tuple[str, list[Mended]]:
    """`text` with each block that holds fences of its own read as one block (see the module), and what was mended.

    `task_heading` reads a heading's text as (id, title) when it starts a task (`fields.task_heading`)."""
    if text.count("```") < 4 and text.count("~~~") < 4:
        return text, []
    mended: list[Mended] = []
    for _ in range(_MAX_ROUNDS):
        block = _Finder(task_heading).run(_marks(text))
        if block is None:
            break
        marks = _marks(text)
        inner = max((len(m.fence) for m in marks if m.fence and block.opened < m.line < block.end), default=0)
        opening, end = (next(m for m in marks if m.line == line) for line in (block.opened, block.end))
        assert opening.fence is not None
        longer = opening.fence[0] * (max(len(opening.fence), inner) + 1)
        text = _lengthen(_lengthen(text, end, longer), opening, longer)  # the later line first: offsets hold
        mended.append(block)
    return text, mended


def _lengthen(text: str, mark: _Mark, run: str) -> str:
    """The fence line at `mark` with its run of fence characters replaced by `run` (indent and info kept)."""
    assert mark.fence is not None
    at = text.index(mark.fence, mark.start)
    return text[:at] + run + text[at + len(mark.fence) :]
