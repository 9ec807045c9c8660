"""Plans quoted inside a task: a sample plan written by a heredoc whose headings the markdown does not fence.

Inside a task's section, a top-level title (`# Sample plan`) followed by task headings whose numbering
restarts (the first one reuses an id the plan already has) is that task's content, not new tasks. The
quote ends at the heredoc's terminator line when the task opened one (`cat > plan.md <<'EOF'` ...
`EOF`); otherwise at the first task heading that belongs to the outer plan again: one at the outer
task's heading level when the quoted tasks use another level, else one whose id is new to both.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pm_agent.plan.fields import canonical_id, task_heading
from pm_agent.plan.markdown import Node, heading_level, heading_text

_HEREDOC = re.compile(r"<<-?\s*(['\"]?)(?P<word>[A-Za-z_][A-Za-z0-9_]*)\1")


@dataclass(frozen=True)
class Quote:
    """A quoted plan: nodes[start:end] belong to the enclosing task; `tasks` task headings were in it."""

    start: int
    end: int
    tasks: int
    title: str


def _next_task_heading(nodes: Sequence[Node], start: int) -> tuple[int, str, int] | None:
    """(index, id, level) of the first task heading after nodes[start], before another top-level title."""
    for index in range(start + 1, len(nodes)):
        node = nodes[index]
        if node.type != "heading":
            continue
        parsed = task_heading(heading_text(node))
        if parsed is not None:
            return index, parsed[0], heading_level(node)
        if heading_level(node) == 1:
            return None
    return None


def _open_heredoc(lines: Sequence[str], first: int, last: int) -> str | None:
    """The terminator of a heredoc opened in lines[first:last] and not closed there, if any."""
    word: str | None = None
    for line in lines[first:last]:
        if word is not None and line.strip() == word:
            word = None
            continue
        match = _HEREDOC.search(line)
        if match is not None:
            word = match.group("word")
    return word


def find_quote(
    nodes: Sequence[Node],
    start: int,
    *,
    outer_level: int,
    taken: set[str],
    lines: Sequence[str],
    section_line: int,
) -> Quote | None:
    """The quoted plan that the top-level title nodes[start] opens inside a task section, if it is one.

    `taken` holds the canonical ids the plan has so far (the enclosing task's included); the task's
    section starts at line index `section_line`.
    """
    first = _next_task_heading(nodes, start)
    if first is None or canonical_id(first[1]) not in taken:
        return None
    title = heading_text(nodes[start])
    title_line = (nodes[start].map or (0, 0))[0]
    terminator = _open_heredoc(lines, section_line, title_line)
    if terminator is not None:
        end_line = next((i for i in range(title_line, len(lines)) if lines[i].strip() == terminator), None)
        if end_line is not None:
            end = next((i for i in range(start, len(nodes)) if (nodes[i].map or (0, 0))[0] > end_line), len(nodes))
            return Quote(start, end, _count_tasks(nodes, start, end), title)
    quoted_level = first[2]
    quoted: set[str] = set()
    count = 0
    for index in range(first[0], len(nodes)):
        node = nodes[index]
        if node.type != "heading":
            continue
        level = heading_level(node)
        parsed = task_heading(heading_text(node))
        if parsed is None:
            if level == 1:
                # another top-level title: the caller looks at it afresh
                return Quote(start, index, count, title)
            continue
        key = canonical_id(parsed[0])
        if quoted_level != outer_level:
            if level == outer_level:
                return Quote(start, index, count, title)
        elif key not in taken and key not in quoted:
            return Quote(start, index, count, title)
        quoted.add(key)
        count += 1
    return Quote(start, len(nodes), count, title)


def _count_tasks(nodes: Sequence[Node], start: int, end: int) -> int:
    return sum(
        1 for node in nodes[start:end] if node.type == "heading" and task_heading(heading_text(node)) is not None
    )
