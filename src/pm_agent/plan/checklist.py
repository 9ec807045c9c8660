"""Plans whose tasks are checklist items: `- [ ] Task 1: Title (AC: #1)` with the subtasks nested under it.

Story files (`## Tasks / Subtasks` in a BMAD story) and loop plans (`## Tasks` in an IMPLEMENTATION_PLAN.md) list
their tasks this way instead of as headings. A file with no task heading, whose top-level list items include
unchecked `Task N:` items, is read with each such item as a task heading one level below the section holding
it, and the item's nested lines, de-indented, as its body: the usual reader then does the rest (fields, files,
references, tiers). Lines keep their numbers. An item's trailing `(AC: #1, #2)` or `(files: ...)` is kept out
of its title (first in its description and body), and `AC:` brings the document's numbered acceptance criteria
it names (a story's `## Acceptance Criteria`). A checked item (`- [x] Task 0: ...`) is done by the plan's own
account: it is no task, a warning names it, and it leaves the text with its nested lines.

Conductor's plan.md (the Gemini CLI extension) lists `- [ ] Task: Title` items, without a number, under
`## Phase N:` headings: they are numbered in plan order (done ones counted too, so ids stay as items get checked
off) and each follows the one before it, as Conductor runs them; its `Task: Conductor - User Manual Verification`
items are the user's checks, not tasks (a warning names each).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path

from pm_agent.plan.fields import task_heading
from pm_agent.plan.markdown import fence_after, heading_line
from pm_agent.plan.models import Dependency, Task

# A top-level checklist item naming a task: `- [ ] Task 1: Title`, `* [x] TASK 2: Title`.
# A commit's short sha may come first (`- [x] 7a51dc3 Task: ...`, Conductor's mark of a done task).
_ITEM = re.compile(
    r"^[-*+] \[(?P<mark>[ xX~-])\] (?:[0-9a-f]{7,40} )?(?P<text>(?:\*\*)?(?:task|任务)\s*\S.*)$", re.IGNORECASE
)


def has_items(text: str) -> bool:
    """Whether the text may hold checklist tasks (a cheap look before `as_headings`)."""
    lowered = text.lower()
    return "] task" in lowered or "] **task" in lowered or "] 任务" in text or re.search(_SHA_TASK, lowered) is not None


_SHA_TASK = r"\] [0-9a-f]{7,40} task"  # `- [x] 7a51dc3 Task: ...`


@dataclass
class Converted:
    """A checklist plan as a heading plan: the text (same lines), the annotations taken out of the items' titles
    (`(AC: #1)`, `(files: ...)`) by line, and the checked task items (line, text)."""

    text: str
    made: int
    notes: dict[int, str]
    checked: list[tuple[int, str]]
    criteria: dict[str, str]  # the document's numbered acceptance criteria (a story's), by number
    manual: list[tuple[int, str]] = field(default_factory=list)  # Conductor's verification items: the user's
    unnamed: int = 0  # how many items were `Task: Title` without a number (Conductor's), numbered in order

    def annotate(self, tasks: list[Task]) -> list[Task]:
        """The tasks with their items' annotations put first in their description and body, and the acceptance
        criteria an `AC: #1, #2` annotation names among the task's own."""
        annotated: list[Task] = []
        for task in tasks:
            note = self.notes.get(task.line)
            if not note:
                annotated.append(task)
                continue
            named = _AC.match(note)
            numbers = re.findall(r"\d+", named.group(1)) if named is not None else []
            criteria = [self.criteria[n] for n in numbers if n in self.criteria]
            update = {
                "description": f"{note}\n\n{task.description}".strip(),
                "body": _after_heading(task.body, note),
                "acceptance_criteria": [*task.acceptance_criteria, *criteria],
            }
            annotated.append(task.model_copy(update=update))
        # Conductor runs a plan's tasks one after the other ("the next pending task"): so does pm-agent.
        return in_order(annotated, "Conductor's tasks run in the plan's order") if self.unnamed else annotated

    def refused(self) -> tuple[str, int] | None:
        """Why a checklist whose task items are all done (or the user's checks) has nothing to run, at its first."""
        if self.made or not (self.checked or self.manual):
            return None
        first = min(line for line, _ in [*self.checked, *self.manual])
        done = len(self.checked) + len(self.manual)
        return f"none of its {done} checklist task items is left to run (done, or the user's checks)", first

    def warnings(self, path: Path | str | None) -> list[str]:
        """What the plan's reader is told about a checklist plan."""
        where = f"{path}" if path else "plan"
        said = [
            f"{where}: no 'Task N:' headings: the {self.made} unchecked '- [ ] Task N:' items are read as the tasks"
            + (" ('- [ ] Task:' items numbered in the order of the plan)" if self.unnamed else "")
        ]
        said += [f"{where}:{line}: '{text}' is checked off in the plan: done, not run" for line, text in self.checked]
        said += [f"{where}:{line}: '{text}' is yours to do (Conductor's check): not run" for line, text in self.manual]
        return said


def in_order(tasks: list[Task], why: str) -> list[Task]:
    """The tasks, each depending on the one before it (`why` its note): a form whose tool runs them in order."""
    ordered = tasks[:1]
    for before, task in pairwise(tasks):
        step = Dependency(task_id=before.id, note=why)
        ordered.append(task.model_copy(update={"depends_on": [*task.depends_on, step]}))
    return ordered


