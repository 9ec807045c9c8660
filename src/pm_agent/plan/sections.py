"""A plan's block nodes, read section by section: split at task headings, each section parsed on its own.

A scanner finds the lines that start task sections (`### Task 3: ...` at the left margin, outside code
fences of backticks or tildes, indented or longer, and outside HTML blocks). Each section is then read
by the fast reader (fastmd.py) when it uses only what that reader knows, else by markdown-it, and the
node lists are joined. Every line is parsed once, so the cost is linear in the plan. The fast reader
finds a section's end itself (the first task heading it meets at a block's start is the scanner's next
one: it reads fences and gives up on HTML blocks the scanner's way), so the scan runs only from a
section it leaves to markdown-it.

The nodes are the ones markdown-it gives for the whole document: a section that markdown-it leaves
open at its end (a fence without its closing line, an HTML block or a table running into the next
heading) is not a section, and from it on the rest of the plan is read in one piece. A plan with a
link reference definition (`[x]: url`, which any section's links may use) or a NUL character is read
in one piece too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pm_agent.plan import fastpath
from pm_agent.plan.fastmd import read_section, read_until
from pm_agent.plan.fasttask import read_task
from pm_agent.plan.fields import task_heading
from pm_agent.plan.markdown import Node, parse_tokens, tree_of

if TYPE_CHECKING:  # markdown-it is imported when a section is left to it (plan.markdown)
    from markdown_it.token import Token

_ATX = re.compile(r"(#{1,6})(?:[ \t]+|$)")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_CLOSER = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*")
# HTML blocks of CommonMark's kinds 1 to 5 end at a marker; any other line starting with `<` is taken
# to open a block that ends at a blank line (kinds 6 and 7, and more: splitting less is always safe).
_HTML = (
    (
        re.compile(r"<(?:script|pre|style|textarea)(?:\s|>|$)", re.IGNORECASE),
        re.compile(r"</(?:script|pre|style|textarea)>", re.IGNORECASE),
    ),
    (re.compile(r"<!--"), re.compile(r"-->")),
    (re.compile(r"<\?"), re.compile(r"\?>")),
    (re.compile(r"<![A-Za-z]"), re.compile(r">")),
    (re.compile(r"<!\[CDATA\["), re.compile(r"\]\]>")),
)
_BLANK = re.compile(r"[ \t]*$")
_OPENERS = frozenset("`~<#")
# A line that may start a link reference definition, in any container: `[label]: ...`, or a label
# that goes on past the line.
_REFERENCE = re.compile(r"^[ \t>]*(?:(?:[-+*]|\d{1,9}[.)])[ \t]+)*\[(?:.*\]:|[^\]]*$)", re.MULTILINE)


@dataclass
class Blocks:
    """A plan's top-level block nodes, and how they were read (counted, for the tests of linearity)."""

    nodes: list[Node] = field(default_factory=list)
    sections: int = 0  # sections read on their own
    fast: int = 0  # of them, read by the fast reader
    whole: bool = False  # the plan, or its rest, was read in one piece


def heading_raw(line: str) -> str | None:
    """The text of an ATX heading at the left margin (`## Task 2: X ##` -> `Task 2: X`), else None."""
    match = _ATX.match(line)
    if match is None:
        return None
    return _CLOSING_HASHES.sub("", line[match.end() :].rstrip("\n")).strip()


def _html_end(line: str) -> re.Pattern[str] | None:
    """The end marker of the HTML block this line opens, or _BLANK; None when it closes on this line."""
    text = line.lstrip(" ")
    for start, end in _HTML:
        opened = start.match(text)
        if opened is not None:
            return None if end.search(text, opened.end()) else end
    return _BLANK


def split_points(lines: Sequence[str]) -> list[int]:
    """Indexes of the lines that start task sections: task headings outside fences and HTML blocks."""
    return list(_points(lines, 0))


def _points(lines: Sequence[str], start: int) -> Iterator[int]:
    """The task headings after lines[start] outside fences and HTML blocks; lines[start] opens neither."""
    fence: tuple[str, int] | None = None  # marker character and length of the open fence
    html: re.Pattern[str] | None = None
    for index in range(start, len(lines)):
        line = lines[index]
        # Only lines starting (after up to three spaces) with one of these can open or close anything.
        first = line[:4].lstrip(" ")[:1]
        if fence is not None:
            if first != fence[0]:
                continue
            closer = _CLOSER.fullmatch(line)
            if closer is not None and closer.group(1)[0] == fence[0] and len(closer.group(1)) >= fence[1]:
                fence = None
            continue
        if html is not None:
            if html.match(line) if html is _BLANK else html.search(line):
                html = None
            continue
        if first not in _OPENERS:
            continue
        opener = _FENCE.fullmatch(line)
        if opener is not None and not (opener.group(1)[0] == "`" and "`" in opener.group(2)):
            fence = (opener.group(1)[0], len(opener.group(1)))
        elif first == "<":
            html = _html_end(line)
        elif line.startswith("#") and index > start and _is_task_heading(line):
            yield index


def _is_task_heading(line: str) -> bool:
    text = heading_raw(line)
    return text is not None and task_heading(text) is not None


