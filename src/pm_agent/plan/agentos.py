"""Agent OS task breakdowns (`agent-os/specs/<date>-<name>/tasks.md`, buildermethods/agent-os): its tasks are
task groups, `#### Task Group 2: API endpoints` with `**Dependencies:** Task Group 1`, a `- [ ] 2.0 Complete the
API layer` item whose sub-items are the group's steps (write focused tests, implement, ensure they pass) and
`**Acceptance Criteria:**`. Its implementer takes a group at a time, so each group is one task (`Task 2`): the
headings and references say `Task` for `Task Group`, line for line, and the usual reader does the rest (the
group's dependencies, criteria and items; groups without dependencies may run side by side)."""

from __future__ import annotations

import re

from pm_agent.plan.markdown import fence_after

_GROUP = re.compile(r"\bTask Group(s?)\b")
_HEADING = re.compile(r"^ {0,3}#{1,6}\s")
_GROUP_HEADING = re.compile(r"^ {0,3}#{1,6}\s+Task Group \d")
_TASK_HEADING = re.compile(r"^( {0,3}#{1,6}\s+)(?=Task \d)")
_ITEM = re.compile(r"^[-*+] \[([ xX])\] ")


def has_groups(text: str) -> bool:
    """Whether the text names task groups in headings (a cheap look before `as_tasks`)."""
    return "Task Group " in text and re.search(r"^#{1,6}\s+Task Group \d", text, re.MULTILINE) is not None


def as_tasks(text: str) -> str:
    """The text with `Task Group(s)` read as `Task(s)` outside code fences (no line moves), and the heading of a
    group whose items are all checked off written as checked (`#### [x] Task 2: ...`): done, not run."""
    out: list[str] = []
    fence: str | None = None
    groups: dict[int, list[bool]] = {}  # a group heading's index: its items at the margin, checked or not
    current: int | None = None
    for index, line in enumerate(text.split("\n")):
        was, fence = fence, fence_after(fence, line)
        if was is not None or fence is not None:
            out.append(line)
            continue
        if _HEADING.match(line):
            current = index if _GROUP_HEADING.match(line) else None
            if current is not None:
                groups[current] = []
        elif current is not None and (item := _ITEM.match(line)):
            groups[current].append(item.group(1) in "xX")
        out.append(_GROUP.sub(r"Task\1", line))
    for index, checked in groups.items():
        if checked and all(checked):
            out[index] = _TASK_HEADING.sub(r"\1[x] ", out[index], count=1)
    return "\n".join(out)
