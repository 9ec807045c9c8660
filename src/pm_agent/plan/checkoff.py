"""Completed tasks checked off in the plan's own checklists, as the tools that wrote the plan do it themselves.

OpenSpec's `archive` and `list` count a change's `- [x]` items, Kiro and Spec Kit show progress by them, and
superpowers' executor ticks each `- [ ] **Step 1: ...**` as it goes. When a run is released, the plan file on
the working branch gets `[x]` for what its completed tasks did: a task written as a checklist item (Kiro's
`- [ ] 2.1`, Spec Kit's `- [ ] T012`, `- [ ] Task 1:`) is ticked with the items nested under it; a task
written as a heading (`### Task 3:`, OpenSpec's `## 2. Group`, Trae's `### [ ] Task 1:`) is ticked with every
checklist item of its section (to the next heading of its level or above, or the next task). Nothing else of
the text changes; fenced code is left alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from pm_agent.plan import openspec, taskmaster
from pm_agent.plan.markdown import fence_after, heading_line
from pm_agent.plan.models import Task

_BOX = re.compile(r"^(?P<lead>\s*(?:[-*+]|\d{1,9}[.)]) \[) \](?=\s|\*|$)")  # `- [ ] ...`, `1. [ ] ...`
_HEADING_BOX = re.compile(r"^(?P<lead> {0,3}#{1,6}\s+\[) \](?=\s)")  # `### [ ] Task 1: ...`


def check_off(text: str, task_lines: Iterable[int], every: Iterable[int] = ()) -> tuple[str, int]:
    """The text with the items of the tasks starting at `task_lines` (1-based) checked, and how many were. `every`:
    the first lines of the file's other tasks, done or not: no task's items reach into another's."""
    lines = text.split("\n")
    starts = sorted({n for n in task_lines if 1 <= n <= len(lines)})
    bounds = sorted({*starts, *every})
    fenced = _fenced(lines)
    ticked = 0
    for start in starts:
        limit = next((n for n in bounds if n > start), len(lines) + 1)
        for number in _extent(lines, fenced, start, limit):
            line = lines[number - 1]
            new = _BOX.sub(r"\g<lead>x]", line, count=1)
            if new == line and number == start:
                new = _HEADING_BOX.sub(r"\g<lead>x]", line, count=1)
            if new != line:
                lines[number - 1] = new
                ticked += 1
    return "\n".join(lines), ticked


def _fenced(lines: list[str]) -> set[int]:
    """The 1-based numbers of the lines inside code fences, their fence lines included."""
    inside: set[int] = set()
    fence: str | None = None
    for number, line in enumerate(lines, start=1):
        was, fence = fence, fence_after(fence, line)
        if was is not None or fence is not None:
            inside.add(number)
    return inside


def _extent(lines: list[str], fenced: set[int], start: int, limit: int) -> list[int]:
    """The lines of the task that starts at `start`: a heading's section, or a list item with its nested lines;
    never past `limit` (the next task's line)."""
    if start in fenced:
        return []
    first = lines[start - 1]
    heading = heading_line(first)
    found = [start]
    if heading is not None:
        for number in range(start + 1, limit):
            if number in fenced:
                continue
            other = heading_line(lines[number - 1])
            if other is not None and other[0] <= heading[0]:
                break
            found.append(number)
        return found
    indent = len(first) - len(first.lstrip())
    for number in range(start + 1, limit):
        line = lines[number - 1]
        if line.strip() and number not in fenced and len(line) - len(line.lstrip()) <= indent:
            break
        if number not in fenced:
            found.append(number)
    return found


def task_files(plan: Path, tasks: Iterable[Task]) -> dict[Path, list[Task]]:
    """Each file of the plan at `plan` (a file or folder) with the given tasks it holds."""
    from_plan = [task for task in tasks if task.line > 0]  # line 0: not from the plan (a remediation task)
    change = openspec.change_folder(plan) if plan.is_dir() else None
    if taskmaster.is_task_list(plan):
        single: Path | None = plan / "tasks" / "tasks.json" if plan.is_dir() else plan
    elif change is not None:
        single = change / openspec.TASKS_FILE
    else:
        single = None if plan.is_dir() else plan
    if single is not None:
        return {single: from_plan} if from_plan else {}
    found: dict[Path, list[Task]] = {}
    for task in from_plan:
        if task.source and Path(task.source).is_absolute():  # a folder plan's file, as it was read
            found.setdefault(Path(task.source), []).append(task)
    return found


def released_plan(
    repo: Path, plan: Path, release: Path, tasks: list[Task], done: set[str]
) -> tuple[dict[str, str], list[str]]:
    """The plan's files (repository-relative) with the items of the `done` ones of its `tasks` checked, as the
    release commits them in the working branch's checkout at `release`, and a line for each file. A file the
    branch does not hold as the run read it (an uncommitted plan, or one edited since) is left alone."""
    files: dict[str, str] = {}
    said: list[str] = []
    for file, listed in task_files(plan, tasks).items():
        finished = [t for t in listed if t.id in done]
        if not finished:
            continue
        try:
            rel = file.resolve().relative_to(repo.resolve()).as_posix()
            ours, theirs = file.read_bytes().decode("utf-8"), (release / rel).read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError, ValueError):
            continue  # outside the repository, or not on the working branch
        json_file = file.suffix.lower() == ".json"
        if _marks_aside(theirs, json_file) != _marks_aside(ours, json_file):
            said.append(f"{rel}: the working branch's copy is not the plan as run: nothing checked off")
            continue
        # The branch's copy: an agent may have checked off its own items already, as OpenSpec asks it to.
        if json_file:  # Task Master's: its statuses, not boxes
            checked, count = taskmaster.mark_done(theirs, [t.id for t in finished], file)
            what = "task status(es) set to done"
        else:  # "\r\n" kept: the lines change, not their endings
            checked, count = check_off(theirs, [t.line for t in finished], [t.line for t in listed])
            what = "checklist item(s) of the completed tasks checked off"
        if count:
            files[rel] = checked
            said.append(f"{rel}: {count} {what}")
    return files, said


_MARK = re.compile(r"\[[xX]\]")
_STATUS = re.compile(r'("status":\s*)"[^"\\]*"')


def _marks_aside(text: str, json_file: bool) -> str:
    """The text with every checkbox unchecked (every status blank in JSON): what no check-off changes."""
    return _STATUS.sub(r'\1""', text) if json_file else _MARK.sub("[ ]", text)
