"""A dependency table outside the tasks (`| Task | Description | Depends On |` under `## Execution Order`): each
row adds the tasks its dependency cell lists to its task's dependencies, read as a `Depends on` value is."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pm_agent.plan import fields
from pm_agent.plan.draft import Draft
from pm_agent.plan.markdown import Node, inline_of, plain
from pm_agent.plan.models import Dependency, Task
from pm_agent.plan.refs import read_refs

if TYPE_CHECKING:  # task_body imports what this module does: a name for the type only
    from pm_agent.plan.task_body import TaskBody

__all__ = ["Row", "add_table_deps", "dependency_rows"]

# Header words, lowercased without markup. An id column goes before a `Task` one, which may hold the titles.
_TASK_COLUMNS = ("id", "task id", "#", "task #", "no.", "task")
_DEPENDS_COLUMNS = frozenset(
    {"depends on", "depends", "dependencies", "dependency", "deps", "blocked by", "prerequisites", "prerequisite"}
)


@dataclass(frozen=True)
class Row:
    """One row of a dependency table: its plan line, its task cell and its dependency cell, as plain text."""

    line: int
    task: str
    depends: str


def _cells(row: Node) -> list[str]:
    cells: list[str] = []
    for cell in row.children:
        inline = inline_of(cell)
        cells.append(plain(inline).strip() if inline is not None else "")
    return cells


def _header_word(text: str) -> str:
    return " ".join(text.strip("*_` ").rstrip(":：").lower().split())


def dependency_rows(table: Node) -> list[Row]:
    """The rows of a table whose header has a task column and a dependency column; [] for any other table."""
    head = next((part for part in table.children if part.type == "thead"), None)
    if head is None or not head.children:
        return []
    header = [_header_word(text) for text in _cells(head.children[0])]
    task_column = next((header.index(word) for word in _TASK_COLUMNS if word in header), None)
    depends_column = next((i for i, word in enumerate(header) if word in _DEPENDS_COLUMNS), None)
    if task_column is None or depends_column is None:
        return []
    rows: list[Row] = []
    for part in table.children:
        for row in part.children if part.type == "tbody" else ():
            cells = _cells(row)
            if max(task_column, depends_column) < len(cells) and row.map is not None:
                rows.append(Row(row.map[0] + 1, cells[task_column], cells[depends_column]))
    return rows


def _task_index(cell: str, by_key: dict[str, int], by_title: dict[str, int]) -> int | None:
    """The task a row's task cell names (`3`, `Task 3`, `Task 3: Title`, or its title), if the plan has it."""
    if cell.casefold() in by_title:
        return by_title[cell.casefold()]
    try:
        refs = read_refs(cell)
    except ValueError:
        return None
    return by_key.get(fields.canonical_id(refs[0].task_id)) if refs else None


def add_table_deps(body: TaskBody, tasks: list[Task], rows: list[Row]) -> list[Task]:
    """The tasks with each row's dependencies added to its task's (a task named twice is one dependency); a row
    whose task is not in the plan, or prose in a cell that names no task, is warned about (file:line)."""
    by_key = {fields.canonical_id(task.id): index for index, task in enumerate(tasks)}
    by_title = {task.title.casefold(): index for index, task in reversed(list(enumerate(tasks)))}
    out = list(tasks)
    for row in rows:
        index = _task_index(row.task, by_key, by_title)
        if index is None:
            body.warn(
                f"the dependency table's row for {row.task!r} names no task of the plan: its "
                f"dependencies ({row.depends!r}) are not read",
                row.line,
            )
            continue
        if not row.depends.strip(" -–—"):  # `--`, `-`, `—` or nothing: no dependency
            continue
        scratch = Draft(task_id=out[index].id, title="", line=row.line, level=0)
        unread: list[tuple[int, str]] = []
        body.add_refs(scratch, row.depends, row.line, unread)
        for line, message in unread:
            body.warn(f"ignored in the dependency table: {message}", line)
        task = out[index]
        known = {fields.canonical_id(dep.task_id) for dep in task.depends_on}
        added = [
            Dependency(task_id=ref.task_id, note=ref.note or f"the dependency table, line {row.line}")
            for ref in scratch.refs
            if fields.canonical_id(ref.task_id) not in known
        ]
        if added:
            update = {"depends_on": [*task.depends_on, *added], "declared_independent": False}
            out[index] = task.model_copy(update=update)
    return out
