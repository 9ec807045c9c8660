"""A fast reader for the markdown most plan sections are made of, giving the nodes markdown-it would.

It knows ATX headings, paragraphs, one-line list items (`-`, `*`, `+`, `1.`, `1)`, `[ ]` checkboxes),
fenced code and thematic breaks, and inline text with code spans and a leading `**Label:**`. Anything
else (emphasis elsewhere, links, HTML, escapes, entities, tables, block quotes, indented code, nested
or multi-paragraph list items, tabs, setext headings, unclosed fences) makes it give up on the section,
which markdown-it then reads: `read_section` returns None rather than guess.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from pm_agent.plan.markdown import _CHECKBOX, Block, Line

_HEADING = re.compile(r"(#{1,6})(?: +(.*?))? *")
_FENCE = re.compile(r"( {0,3})(`{3,}|~{3,})(.*)")
_CLOSER = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*")
_HR = re.compile(r" {0,3}([-*_])(?: *\1){2,} *")
_BULLET = re.compile(r"([-+*])( {1,4})(\S.*)")
_ORDERED = re.compile(r"(\d{1,9})([.)])( {1,4})(\S.*)")
# Inline text this reader cannot take: emphasis, escapes, entities, links, HTML, tables, odd spaces.
_HARD_INLINE = re.compile(r"[*_\\&\[\]<|\x00]|[^\S ]")
# A line that would open a block (or might) where a paragraph could otherwise go on; lists, fences,
# breaks and headings are looked for before this.
_BLOCK_START = re.compile(r" {0,3}(?:[>#<=|]|[-+*](?: |$)|\d{1,9}[.)](?: |$))")
_SETEXT = re.compile(r" {0,3}(?:=+|-+) *")
_LABEL_FOLLOWERS = frozenset(("", " ", ":", "："))
_FENCE_CHARS = frozenset("`~")
_HR_CHARS = frozenset("-*_")
_BULLET_CHARS = frozenset("-+*")


def _text_start(line: str) -> bool:
    """A line that can only be paragraph text: it starts with a letter, or with `**` and is no break."""
    return line[:1].isalpha() or (line.startswith("**") and not _HR.fullmatch(line))


def _spans(text: str) -> tuple[str, tuple[str, ...]] | None:
    """(plain text, code spans) of inline text with single-backtick code spans, or None."""
    if "`" not in text:  # most lines: one plain part
        return None if _HARD_INLINE.search(text) else (text, ())
    parts = text.split("`")
    if len(parts) % 2 == 0:
        return None
    plain: list[str] = []
    code: list[str] = []
    for index, part in enumerate(parts):
        if index % 2 == 0:
            if _HARD_INLINE.search(part):
                return None
            plain.append(part)
            continue
        if not part:
            return None  # a double backtick: spans of longer runs are left to markdown-it
        if part[0] == " " and part[-1] == " " and part.strip(" "):
            part = part[1:-1]
        plain.append(part)
        code.append(part)
    return "".join(plain), tuple(code)


def _line(text: str, offset: int) -> tuple[Line, str] | None:
    """One line of a paragraph or list item (leading and trailing spaces gone): the Line and its plain text."""
    label: str | None = None
    rest = text
    if text.startswith("**"):
        end = text.find("**", 2)
        inner = text[2:end] if end > 2 else ""
        follower = text[end + 2 : end + 3] if end > 2 else ""
        if not inner or inner != inner.strip(" ") or "`" in inner or follower not in _LABEL_FOLLOWERS:
            return None
        if _HARD_INLINE.search(inner):
            return None
        label, rest = inner, text[end + 2 :]
    checkbox = False
    if label is None and text.startswith("["):
        match = _CHECKBOX.match(text)
        if match is None or text[3:4] not in ("", " "):
            return None
        checkbox, rest = True, text[match.end() :]
    read = _spans(rest) if rest else ("", ())  # nothing after the label (`**Files:**`): no spans to find
    if read is None:
        return None
    plain, code = read
    full = (label if label is not None else text[: len(text) - len(rest)]) + plain
    return Line(label, plain.strip(), code, offset, checkbox=checkbox), full


def _inline(texts: Sequence[str], start: int, end: int) -> Block | None:
    """The inline node of a paragraph or list item whose lines are `texts`."""
    lines: list[Line] = []
    plains: list[str] = []
    for offset, text in enumerate(texts):
        read = _line(text, offset)
        if read is None:
            return None
        lines.append(read[0])
        plains.append(read[1])
    return Block("inline", (start, end), content="\n".join(plains), lines=lines)


class _Section:
    """Reads lines[start:end] into blocks; `run` gives None as soon as something is beyond it."""

    def __init__(self, lines: Sequence[str], start: int, end: int, stop: Callable[[str], bool] | None = None) -> None:
        self.lines = lines
        self.start = start
        self.end = end
        self.index = start
        self.stop = stop  # a line (at a block's start, after the first) that ends the section here
        self.blocks: list[Block] = []

    def run(self) -> list[Block] | None:
        while self.index < self.end:
            line = self.lines[self.index]
            if not line.strip(" "):
                self.index += 1
                continue
            if self.stop is not None and line[:1] == "#" and self.index > self.start and self.stop(line):
                self.end = self.index
                break
            read = self.block(line)
            if read is None:
                return None
            self.blocks.append(read)
        return self.blocks

    def block(self, line: str) -> Block | None:
        if line[:1].isalpha() or _text_start(line):  # the first test alone settles most lines
            return self.paragraph()
        if line.startswith("#"):
            return self.heading(line)
        # A fence or a break starts (after up to three spaces) with its character, a list item at the
        # margin with its marker or digit: only those lines are matched against their patterns.
        first = line.lstrip(" ")[:1]
        opener = _FENCE.fullmatch(line) if first in _FENCE_CHARS else None
        if opener is not None:
            return self.fence(opener)
        if first in _HR_CHARS and _HR.fullmatch(line):
            self.index += 1
            return Block("hr", (self.index - 1, self.index), tag="hr")
        head = line[:1]
        opened = (
            _BULLET.fullmatch(line) if head in _BULLET_CHARS else _ORDERED.fullmatch(line) if head.isdigit() else None
        )
        if opened is not None:
            return self.list_(line, opened)
        if line.startswith("    ") or _BLOCK_START.match(line):
            return None
        return self.paragraph()

    def heading(self, line: str) -> Block | None:
        match = _HEADING.fullmatch(line)
        if match is None or line.rstrip(" ").endswith("#"):
            return None
        text = match.group(2) or ""
        read = _spans(text)
        if read is None:
            return None
        at = (self.index, self.index + 1)
        self.index += 1
        inline = Block("inline", at, content=read[0], lines=[Line(None, read[0].strip(), read[1], 0)])
        return Block("heading", at, [inline], tag=f"h{len(match.group(1))}")

    def fence(self, opener: re.Match[str]) -> Block | None:
        indent, marker, info = len(opener.group(1)), opener.group(2), opener.group(3)
        if (marker[0] == "`" and "`" in info) or "\\" in info or "&" in info:
            return None
        start = self.index
        content: list[str] = []
        char = marker[0]
        for index in range(start + 1, self.end):
            text = self.lines[index]
            # Only a line starting (after up to three spaces) with the marker's character can close it.
            closer = _CLOSER.fullmatch(text) if char in text[:4] else None
            if closer is not None and closer.group(1)[0] == char and len(closer.group(1)) >= len(marker):
                self.index = index + 1
                return Block("fence", (start, index + 1), tag="code", content="".join(content), info=info)
            if indent:
                if "\t" in text[:indent]:
                    return None
                text = text[min(indent, len(text) - len(text.lstrip(" "))) :]
            content.append(text + "\n")
        return None  # unclosed: markdown-it decides where it ends

    def paragraph(self) -> Block | None:
        start = self.index
        texts = [self.lines[start].strip(" ")]
        index = start + 1
        while index < self.end:
            line = self.lines[index]
            if not line:
                break  # a blank line ends the paragraph (the commonest end: tested first)
            if line[:1].isalpha() or _text_start(line):
                texts.append(line.rstrip(" "))
                index += 1
                continue
            if not line.strip(" "):
                break
            if _SETEXT.fullmatch(line):
                return None
            if line.startswith("#") or _FENCE.fullmatch(line) or _HR.fullmatch(line):
                break
            if _BULLET.fullmatch(line) or line.startswith("1. ") or line.startswith("1) "):
                break
            if _BLOCK_START.match(line):
                return None
            texts.append(line.strip(" "))
            index += 1
        inline = _inline(texts, start, index)
        if inline is None:
            return None
        self.index = index
        return Block("paragraph", (start, index), [inline], tag="p")

    def list_(self, line: str, opened: re.Match[str]) -> Block | None:
        bullet = opened.re is _BULLET
        items_re = _BULLET if bullet else _ORDERED
        marker = opened.group(1 if bullet else 2)  # `-`, `*`, `+`; `.` or `)` after the number
        kind = "bullet_list" if bullet else "ordered_list"
        lines, end = self.lines, self.end
        start = self.index
        items: list[Block] = []
        index = start
        # The next item's match, found once: it is both what ends this item and the next item's start.
        item: re.Match[str] | None = None if _HR.fullmatch(line) else opened
        while item is not None:
            texts = [item.group(3 if bullet else 4).rstrip(" ")]
            first = index
            index += 1
            while index < end and lines[index].strip(" "):
                text = lines[index]
                if not text[:1].isalpha():  # a line starting with a letter opens nothing: more text
                    if _HR.fullmatch(text) or _FENCE.fullmatch(text) or text.startswith("#"):
                        return None
                    if _BULLET.fullmatch(text) or _ORDERED.fullmatch(text):
                        break
                    if _BLOCK_START.match(text) or text.startswith("    "):
                        return None
                texts.append(text.strip(" "))
                index += 1
            content_end = index
            while index < end and not lines[index].strip(" "):
                index += 1
            item = items_re.fullmatch(lines[index]) if index < end else None
            if item is not None and item.group(1 if bullet else 2) != marker:
                item = None
            if index > content_end and index < end and item is None and lines[index].startswith(" "):
                return None  # indented text after a blank line: more of the item, or indented code
            inline = _inline(texts, first, content_end)
            if inline is None:
                return None
            # Like markdown-it, an item (and the list) runs on over the blank lines after it.
            paragraph = Block("paragraph", (first, content_end), [inline], tag="p")
            items.append(Block("list_item", (first, index), [paragraph], tag="li"))
            if item is not None and _HR.fullmatch(lines[index]):
                item = None  # `* * *` after `*` items: a break, not an item
        self.index = index
        return Block(kind, (start, index), items, tag="ul" if bullet else "ol")


def read_section(lines: Sequence[str], start: int, end: int) -> list[Block] | None:
    """The block nodes of lines[start:end] as markdown-it gives them, or None when the fast reader cannot tell."""
    return _Section(lines, start, end).run()


def read_until(lines: Sequence[str], start: int, stop: Callable[[str], bool]) -> tuple[list[Block], int] | None:
    """The block nodes from lines[start] up to the first later block-start line `stop` accepts (or the end),
    and that line's index; None when the fast reader cannot tell, which may be sooner than `read_section`:
    a list item running straight into the stop line is left to it."""
    section = _Section(lines, start, len(lines), stop)
    blocks = section.run()
    return None if blocks is None else (blocks, section.end)
