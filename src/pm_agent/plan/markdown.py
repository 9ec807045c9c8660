"""Small helpers over markdown-it-py's syntax tree: plain text, labelled lines, line numbers."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token
    from markdown_it.tree import SyntaxTreeNode

_CHECKBOX = re.compile(r"^\[[ xX]\]\s*")
# Inline markup nested deeper than this is read as literal text: nobody means 40 levels of
# emphasis, and the tree builder (and `plain`) recurse once per level.
MAX_INLINE_DEPTH = 32


@functools.cache
def _md() -> MarkdownIt:
    """The CommonMark (plus tables) parser, imported and built on first use: a plan the fast readers
    (fastmd.py, fasttask.py) read whole never needs markdown-it, whose import cost ~20 ms of a run's start."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")


class Node(Protocol):
    """A block or inline node as the plan reader sees it: markdown-it's SyntaxTreeNode, or a `Block`."""

    @property
    def type(self) -> str: ...
    @property
    def tag(self) -> str: ...
    @property
    def map(self) -> tuple[int, int] | None: ...
    @property
    def children(self) -> Sequence[Node]: ...
    @property
    def content(self) -> str: ...
    @property
    def info(self) -> str: ...


def parse_tree(text: str) -> SyntaxTreeNode:
    """The document as a syntax tree (CommonMark plus tables); every block node has `.map`."""
    return tree_of(_md().parse(text))


def parse_tokens(text: str) -> list[Token]:
    """markdown-it's tokens for the text (CommonMark plus tables)."""
    return _md().parse(text)


def tree_of(tokens: list[Token]) -> SyntaxTreeNode:
    """The syntax tree of parsed tokens."""
    from markdown_it.tree import SyntaxTreeNode  # imported with the parser that made the tokens

    try:
        return SyntaxTreeNode(tokens)
    except RecursionError:
        # Deeply nested emphasis (`*a *b *c ... c* b* a*`): flatten it and build the tree again.
        # Only such input pays for the second pass.
        for token in tokens:
            if token.type == "inline" and token.children:
                _flatten_deep(token.children)
        return SyntaxTreeNode(tokens)


def _flatten_deep(children: list[Token]) -> None:
    """Turn open/close markup tokens below MAX_INLINE_DEPTH into text tokens holding their markup."""
    kept: list[bool] = []  # per open token on the stack: still markup?
    for token in children:
        if token.nesting == 1:
            keep = sum(kept) < MAX_INLINE_DEPTH
            kept.append(keep)
        elif token.nesting == -1:
            keep = kept.pop() if kept else False
        else:
            continue
        if not keep:
            token.type, token.nesting, token.tag, token.content = "text", 0, "", token.markup


def inline_of(node: Node) -> Node | None:
    """The inline child of a heading or paragraph, if any."""
    for child in node.children:
        if child.type == "inline":
            return child
    return None


def plain(node: Node) -> str:
    """Text of an inline subtree without markup: emphasis dropped, code spans kept, breaks as newlines."""
    if isinstance(node, Block) and node.lines is not None:
        return node.content
    if node.type in ("text", "code_inline", "html_inline"):
        return node.content
    if node.type in ("softbreak", "hardbreak"):
        return "\n"
    return "".join(plain(child) for child in node.children)


# Outside code spans: the characters that would make emphasis, a link or an HTML tag of plain words.
_SPECIAL = re.compile(r"([\\*_<\[\]])")
_CODE_SPAN = re.compile(r"(`+)(?:.+?)(?<!`)\1(?!`)")


_FENCE_MARK = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def fence_after(fence: str | None, line: str) -> str | None:
    """The code fence open after `line` (its marks), given the one open before it; None when none is. For the
    line-by-line readers of the list forms (checklist.py, speckit.py, kiro.py), which leave fenced lines alone."""
    opened = _FENCE_MARK.match(line)
    if opened is None:
        return fence
    if fence is None:
        return opened.group(1)
    closes = opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence)
    return None if closes else fence


