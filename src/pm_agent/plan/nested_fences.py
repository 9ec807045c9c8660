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

`mend` looks at the tasks the parser names (those holding such a suspect block whose text after it was
misread: a heading ended the task, or a code block swallowed its next fenced step) and reads the suspect up to
its real close, the first bare fence after Markdown's close that the plan's own structure follows (the next
step label, the next task, the end): `_Finder` says how. Both of the block's fence lines get a longer run of
backticks, so line numbers do not change; each mended block is reported, with its lines, in a warning.
Anything else is left as Markdown reads it, and other plans pay nothing.

A task heading can be such a block's own text too: a ```python block whose string is a plan template, with its
own ```[language] fence and `### Task 1.2: [Next Task]`. Markdown ends the block at the template's inner close
and the template's heading reads as a task, which the plan then names again (another public agent-written plan
failed with "duplicate task id"). When the parser finds an id named twice, the task before the first heading is
looked at with that heading passed over once (`stray`): past it the block's text pairs its own fences, and the
second heading with that id is the real task, where the search stops.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

__all__ = ["Mended", "fence_lines", "is_markdown_info", "mend", "suspect"]

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


def fence_lines(content: str) -> tuple[bool, bool]:
    """(whether a fenced block's content, as Markdown read it, ends inside a fence it opened, such as ```bash with
    no close after it; whether it holds any fence line at all). The parser asks this of each task's fences."""
    if "```" not in content and "~~~" not in content:
        return False, False
    inner, seen = False, False
    for mark in _marks(content):
        if mark.fence is not None:
            inner, seen = bool(mark.info) or not inner, True
    return inner, seen


def suspect(info: str, ends_open: bool, has_fences: bool) -> bool:
    """Whether a task's block may have ended early: inside a fence of its own, or a ```markdown block that Markdown
    closed at its first inner fence (its content then holds none)."""
    return ends_open or (not has_fences and is_markdown_info(info))


def _marks(text: str, line: int = 1, pos: int = 0) -> Iterator[_Mark]:
    """The fence lines and headings of `text` from offset `pos`, which is on 1-based `line`."""
    for match in _MARKS.finditer(text, pos):
        line += text.count("\n", pos, match.start())
        pos = match.start()
        fence = match.group("fence")
        if fence is not None:
            yield _Mark(line, pos, fence, match.group("info").strip(), 0, "")
        else:
            title = (match.group("title") or "").strip().rstrip("#").strip()
            yield _Mark(line, pos, None, "", len(match.group("hashes")), title)


def _closes(mark: _Mark, fence: _Fence) -> bool:
    return mark.fence is not None and mark.fence[0] == fence.char and len(mark.fence) >= fence.size and not mark.info


_MARKDOWN_INFOS = frozenset({"markdown", "md", "mdx"})
# A step label (`**Step 2: Commit**`, `- [ ] **Step 2: ...`, `### Step 2: ...`), and its number.
# Its form (checkbox, `**` or the heading's hashes) is compared too: a README in the block may have its own
# `### Step 2` headings under a plan whose steps are `**Step N:**` labels.
_STEP = re.compile(r"^\s*([-*+]\s+\[[ xX]\]\s+)?(\*\*|#{1,6})\s*Step\s+(\d+)", re.IGNORECASE)
Step = tuple[bool, str, int]  # (a checkbox, `**` or the hashes, the number)


def _step(text: str) -> Step | None:
    match = _STEP.match(text)
    return (match.group(1) is not None, match.group(2), int(match.group(3))) if match is not None else None
_RULE = re.compile(r"^ {0,3}(?:-{3,}|\*{3,}|_{3,})\s*$")


def is_markdown_info(info: str) -> bool:
    """Whether a fence's info string says its code is Markdown (a README, a plan, a SKILL.md)."""
    words = info.split()
    return bool(words) and words[0].lower() in _MARKDOWN_INFOS


