"""The design doc: its title and the sections that feed the shared context block."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pm_agent.plan.markdown import heading_level, heading_text, inline_of, item_paragraph, parse_tree, plain

if TYPE_CHECKING:  # markdown-it is imported by plan.markdown when it parses
    from markdown_it.tree import SyntaxTreeNode

# Section category -> heading words that select it (whole words, any heading level).
CATEGORIES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("principles", re.compile(r"\b(principles?|constraints?|invariants?|non-negotiables?)\b", re.I)),
    ("conventions", re.compile(r"\b(conventions?|coding standards?|style guide)\b", re.I)),
    ("modules", re.compile(r"\b(modules?|architecture|components?|packages?|layout)\b", re.I)),
    ("tech_stack", re.compile(r"\b(tech(nology)? stack|stack|chosen parts|dependencies)\b", re.I)),
)
ITEM_CHARS = 160


@dataclass
class DesignDoc:
    """Title and the compact items of each recognised section."""

    title: str = ""
    sections: dict[str, list[str]] = field(default_factory=lambda: {name: [] for name, _ in CATEGORIES})


def compact(text: str, limit: int = ITEM_CHARS) -> str:
    """One line, whitespace collapsed, cut at `limit` characters with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def category_of(heading: str) -> str | None:
    """The section category a heading selects, if any."""
    for name, pattern in CATEGORIES:
        if pattern.search(heading):
            return name
    return None


def _items(node: SyntaxTreeNode) -> list[str]:
    if node.type == "paragraph":
        inline = inline_of(node)
        return [plain(inline)] if inline is not None else []
    if node.type in ("bullet_list", "ordered_list"):
        found: list[str] = []
        for item in node.children:
            para = item_paragraph(item)
            inline = inline_of(para) if para is not None else None
            if inline is not None:
                found.append(plain(inline))
        return found
    if node.type == "table":
        rows: list[str] = []
        for part in node.children:
            if part.type != "tbody":
                continue
            for row in part.children:
                cells = [plain(inline_of(c) or c).strip() for c in row.children]
                cells = [c for c in cells if c]
                if cells:
                    rows.append(f"{cells[0]}: {' | '.join(cells[1:])}" if len(cells) > 1 else cells[0])
        return rows
    return []


def parse_design_text(text: str) -> DesignDoc:
    """Title (first `#` heading) and items of principle/convention/module/stack sections."""
    doc = DesignDoc()
    stack: list[tuple[int, str | None]] = []
    for node in parse_tree(text.lstrip("\ufeff")).children:
        if node.type == "heading":
            level, title = heading_level(node), heading_text(node)
            is_title = level == 1 and not doc.title
            if is_title:
                doc.title = title
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, None if is_title else category_of(title)))
            continue
        current = next((cat for _, cat in reversed(stack) if cat is not None), None)
        if current is not None:
            doc.sections[current].extend(compact(i) for i in _items(node) if i.strip())
    return doc
