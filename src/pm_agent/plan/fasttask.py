"""A task section's common blocks read straight into what the plan reader does with them, without nodes.

Most of a plan is task sections made of a few kinds of blocks: `**Label:** value` paragraphs, one-line
bullet items, fenced code, breaks and blank lines. From a task heading on, `read_task` reads such
blocks into operations (`TaskOps`) that the reader replays on the task's draft (`replay`): what it would
do walking the block nodes of fastmd.py, minus the nodes, and without a look at a fence's lines beyond
its closer (only a yaml fence's code is kept: it may be a task contract).

It stops before the first block it does not know for certain (any heading, ordered lists, items of more
than one line, indented or lazy lines, text fastmd.py's `_line` refuses, unclosed fences ...), always at
the start of a top-level block whose predecessors are closed: the rest of the section is read the usual
way from there (sections.py), so what it cannot read costs only the look. Replayed by the reader at the
node's place, errors and warnings come in the same order as from the nodes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from pm_agent.plan.draft import Draft
from pm_agent.plan.fastmd import _BULLET, _CLOSER, _FENCE, _HR, _SETEXT, _line, _Section
from pm_agent.plan.fields import task_heading
from pm_agent.plan.markdown import Block, Line, Node, heading_text

_ATX = re.compile(r"#{1,6}(?:[ \t]|$)")
# A line as `_line` reads it: an optional `**Label**` (no space at its ends) followed by nothing or a
# space or colon, then text without any of `_line`'s hard characters outside code spans of one backtick
# whose code starts with no space (`_line` would take a space off each end of some).
# The whitespace `\s` matches besides the space (tests/plan/test_plan_fasttask.py checks the list).
SPACES_BUT_SPACE = r"\t\n\x0b\x0c\r\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_SOFT = rf"[^*_\\&\[\]<|\x00`{SPACES_BUT_SPACE}]"
_EDGE = r"[^*_\\&\[\]<|\x00`\s]"
# Possessive: runs of text and code spans cannot overlap, and the engine then takes a run at a time.
_PLAIN_LINE = re.compile(rf"(?:\*\*({_EDGE}(?:{_SOFT}*{_EDGE})?)\*\*(?=[ :：]|$))?((?:{_SOFT}++|`[^` ][^`]*`)*+)")
_CODE = re.compile(r"`([^`]*)`")
ItemLines = tuple[tuple[int, int] | None, list[Line]]  # a list item's map and its lines


@dataclass(slots=True)
class _Para:
    line: int  # 1-based plan line of the paragraph's first line
    lines: list[Line]


@dataclass(slots=True)
class _Items:
    items: list[ItemLines]


@dataclass(slots=True)
class _Fence:
    info: str
    content: str  # the code of a yaml fence; "" for any other (no contract: its code is not read)
    line: int
    lines: tuple[bool, bool]  # its code's own fence lines: `nested_fences.fence_lines`


@dataclass(slots=True)
class _Break:
    pass


_Op = _Para | _Items | _Fence | _Break


@dataclass(eq=False, slots=True)
class TaskOps:
    """The blocks of lines[map[0]:map[1]] as the reader's operations on the open task's draft."""

    map: tuple[int, int] | None
    ops: list[_Op]
    type: str = "task_ops"
    tag: str = ""
    content: str = ""
    info: str = ""
    children: list[Block] = field(default_factory=list)


class Target(Protocol):
    """What `replay` calls: the plan reader's handling of a paragraph line, a list and a fence."""

    lines: list[str]

    def labelled(self, draft: Draft, line: Line, plan_line: int) -> bool: ...
    def list_items(self, draft: Draft, items: Iterable[ItemLines]) -> None: ...
    def fence_code(
        self, draft: Draft, info: str, content: str, line: int, lines: tuple[bool, bool] | None = None
    ) -> None: ...


def replay(reader: Target, draft: Draft, node: TaskOps) -> None:
    """Do to the draft what the reader's walk over the blocks `node` stands for does."""
    for op in node.ops:
        if type(op) is _Para:
            draft.pending = None
            for line in op.lines:
                plan_line = op.line + line.offset
                if not reader.labelled(draft, line, plan_line) and not draft.in_steps:
                    draft.description.append(reader.lines[plan_line - 1].rstrip())
        elif type(op) is _Items:
            reader.list_items(draft, op.items)
        elif type(op) is _Fence:
            reader.fence_code(draft, op.info, op.content, op.line, op.lines)
        else:
            draft.pending = None


def read_task(lines: Sequence[str], start: int) -> tuple[list[Node], int] | None:
    """The task heading at lines[start] and the blocks after it this reader knows, and where they end;
    None when lines[start] is no task heading fastmd.py reads."""
    line = lines[start]
    head = _Section(lines, start, start + 1).heading(line) if line[:1] == "#" else None
    if head is None or task_heading(heading_text(head)) is None:
        return None
    ops: list[_Op] = []
    index, end = start + 1, len(lines)
    while index < end:
        line = lines[index]
        first = line[:1]
        if not first or (first == " " and not line.strip(" ")):  # blank: most are empty
            index += 1
            continue
        read: tuple[_Op, int] | None = None
        # A break is nothing but its marks and spaces: a `**Label:**` line is none without a look (`_HR`).
        if first.isalpha() or (
            first == "*" and line.startswith("**") and (line.strip("* ") or not _HR.fullmatch(line))
        ):
            read = _paragraph(lines, index, end)
        elif first in "-+*_":
            hr = not line.strip("-*_ ") and _HR.fullmatch(line)
            read = (_Break(), index + 1) if hr else _list(lines, index, end)
        elif first in "`~ ":
            read = _fence(lines, index, end)
        if read is None:
            break  # a heading, or a block left to the usual reading
        ops.append(read[0])
        index = read[1]
    nodes: list[Node] = [head, TaskOps((start + 1, index), ops)] if ops else [head]
    return nodes, index