class _Finder:
    """The first block to mend (see the module): Markdown's reading finds the suspect and the damage, the plan's
    structure finds the real close.

    Suspect: a block that Markdown closed inside an inner fence of its own, or any ```markdown block. Damage,
    within the task's section after Markdown's close: a heading at the task heading's level or above (it ends
    the task), or a block opened by a bare fence that itself ends inside an inner fence or runs to the end of
    the plan (the real close read as an opening, the task's next fenced step inside it). The real close: the
    first bare fence after Markdown's that the plan's structure follows: the task's next step label (the one
    after the step that holds the block), the next task heading (a rule may stand between), or the end."""

    def __init__(
        self,
        lines: list[str],
        task_heading: Callable[[str], tuple[str, str] | None],
        stray: Callable[[str], str | None] | None = None,
    ) -> None:
        self.lines = lines
        self.task_heading = task_heading
        self.stray = stray or (lambda _id: None)
        self.task_id: str | None = None
        self.task_level: int | None = None
        self.fence: _Fence | None = None  # the block the scan is in
        self.suspect: tuple[_Fence, _Mark] | None = None  # the first suspect of the task, and Markdown's close

    def run(self, marks: Iterator[_Mark]) -> Mended | None:
        """The first block to mend in `marks`; from the first task heading in them to the next only."""
        for mark in marks:
            heading = self.fence is None and mark.fence is None and self.task_level is not None
            parsed = self.task_heading(mark.title) if heading else None
            if parsed is not None:
                # The next task, unless its id comes again later and a block before it may have ended early: then
                # it is a task heading inside that block (a plan template in a prompt), misread after Markdown's close.
                return self._real_close() if self.suspect is not None and self.stray(parsed[0]) else None
            damaged = self._in_block(mark, self.fence) if self.fence is not None else self._outside(mark)
            if damaged:
                found = self._real_close()
                if found is not None:
                    return found
                self.suspect = None  # nothing follows the plan's structure: left as Markdown reads it
        if self.fence is not None and self._mirror(self.fence):  # it runs to the end of the plan
            return self._real_close()
        return None

    def _mirror(self, block: _Fence) -> bool:
        return self.suspect is not None and not block.opener.info and _closes(block.opener, self.suspect[0])

    def _in_block(self, mark: _Mark, block: _Fence) -> bool:
        if not _closes(mark, block):
            if mark.fence is not None and mark.fence[0] == block.char:
                block.inner_open = bool(mark.info) or not block.inner_open
            return False
        self.fence = None
        if block.inner_open and self._mirror(block):
            return True
        if self.suspect is None and (block.inner_open or is_markdown_info(block.opener.info)):
            self.suspect = (block, mark)
        return False

    def _outside(self, mark: _Mark) -> bool:
        if mark.fence is not None:
            self.fence = _Fence(mark, mark.fence[0], len(mark.fence))
            return False
        parsed = self.task_heading(mark.title)
        if parsed is not None:
            self.task_level, self.task_id, self.suspect = mark.level, parsed[0], None
            return False
        return self.suspect is not None and self.task_level is not None and mark.level <= self.task_level

    def _real_close(self) -> Mended | None:
        """The first bare fence after Markdown's close that the plan's structure follows, before the next task."""
        assert self.suspect is not None
        block, markdown_end = self.suspect
        step = self._step_before(block.opener.line)
        index = markdown_end.line - 1  # 0-based: Markdown's close, itself a candidate
        passed: set[str] = set()  # stray task headings passed over, once each: the second one is the real task
        inner = False  # past a stray heading: the block's text pairs its own fences (```json ... ```)
        while index < len(self.lines):
            text = self.lines[index]
            heading = self._heading_id(text) if index >= markdown_end.line else None
            if heading is not None:
                key = self.stray(heading)
                if key is None or key in passed:
                    return None
                passed.add(key)
            fence = _FENCE_LINE.fullmatch(text)
            bare = fence is not None and fence.group(1)[0] == block.char and len(fence.group(1)) >= block.size
            if passed and _FENCE_OPENER.fullmatch(text):
                inner = True
            elif passed and bare and inner:
                inner, bare = False, False
            if bare and self._structure_after(index + 1, step, passed):
                if index == markdown_end.line - 1:
                    return None  # Markdown's close is the real one
                return Mended(block.opener.line, markdown_end.line, index + 1, block.opener.info, self.task_id)
            index += 1
        return None

    def _step_before(self, line: int) -> Step | None:
        """The step label nearest above 1-based `line`, in the task's section."""
        for index in range(line - 2, -1, -1):
            text = self.lines[index]
            if self._is_task_heading(text):
                return None
            step = _step(text)
            if step is not None:
                return step
        return None

    def _structure_after(self, index: int, step: Step | None, passed: set[str]) -> bool:
        """Whether the first non-blank line from `index` (0-based) is the plan's own: the next step's label, a
        task heading (after a rule, if one stands there; not a stray one met for the first time), or the end."""
        rest = (text for text in self.lines[index:] if text.strip())
        first = next(rest, None)
        if first is not None and _RULE.match(first):
            first = next(rest, None)
            return first is None or self._plan_task(first, passed)
        if first is None or self._plan_task(first, passed):
            return True
        after = _step(first)
        return after is not None and step is not None and after == (step[0], step[1], step[2] + 1)

    def _is_task_heading(self, text: str) -> bool:
        return self._heading_id(text) is not None

    def _plan_task(self, text: str, passed: set[str]) -> bool:
        """A task heading of the plan's own: not the first heading of an id the plan names twice."""
        task_id = self._heading_id(text)
        key = self.stray(task_id) if task_id is not None else None
        return task_id is not None and (key is None or key in passed)

    def _heading_id(self, text: str) -> str | None:
        """The task id of a task heading line, else None."""
        heading = _HEADING_LINE.fullmatch(text)
        parsed = self.task_heading(heading.group(1).strip().rstrip("#").strip()) if heading is not None else None
        return parsed[0] if parsed is not None else None