def group_ids(numbers: Sequence[str | None]) -> list[str]:
    """Each group's task id, in order: its number when every group has a distinct one, else its position (from 1)."""
    if None not in numbers and len(set(numbers)) == len(numbers):
        return [str(n) for n in numbers]
    return [str(position) for position in range(1, len(numbers) + 1)]


def as_headings(text: str) -> Converted:
    """The text with each unchecked top-level `Task N:` item turned into a task heading and its nested lines
    de-indented (no line moves); the checked task items are left as they are."""
    lines = text.split("\n")
    out: list[str] = []
    notes: dict[int, str] = {}
    checked: list[tuple[int, str]] = []
    manual: list[tuple[int, str]] = []
    level, fence, made, unnamed, dropping = 1, None, 0, 0, False
    indent: int | None = None  # inside a converted item: the indent its nested lines are taken out of
    for number, line in enumerate(lines, start=1):
        if dropping:
            if not line.strip() or line[:1] in (" ", "\t"):
                out.append("")
                continue
            dropping = False
        if fence is not None:
            fence = fence_after(fence, line)
            out.append(_dedent(line, indent))
            continue
        fence = fence_after(None, line)
        heading = heading_line(line)
        if heading is not None:
            level, indent = heading[0], None
            out.append(line)
            continue
        item = _ITEM.match(line)
        named = _named(item.group("text"), unnamed) if item is not None else None
        if named is not None and item is not None:
            unnamed += named[1]
            if named[0] is None or item.group("mark") in "xX":  # `[~]`, `[-]`: under way, still to do
                # Done, or Conductor's check by the user: no task, and out of the text with its nested lines, or
                # they would read as more steps of the task above.
                (checked if named[0] is not None else manual).append((number, item.group("text").strip()))
                out.append("")
                indent, dropping = None, True
                continue
            title, note = _annotated(named[0])
            out.append(f"{'#' * min(level + 1, 6)} {title}")
            if note:
                notes[number] = note
            indent, made = 2 + len("[ ] "), made + 1
            continue
        if indent is not None and line.strip() and not line.startswith(" "):
            indent = None  # the item's nested lines ended: anything at the margin is the section's again
        out.append(_dedent(line, indent))
    return Converted("\n".join(out), made, notes, checked, _criteria(lines), manual, unnamed)


def _named(text: str, unnamed: int) -> tuple[str | None, int] | None:
    """An item's task heading text and whether it used up a number: `Task 3: Title` as it is; Conductor's
    `Task: Title` (or `**Task: Title**`) numbered in order, every such item counted (checked ones too, so the
    ids stay as items get checked off); its manual verification item (None, counted); None for no task item."""
    text = text.strip()
    if text.startswith("**") and text.endswith("**"):
        text = text[2:-2].strip()  # `**Task: Title**`: the words, not their emphasis
    if task_heading(text) is not None:
        return text, 0
    bare = _UNNAMED.match(text)
    if bare is None:
        return None
    if _MANUAL.match(bare.group("title")):
        return None, 1
    return f"Task {unnamed + 1}: {bare.group('title')}", 1


# Conductor's plan.md (Gemini CLI's conductor extension): `- [ ] Task: Title` under `## Phase N:` headings, its
# subtasks nested, and a `Task: Conductor - User Manual Verification '<phase>' (Protocol in workflow.md)` per phase.
_UNNAMED = re.compile(r"^task\s*:\s*(?P<title>.*\S)$", re.IGNORECASE)
_MANUAL = re.compile(r"^conductor\s*[-–—:]\s*user manual verification\b", re.IGNORECASE)


def _criteria(lines: list[str]) -> dict[str, str]:
    """The numbered items of the document's `Acceptance Criteria` section (`1. **Given** ... **Then** ...`)."""
    found: dict[str, str] = {}
    inside, number = False, None
    for line in lines:
        if heading_line(line) is not None:
            inside, number = "acceptance criteria" in line.lower(), None
            continue
        if not inside:
            continue
        item = _NUMBERED_ITEM.match(line)
        if item is not None:
            number = item.group(1)
            found[number] = item.group(2).replace("**", "").strip()  # `**Given**`: the words, not their emphasis
        elif number is not None and line.strip() and line.startswith(" "):
            found[number] += " " + line.replace("**", "").strip()  # the item's next line
        elif not line.strip():
            number = None
    return found


_NUMBERED_ITEM = re.compile(r"^ {0,3}(\d{1,3})[.)]\s+(\S.*)$")
_AC = re.compile(r"^AC\s*:\s*(.*)$", re.IGNORECASE)


def _annotated(text: str) -> tuple[str, str]:
    """`Task 1: Title (AC: #1, #2)` -> (`Task 1: Title`, `AC: #1, #2`): the annotation is kept as text, not title."""
    match = _ANNOTATION.match(text)
    return (match.group("title"), match.group("note").strip()) if match is not None else (text, "")


_ANNOTATION = re.compile(r"^(?P<title>.*?\S)\s*\((?P<note>(?:AC|files?)\s*:[^()]*)\)\s*$", re.IGNORECASE)


def _dedent(line: str, indent: int | None) -> str:
    """A nested line of a converted item, taken out of the list (up to `indent` spaces; a tab counts as one)."""
    if indent is None:
        return line
    stripped = line.lstrip(" \t")
    return line[min(indent, len(line) - len(stripped)) :]


def _after_heading(body: str, note: str) -> str:
    """The task's section with the item's annotation as its first line after the heading."""
    heading, _, rest = body.partition("\n")
    return f"{heading}\n{note}\n{rest}"