def _read_line(text: str, offset: int) -> Line | None:
    """fastmd.py's `_line(text, offset)[0]`, in one match for the lines most plans are made of."""
    plain = _PLAIN_LINE.fullmatch(text)
    if plain is None:
        read = _line(text, offset)
        return None if read is None else read[0]
    rest = plain.group(2)
    if "`" not in rest:
        return Line(plain.group(1), rest.strip(), (), offset)
    return Line(plain.group(1), rest.replace("`", "").strip(), tuple(_CODE.findall(rest)), offset)


def _interrupts(line: str) -> bool:
    """Whether the (non-blank) line surely ends a paragraph before it and starts a block of its own."""
    if _SETEXT.fullmatch(line):
        return False  # an underline: the paragraph is a heading
    if line[:1] == "#":
        return _ATX.match(line) is not None
    if _BULLET.fullmatch(line) or _HR.fullmatch(line):
        return True
    opener = _FENCE.fullmatch(line)
    return opener is not None and not (opener.group(2)[0] == "`" and "`" in opener.group(3))


def _paragraph(lines: Sequence[str], start: int, end: int) -> tuple[_Op, int] | None:
    texts = [lines[start].rstrip(" ")]  # it starts with a letter or `**`
    index = start + 1
    while index < end:
        line = lines[index]
        first = line[:1]
        if not first:
            break  # a blank line, the commonest end
        if first.isalpha() or (
            first == "*" and line.startswith("**") and (line.strip("* ") or not _HR.fullmatch(line))
        ):
            texts.append(line.rstrip(" "))
            index += 1
            continue
        if line.strip(" ") and not _interrupts(line):
            return None  # a lazy line, an underline, an indented line ...: the usual reading decides
        break
    read: list[Line] = []
    for offset, text in enumerate(texts):
        parsed = _read_line(text, offset)
        if parsed is None:
            return None
        read.append(parsed)
    return _Para(start + 1, read), index


def _list(lines: Sequence[str], start: int, end: int) -> tuple[_Op, int] | None:
    """A bullet list of one-line items (blank lines between them allowed), as fastmd.py's `list_` reads it."""
    item = _BULLET.fullmatch(lines[start])
    if item is None:
        return None
    marker = item.group(1)
    items: list[ItemLines] = []
    index = start
    while item is not None:
        first = index
        index += 1
        after = lines[index] if index < end else ""
        following: re.Match[str] | None = None
        if after and (after[0] != " " or after.strip(" ")):
            # Straight after the item: only another item ends it for sure (a lazy line would go on).
            following = _BULLET.fullmatch(after)
            if following is None or (not after.strip("-*_ ") and _HR.fullmatch(after)):
                return None
        else:
            while index < end and not lines[index].strip(" "):
                index += 1
            if index < end:
                after = lines[index]
                if after[:1] in (" ", "\t"):
                    return None  # after a blank line, indented text may be more of the item
                following = _BULLET.fullmatch(after)
                if following is not None and not after.strip("-*_ ") and _HR.fullmatch(after):
                    return None
        line = _read_line(item.group(3).rstrip(" "), 0)
        if line is None:
            return None
        items.append(((first, index), [line]))
        item = following if following is not None and following.group(1) == marker else None
    return _Items(items), index


def _fence(lines: Sequence[str], start: int, end: int) -> tuple[_Op, int] | None:
    """A closed fence; its code is gathered only for a yaml one (fastmd.py's `fence`)."""
    opener = _FENCE.fullmatch(lines[start])
    if opener is None:
        return None
    indent, marker, info = len(opener.group(1)), opener.group(2), opener.group(3)
    if (marker[0] == "`" and "`" in info) or "\\" in info or "&" in info:
        return None
    char, size = marker[0], len(marker)
    inner, seen = False, False
    for index in range(start + 1, end):
        text = lines[index]
        if char in text[:4]:
            closer = _CLOSER.fullmatch(text)
            if closer is not None and closer.group(1)[0] == char and len(closer.group(1)) >= size:
                break
            fence = _FENCE.fullmatch(text)
            if fence is not None:  # a fence line of its code's own
                inner, seen = bool(fence.group(3).strip()) or not inner, True
    else:
        return None  # unclosed: markdown-it decides where it ends
    words = info.strip().lower().split()
    content = ""
    if words and words[0] in ("yaml", "yml"):
        code: list[str] = []
        for text in lines[start + 1 : index]:
            if indent:
                if "\t" in text[:indent]:
                    return None
                text = text[min(indent, len(text) - len(text.lstrip(" "))) :]
            code.append(text + "\n")
        content = "".join(code)
    return _Fence(info, content, start + 1, (inner, seen)), index + 1
