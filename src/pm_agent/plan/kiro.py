"""Kiro task lists (the `tasks.md` of a Kiro spec): numbered checklist items, `- [ ] 2. Title` with sub-tasks
`- [ ] 2.1 Title` nested under it (or at the margin after it), each with its detail bullets and a
`_Requirements: 1.3, 2.1_` line.

A file with no task heading whose items include unchecked numbered ones is read with each leaf item (one without
sub-tasks) as a task heading (`Task 2.1: Title`), and each item with sub-tasks as a section heading above them;
the usual reader does the rest (tiers, references). Lines keep their numbers. The leaf's detail bullets are its
steps, its title its acceptance criterion, and each task follows the one before it, as Kiro runs them.

Not tasks, each named in a warning: a checked item (done), an optional one (`- [ ]* 2.2 ...`: Kiro skips those
unless asked), and a checkpoint (`- [ ] 3. Checkpoint — Ensure all tests pass`: pm-agent's gates run the tests
after every task). Their nested lines leave the text with them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from pm_agent.plan.checklist import in_order
from pm_agent.plan.markdown import fence_after, heading_line, literal
from pm_agent.plan.models import Task

_ITEM = re.compile(
    r"^(?P<indent> *)[-*+] \[(?P<mark>[ xX~-])\](?P<optional>\*)? +(?P<id>\d{1,3}(?:\.\d{1,3})*)\.? +(?P<title>\S.*)$"
)
_CHECKPOINT = re.compile(r"^(?:final\s+)?checkpoint\b", re.IGNORECASE)
_REQUIREMENTS = re.compile(r"^_?(?:requirements?|需求)\s*[:：]", re.IGNORECASE)


def has_items(text: str) -> bool:
    """Whether the text may be a Kiro task list (a cheap look before `as_headings`)."""
    return "] " in text and _ANY_ITEM.search(text) is not None


_ANY_ITEM = re.compile(r"^ *[-*+] \[[ xX~-]\]\*? +\d{1,3}(?:\.\d{1,3})*\.? ", re.MULTILINE)


@dataclass
class _Item:
    line: int  # 1-based
    indent: int
    task_id: str
    title: str
    skipped: str | None  # why it is no task (done, optional, a checkpoint), or None for a task
    details: list[str] = field(default_factory=list)  # its nested bullets' text


@dataclass
class Converted:
    """A Kiro task list as a heading plan: the text (same lines), the task items by line, what was skipped."""

    text: str
    tasks: dict[int, _Item]
    skipped: list[_Item]

    def annotate(self, tasks: list[Task]) -> list[Task]:
        """The tasks with their items' details as steps, their titles as criteria, and each after the one before."""
        out: list[Task] = []
        for task in tasks:
            item = self.tasks.get(task.line)
            if item is None:
                out.append(task)
                continue
            steps = [d for d in item.details if not _REQUIREMENTS.match(d)]  # `_Requirements: 1.3_` stays prose
            update: dict[str, object] = {
                "steps": task.steps or steps,
                "acceptance_criteria": task.acceptance_criteria or [item.title],
                "decision_log": [*task.decision_log, f"Kiro item {item.task_id}: its details are the steps"],
            }
            out.append(task.model_copy(update=update))
        return in_order(out, "Kiro's tasks run in the plan's order")

    def refused(self) -> tuple[str, int] | None:
        """Why a list with only done, optional and checkpoint items has nothing to run, at the first of them."""
        if self.tasks or not self.skipped:
            return None
        why = f"none of its {len(self.skipped)} Kiro items is left to run (done, optional or a checkpoint)"
        return why, self.skipped[0].line

    def warnings(self, path: Path | str | None) -> list[str]:
        """What the plan's reader is told about a Kiro task list."""
        where = f"{path}" if path else "plan"
        said = [
            f"{where}: a Kiro task list: its {len(self.tasks)} unchecked numbered items without sub-tasks are read as"
            " the tasks, each after the one before"
        ]
        said += [f"{where}:{i.line}: {i.task_id} {i.title!r} is {i.skipped}: not run" for i in self.skipped]
        return said


def as_headings(text: str) -> Converted:
    """The text with each leaf item a task heading and each item with sub-tasks a section heading, their nested
    lines taken out of the list; done, optional and checkpoint items blanked with their nested lines."""
    lines = text.split("\n")
    items = _items(lines)
    ids = [item.task_id for item in items]
    groups = {i for i, item in enumerate(items) if any(other.startswith(f"{item.task_id}.") for other in ids[i + 1 :])}
    by_line = {item.line: (i, item) for i, item in enumerate(items)}
    out: list[str] = []
    tasks: dict[int, _Item] = {}
    skipped: list[_Item] = []
    level, fence, current, dropping = 1, None, None, False
    for number, line in enumerate(lines, start=1):
        found = by_line.get(number)
        nested = current is not None and found is None and (not line.strip() or _indent(line) > current.indent)
        if nested and fence is None and current is not None:
            out.append("" if dropping else line[current.indent + 2 :] if line.strip() else "")
            continue
        current, dropping = None, False
        if found is None:
            fence = fence_after(fence, line)
            heading = heading_line(line) if fence is None else None
            if heading is not None:
                level = heading[0]
            out.append(line)
            continue
        index, item = found
        current = item
        marks = "#" * min(level + 1, 6)
        if index in groups:
            out.append(f"{marks} {item.task_id}. {literal(item.title)}")  # its bullets: the group's, no task's
        elif item.skipped is not None:
            skipped.append(item)
            out.append("")
            dropping = True
        else:
            tasks[number] = item
            out.append(f"{marks} Task {item.task_id}: {literal(item.title)}")
    return Converted("\n".join(out), tasks, skipped)


def _items(lines: list[str]) -> list[_Item]:
    """Every numbered checklist item outside fences, with its nested bullets' text."""
    found: list[_Item] = []
    fence: str | None = None
    for number, line in enumerate(lines, start=1):
        was, fence = fence, fence_after(fence, line)
        if was is not None or fence is not None:
            continue
        item = _ITEM.match(line)
        if item is not None:
            title = item.group("title").strip()
            skipped = (
                "done (checked off in the plan)" if item.group("mark") in "xX"  # `[-]`: under way, still to do
                else "optional in the plan (`*`)" if item.group("optional")
                else "a checkpoint (pm-agent's gates run the tests after every task)" if _CHECKPOINT.match(title)
                else None
            )  # fmt: skip
            found.append(_Item(number, len(item.group("indent")), item.group("id"), title, skipped))
        elif found and line.strip() and _indent(line) > found[-1].indent:
            bullet = line.strip()
            if bullet[:2] in ("- ", "* ", "+ "):
                found[-1].details.append(bullet[2:].strip())
    return found


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))