def heading_line(line: str) -> tuple[int, str] | None:
    """An ATX heading line's level and text (`## Phase 2: Export` -> (2, "Phase 2: Export")), or None."""
    found = _ATX.match(line)
    return (len(found.group(1)), found.group(2)) if found is not None else None


def literal(text: str) -> str:
    """`text` escaped to read back as itself in a heading: a list item names paths bare, and the `__init__` of
    `src/__init__.py` would read as emphasis. Code spans are left as they are (escapes in them are literal)."""
    out, at = [], 0
    for span in _CODE_SPAN.finditer(text):
        out += [_SPECIAL.sub(r"\\\1", text[at : span.start()]), span.group(0)]
        at = span.end()
    out.append(_SPECIAL.sub(r"\\\1", text[at:]))
    return "".join(out)


def heading_level(node: Node) -> int:
    """1 for `#`, 2 for `##`, ..."""
    return int(node.tag[1:])


def heading_text(node: Node) -> str:
    """A heading's plain text, stripped."""
    inline = inline_of(node)
    return plain(inline).strip() if inline is not None else ""


def first_line(node: Node) -> int:
    """1-based line where a block node starts (0 when unknown)."""
    return node.map[0] + 1 if node.map else 0


@dataclass(slots=True)  # not frozen: a frozen dataclass sets each field through object.__setattr__, 3x slower
class Line:
    """One line of a paragraph: a bold label (e.g. `Files:`) if it starts with one, and the rest."""

    label: str | None  # text of the leading bold span, as written (may end with ':')
    value: str  # plain text after the label (or the whole line), stripped
    code: tuple[str, ...]  # contents of code spans on the line, in order
    offset: int  # line offset inside the paragraph (0-based)
    checkbox: bool = False  # the line started with `[ ]` or `[x]` (a task-list item)


def _split_lines(inline: Node) -> list[list[Node]]:
    lines: list[list[Node]] = [[]]
    for child in inline.children:
        if child.type in ("softbreak", "hardbreak"):
            lines.append([])
        elif not (child.type == "text" and child.content == ""):
            lines[-1].append(child)
    return lines


def _code_spans(nodes: Sequence[Node]) -> tuple[str, ...]:
    found: list[str] = []
    for node in nodes:
        if node.type == "code_inline":
            found.append(node.content)
        else:
            found.extend(_code_spans(node.children))
    return tuple(found)


def _line(nodes: list[Node], offset: int) -> Line:
    checkbox = False
    if nodes and nodes[0].type == "text":
        match = _CHECKBOX.match(nodes[0].content)
        if match:
            checkbox = True
            rest_text = nodes[0].content[match.end() :]
            if rest_text.strip():
                value = (rest_text + "".join(plain(n) for n in nodes[1:])).strip()
                return Line(None, value, _code_spans(nodes[1:]), offset, checkbox=True)
            nodes = nodes[1:]
    label: str | None = None
    rest = nodes
    if nodes and nodes[0].type == "strong":
        label = plain(nodes[0]).strip()
        rest = nodes[1:]
    value = "".join(plain(n) for n in rest).strip()
    return Line(label, value, _code_spans(rest), offset, checkbox=checkbox)


def lines_of(inline: Node) -> list[Line]:
    """The inline content split at line breaks, each line with its leading bold label if any."""
    if isinstance(inline, Block) and inline.lines is not None:
        return inline.lines
    return [_line(nodes, offset) for offset, nodes in enumerate(_split_lines(inline))]


def item_paragraph(item: Node) -> Node | None:
    """The first paragraph of a list item (its text), if it has one."""
    for child in item.children:
        if child.type == "paragraph":
            return child
    return None


@dataclass(eq=False, slots=True)
class Block:
    """A node built by the fast reader (fastmd.py) for sections markdown-it would read the same way."""

    type: str
    map: tuple[int, int] | None
    children: list[Block] = field(default_factory=list)
    tag: str = ""
    content: str = ""  # a fence's code; for an inline, its plain text
    info: str = ""
    lines: list[Line] | None = None  # an inline's lines, already read (what `lines_of` gives)
