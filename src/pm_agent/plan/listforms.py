"""Plans without task headings whose tasks are list items: checklist tasks (checklist.py), Spec Kit's (speckit.py),
Kiro's (kiro.py), an OpenSpec change's groups (openspec.py) and an Agent OS 1.x spec's parent tasks (agentos1.py).
Each form turns its items into task headings, line for line, and the plan reader reads the result."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from pm_agent.plan.draft import ParsedPlan
from pm_agent.plan.models import PlanHeader, Task


class _Listed(Protocol):
    """A plan form without task headings, its tasks list items (checklist.py, speckit.py, kiro.py, openspec.py)."""

    text: str  # the plan with each task item a task heading, lines kept

    def refused(self) -> tuple[str, int] | None:
        """Why the list has no task to run though it has items (with a line), or None."""

    def annotate(self, tasks: list[Task]) -> list[Task]:
        """The tasks read from `text`, with what the form says beyond their headings."""

    def warnings(self, path: Path | str | None) -> list[str]:
        """What the plan's reader is told about the form."""


class _ListForm(Protocol):
    def has_items(self, text: str) -> bool: ...

    def as_headings(self, text: str) -> _Listed: ...


def read_listed(
    text: str, path: Path | str | None, read: Callable[[str], ParsedPlan]
) -> tuple[ParsedPlan | None, tuple[str, int] | None]:
    """A plan without task headings read (by `read`, the plan reader) by its task items in the first form that has
    them to run, else None; and why the first form met has nothing to run (its items all done), if one does (other
    readings come first)."""
    # Imported here: few plans need them, and their regexes would cost every plan load.
    from pm_agent.plan import agentos1, checklist, kiro, openspec, speckit

    forms: tuple[_ListForm, ...] = (checklist, speckit, kiro)
    first: _ListForm | None = None  # a form the file declares: its items are read its way or not at all
    if path is not None and openspec.change_folder(Path(path)) is not None:
        first = openspec.Form(Path(path))  # its groups are the tasks, not each item as Kiro's are
    elif agentos1.is_spec_list(text, path):
        first = agentos1  # a parent task with its sub-tasks is one task, not each sub-task as Kiro's are
    forms = (first, *forms) if first is not None else forms
    left: tuple[str, int] | None = None
    for form in forms:
        if not form.has_items(text):
            continue
        converted = form.as_headings(text)
        refused = converted.refused()
        if refused is not None and form is first:  # a change or spec whose tasks are all done is done
            return ParsedPlan(PlanHeader(), [], [], refused), None
        if refused is not None:
            left = left or refused
            continue
        parsed = read(converted.text)
        if parsed.tasks:
            parsed.tasks = converted.annotate(parsed.tasks)
            parsed.warnings[:0] = converted.warnings(path)
            return parsed, None
    return None, left