def read_blocks(text: str, lines: Sequence[str], *, tasks: bool = False) -> Blocks:
    """The document's top-level block nodes, maps counted in lines of the whole text.

    With `tasks`, a task section's common blocks after its heading may be one `TaskOps` node
    (fasttask.py) instead, for a reader that replays them; not after a top-level title that is no
    task heading (it may open a plan quoted in a task, which quotes.py reads from the nodes).
    """
    blocks = Blocks()
    for nodes in iter_blocks(text, lines, blocks, tasks=tasks):
        blocks.nodes.extend(nodes)
    return blocks


def iter_blocks(text: str, lines: Sequence[str], blocks: Blocks, *, tasks: bool = False) -> Iterator[Sequence[Node]]:
    """`read_blocks`' nodes a section (or the rest read in one piece) at a time, counted in `blocks`
    (whose `nodes` it leaves alone): a reader that takes each section's nodes as they come works on
    them while they are in the cache, and they are freed before the next section's are made."""
    if "\0" in text or _has_reference(text):  # markdown-it reads NUL as U+FFFD everywhere
        blocks.whole = True
        yield _parsed(lines, 0, len(lines))
        return
    start = 0
    quote_guard: int | None = None if tasks and fastpath.ENABLED else 0
    while start < len(lines):
        if quote_guard is None and start:  # the first task heading: no task is open before it
            quote_guard = _first_title(text, lines, start)
        read: tuple[Sequence[Node], int] | None = None
        if start and quote_guard and start < quote_guard:
            read = read_task(lines, start)
        if read is None:
            # The fast reader finds the section's end itself (the next task heading it meets), so the
            # scan for it runs only from a section the fast reader leaves to markdown-it.
            read = read_until(lines, start, _is_task_heading) if fastpath.ENABLED else None
        if read is not None:
            nodes: Sequence[Node] | None = read[0]
            end = read[1]
        else:
            end = next(_points(lines, start), len(lines))
            nodes = read_section(lines, start, end) if fastpath.ENABLED else None
        if nodes is not None:
            blocks.fast += 1
        else:
            tokens = _tokens(lines, start, end)
            if end < len(lines) and _open_at_end(tokens, lines, _seen_end(lines, start, end)):
                blocks.whole = True
                yield _parsed(lines, start, len(lines))
                return
            nodes = tree_of(tokens).children
        blocks.sections += 1
        yield nodes
        start = end


# A top-level title: `# Title`, or the underline of `Title` over `=====` (the title starts above it, in a
# paragraph the task reader leaves alone, so sections from the underline on are what must not be its).
_TITLE = re.compile(r"^ {0,3}(?:#(?:[ \t]|$)|=+[ \t]*$)", re.MULTILINE)
# The same after a line break: a pattern that starts with a character is searched for it first, several
# times faster than trying `^` at every position of the plan (~8 ns a character).
_TITLE_AFTER_BREAK = re.compile(r"\n {0,3}(?:#(?:[ \t]|$)|=+[ \t]*$)", re.MULTILINE)


def _title_starts(text: str) -> Iterator[int]:
    """Where the lines start that `_TITLE` matches, in order."""
    if not fastpath.ENABLED:
        yield from (match.start() for match in _TITLE.finditer(text))
        return
    if _TITLE.match(text):
        yield 0
    yield from (match.start() + 1 for match in _TITLE_AFTER_BREAK.finditer(text))


def _first_title(text: str, lines: Sequence[str], after: int) -> int:
    """The index of the first line after lines[after] that may be (the underline of) a top-level title
    and is no task heading (or past the end)."""
    line, at = 0, 0
    for start in _title_starts(text):
        line += text.count("\n", at, start)
        at = start
        if line > after and not _is_task_heading(lines[line]):
            return line
    return len(lines)


def _has_reference(text: str) -> bool:
    """`_REFERENCE.search(text)`, tried only at the starts of the lines that hold a `[` (a match's `[` is on
    the line it starts on): the search tries every position of the text, a few ms for a large plan."""
    if not fastpath.ENABLED:
        return _REFERENCE.search(text) is not None
    at = text.find("[")
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        if _REFERENCE.match(text, start) is not None:
            return True
        end = text.find("\n", at)
        if end < 0:
            return False
        at = text.find("[", end)
    return False


def _tokens(lines: Sequence[str], start: int, end: int) -> list[Token]:
    tokens = parse_tokens("\n".join(lines[start:end]))
    if start:
        for token in tokens:
            if token.map is not None:
                token.map = [token.map[0] + start, token.map[1] + start]
    return tokens


def _seen_end(lines: Sequence[str], start: int, end: int) -> int:
    """Where markdown-it's reading of lines[start:end] ends: an empty last line is no line to it."""
    return end - 1 if end - 1 > start and lines[end - 1] == "" else end


def _parsed(lines: Sequence[str], start: int, end: int) -> list[Node]:
    return list(tree_of(_tokens(lines, start, end)).children)


def _open_at_end(tokens: Sequence[Token], lines: Sequence[str], end: int) -> bool:
    """Whether a block of a section markdown-it read up to line `end` would run on into the next heading."""
    for token in tokens:
        if token.map is None or token.map[1] < end:
            continue
        if token.type in ("html_block", "table_open"):
            return True
        if token.type == "fence":
            closer = _CLOSER.fullmatch(lines[end - 1])
            closed = (
                token.level == 0
                and end - 1 > token.map[0]
                and closer is not None
                and closer.group(1)[0] == token.markup[0]
                and len(closer.group(1)) >= len(token.markup)
            )
            if not closed:
                return True
    return False