_FENCE_LINE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*")
_FENCE_OPENER = re.compile(r" {0,3}(?:`{3,}|~{3,})[ \t]*[^`\s][^`]*")  # a fence line with an info string
_HEADING_LINE = re.compile(r" {0,3}#{1,6}[ \t]+(.*)")


def mend(
    text: str,
    task_heading: Callable[[str], tuple[str, str] | None],
    starts: Sequence[int] | None = None,
    stray: Callable[[str], str | None] | None = None,
) -> tuple[str, list[Mended]]:
    """`text` with each block that holds fences of its own read as one block (see the module), and what was mended.

    `task_heading` reads a heading's text as (id, title) when it starts a task (`fields.task_heading`); `starts`
    are the 1-based lines of the task headings to look at (the parser's suspects), by default every task's.
    `stray(id)`: the id's key when the plan names that task twice (else None); such a task heading after a
    suspect block may be the block's own text, and the real close is then looked for past it (once)."""
    if text.count("```") < 4 and text.count("~~~") < 4:
        return text, []
    if starts is None:
        starts = [m.line for m in _marks(text) if m.fence is None and task_heading(m.title) is not None]
    mended: list[Mended] = []
    lines = text.split("\n")
    for start in sorted(set(starts)):
        for _ in range(_MAX_ROUNDS):
            offset = sum(len(line) + 1 for line in lines[: start - 1])
            block = _Finder(lines, task_heading, stray).run(_marks(text, start, offset))
            if block is None:
                break
            marks: list[_Mark] = []
            for mark in _marks(text, start, offset):  # the fence lines up to the block's end, not the whole plan's
                if mark.line > block.end:
                    break
                if mark.fence is not None:
                    marks.append(mark)
            inner = max((len(m.fence or "") for m in marks if block.opened < m.line < block.end), default=0)
            opening, end = (next(m for m in marks if m.line == line) for line in (block.opened, block.end))
            assert opening.fence is not None
            longer = opening.fence[0] * (max(len(opening.fence), inner) + 1)
            text = _lengthen(_lengthen(text, end, longer), opening, longer)  # the later line first: offsets hold
            lines = text.split("\n")
            mended.append(block)
    return text, mended


def _lengthen(text: str, mark: _Mark, run: str) -> str:
    """The fence line at `mark` with its run of fence characters replaced by `run` (indent and info kept)."""
    assert mark.fence is not None
    at = text.index(mark.fence, mark.start)
    return text[:at] + run + text[at + len(mark.fence) :]
