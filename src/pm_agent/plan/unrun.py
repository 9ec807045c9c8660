"""Task headings the plan reader does not run: the ones checked off as done, and the near misses.

Trae writes its plans' task headings with a checkbox (`### [ ] Task 1: Title`); a checked one (`### [x] Task 3:
Title`) is done by the plan's own account, as a checked item is in a checklist plan (checklist.py): no task, a
warning names it, and a dependency on it is met (dropped, the task's decision log says so), as Spec Kit's are.

A heading that starts with a task word and a number but is no task heading (`## Task 104 global loop`: no
separator after the number) would lose its section without a word: a warning names it, and when the plan has
no task at all the error says why those headings were not read.
"""

from __future__ import annotations

from dataclasses import dataclass

from pm_agent.plan.deps import range_ids
from pm_agent.plan.draft import Draft
from pm_agent.plan.fields import canonical_id, task_heading_miss
from pm_agent.plan.markdown import Node, first_line
from pm_agent.plan.models import Dependency, Task


@dataclass(frozen=True)
class Done:
    """A task heading checked off in the plan."""

    line: int
    task_id: str
    title: str


@dataclass(frozen=True)
class Miss:
    """A heading that starts like a task heading (`Task 104 global loop`) and is none, and why."""

    line: int
    text: str
    level: int
    word: str
    task_id: str
    why: str

    def expected(self) -> str:
        """The heading as a task heading would be written: `## Task 104: Title`."""
        return f"{'#' * self.level} {self.word} {self.task_id}: Title"


def done_warning(done: Done) -> str:
    """What the reader is told about a task heading checked off in the plan."""
    return f"'Task {done.task_id}: {done.title}' is checked off in the plan: done, not run"


def near_miss(text: str, level: int, node: Node, draft: Draft | None) -> tuple[Miss, str] | None:
    """A heading (`text`, `level`, `node`; `draft` the task open before it) that starts like a task heading and is
    none, and the warning about it; None for any other heading."""
    found = task_heading_miss(text)
    if found is None:
        return None
    miss = Miss(first_line(node), text, level, *found)
    within = draft is not None and level > draft.level and not draft.done
    where = "its section is part of no task"
    if within and draft is not None:
        where = f"read as part of Task {draft.task_id}"
    return miss, f"{text!r} is not read as a task heading ({miss.why}; write '{miss.expected()}'): {where}"


def without_done(tasks: list[Task], done: list[Done]) -> list[Task]:
    """The tasks with their dependencies on done tasks dropped, each noted in the task's decision log."""
    if not done:
        return tasks
    keys = {canonical_id(item.task_id) for item in done}
    out: list[Task] = []
    for task in tasks:
        kept: list[Dependency] = []
        met: list[str] = []
        for dep in task.depends_on:
            named = range_ids(dep.task_id) or [dep.task_id]  # `Tasks 1-3` with task 2 done: 1 and 3 are left
            left = [i for i in named if canonical_id(i) not in keys]
            met += [i for i in named if canonical_id(i) in keys]
            if left == [dep.task_id]:
                kept.append(dep)
            else:
                kept += [dep.model_copy(update={"task_id": i}) for i in left]
        if not met:
            out.append(task)
            continue
        log = [f"depends on task-{task_id}, checked off in the plan: done" for task_id in met]
        out.append(task.model_copy(update={"depends_on": kept, "decision_log": [*task.decision_log, *log]}))
    return out


def refusal(done: list[Done], misses: list[Miss]) -> tuple[str, int] | None:
    """Why a plan without tasks has none though it has task headings (all done) or near misses, with a line."""
    if done:
        first = done[0]
        return (
            f"its {len(done)} task heading(s) were found and are all checked off in the plan as done (the first, "
            f"line {first.line}: 'Task {first.task_id}: {first.title}'): nothing left to run",
            first.line,
        )
    if misses:
        miss = misses[0]
        said = (
            f"its headings {miss.text!r} and {len(misses) - 1} more like it have {miss.why}, "
            "so they are not read as task headings"
            if len(misses) > 1
            else f"its heading {miss.text!r} has {miss.why}, so it is not read as a task heading"
        )
        return f"{said} (write '{miss.expected()}')", miss.line
    return None
