"""Agent OS 1.x spec task lists (`.agent-os/specs/<date>-<name>/tasks.md`, buildermethods/agent-os before 2.0):

    These are the tasks to be completed for the spec detailed in @.agent-os/specs/2025-08-31-types/spec.md
    ## Tasks
    - [ ] 1. Implement Common Types Foundation
      - [ ] 1.1 Write tests for common types
      - [ ] 1.2 Create types/common.go with Repository and User structs
      - [ ] 1.3 Verify all common types tests pass

or the same with `### 1. Title` headings over the sub-tasks. Its execute-tasks runs a parent task with all its
sub-tasks in one go (the tests first, the check that they pass last), so each parent is one task (`Task 1`):
its unchecked sub-tasks are its acceptance criteria (its title when it has none), and each follows the one
before. Read as Kiro's list, each sub-task was a task of its own, and "Write tests for ..." could never pass
the gates alone. A parent checked off, or whose sub-tasks all are, is done, and one whose title says SKIPPED is
skipped: neither runs, each is named in a warning. The documents beside tasks.md (spec.md, spec-lite.md,
sub-specs/) are named for the agent by companions.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from pm_agent.plan.checklist import group_ids, in_order
from pm_agent.plan.markdown import fence_after, heading_line, literal
from pm_agent.plan.models import PlanHeader, Task

_MARK = "@.agent-os/specs/"
_PARENT = re.compile(r"^(?P<indent> {0,3})[-*+] \[(?P<mark>[ xX~-])\] +(?P<n>\d{1,3})\.? +(?P<title>\S.*)$")
_ITEM = re.compile(r"^ *[-*+] \[(?P<mark>[ xX~-])\] +(?:\d{1,3}(?:\.\d{1,3})+\.?\s+)?(?P<text>\S.*)$")
_SKIPPED = re.compile(r"\bSKIPPED\b|\(skipped\)")  # `- [ ] 13. Zustand store (Optional) - SKIPPED`
_SPEC_NAME = re.compile(r"^> *Spec: *(?P<name>\S.*)$", re.MULTILINE)
_NUMBERED = re.compile(
    r"^(?:(?:phase|group|part|stage|step|task)\s+)?(?P<n>\d{1,3})(?:[.):]|\s*[-—–])?\s+(?P<title>\S.*)$", re.I
)


def is_spec_list(text: str, path: Path | str | None) -> bool:
    """Whether the task list is an Agent OS 1.x spec's: it names its spec (`@.agent-os/specs/...`) near its top, or
    lies in `.agent-os/specs/`."""
    parts = Path(path).parts if path is not None else ()
    return _MARK in text[:3000] or (".agent-os" in parts and "specs" in parts)


def header(plan_path: Path, read: PlanHeader) -> PlanHeader:
    """The header of an Agent OS 1.x tasks.md, whose title is always "Spec Tasks": its spec's name instead (spec.md's
    `> Spec: Types and Models`); any other plan's header as read."""
    spec = plan_path.parent / "spec.md"
    if read.title.strip().casefold() != "spec tasks" or not spec.is_file():
        return read
    named = _SPEC_NAME.search(spec.read_text(encoding="utf-8", errors="replace")[:3000])
    return read.model_copy(update={"title": named["name"].strip()}) if named else read


@dataclass
class _Parent:
    line: int  # 1-based
    task_id: str
    title: str
    level: int  # the heading level its task heading takes
    indent: int | None  # a list item's indent (its nested lines are its own); None for a heading
    checked: bool
    end: int = 0  # the line after its last
    open_items: list[str] = field(default_factory=list)
    done_items: list[str] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return self.checked or (bool(self.done_items) and not self.open_items) or self.skipped

    @property
    def skipped(self) -> bool:
        return _SKIPPED.search(self.title) is not None


@dataclass
class Converted:
    """tasks.md as a heading plan (lines kept): each parent task left to do a task heading."""

    text: str
    tasks: dict[int, _Parent]
    done: list[_Parent]

    def annotate(self, tasks: list[Task]) -> list[Task]:
        """Each parent's unchecked sub-tasks as its acceptance criteria, and each task after the one before."""
        out: list[Task] = []
        for task in tasks:
            parent = self.tasks.get(task.line)
            if parent is None:
                out.append(task)
                continue
            note = f"Agent OS task {parent.task_id}: its {len(parent.open_items)} unchecked sub-task(s) are the task"
            if not parent.open_items:
                note = f"Agent OS task {parent.task_id} has no sub-task: its title is the task"
            elif parent.done_items:
                note += f" ({len(parent.done_items)} checked off already)"
            update: dict[str, object] = {
                "acceptance_criteria": task.acceptance_criteria or parent.open_items or [parent.title],
                "decision_log": [*task.decision_log, note],
            }
            out.append(task.model_copy(update=update))
        return in_order(out, "Agent OS runs a spec's tasks in order")

    def refused(self) -> tuple[str, int] | None:
        """Why the list has nothing to run: every parent task is checked off."""
        if self.tasks or not self.done:
            return None
        return f"every one of its {len(self.done)} Agent OS task(s) is checked off or skipped", self.done[0].line

    def warnings(self, path: Path | str | None) -> list[str]:
        """What the plan's reader is told about an Agent OS 1.x task list."""
        where = f"{path}" if path else "plan"
        said = [
            f"{where}: an Agent OS spec's tasks: each of its {len(self.tasks)} parent task(s) is a task with its"
            " sub-tasks, in order"
        ]
        said += [
            f"{where}:{p.line}: task {p.task_id} {p.title!r} is {'marked skipped' if p.skipped else 'checked off'}:"
            " not run"
            for p in self.done
        ]
        return said


def has_items(text: str) -> bool:
    """Whether the text holds a parent task (a cheap look before `as_headings`)."""
    return bool(_parents(text.split("\n")))


def as_headings(text: str) -> Converted:
    """The text with each parent left to do a task heading (a list item's nested lines moved to the margin under
    it), and each done parent blanked with its lines."""
    lines = text.split("\n")
    parents = _parents(lines)
    tasks: dict[int, _Parent] = {}
    done: list[_Parent] = []
    for parent, task_id in zip(parents, group_ids([p.task_id for p in parents]), strict=True):
        if parent.done:
            done.append(parent)
            lines[parent.line - 1 : parent.end - 1] = [""] * (parent.end - parent.line)
            continue
        parent.task_id = task_id
        tasks[parent.line] = parent
        lines[parent.line - 1] = f"{'#' * parent.level} Task {parent.task_id}: {literal(parent.title)}"
        if parent.indent is not None:
            cut = parent.indent + 2
            for i in range(parent.line, parent.end - 1):
                lines[i] = lines[i][cut:] if lines[i][:cut].strip() == "" else lines[i].lstrip()
    return Converted("\n".join(lines), tasks, done)


def _parents(lines: list[str]) -> list[_Parent]:
    """Every parent task: a numbered checklist item at the margin (its nested lines its own), or a numbered heading
    whose section holds checklist items; with their sub-tasks."""
    found: list[_Parent] = []
    current: _Parent | None = None
    level, fence = 1, None
    for number, line in enumerate(lines, start=1):
        # A fence inside a sub-task is indented past a top-level fence's three spaces: any indent opens one here.
        was, fence = fence, fence_after(fence, line.lstrip(" "))
        inside = was is not None or fence is not None
        outdented = current is not None and current.indent is not None and _indent(line) <= current.indent
        if current is not None and outdented and not inside and line.strip():
            current.end, current = number, None  # back at the parent's margin: its lines ended
        heading = heading_line(line) if not inside else None
        parent = _PARENT.match(line) if not inside and heading is None else None
        if heading is not None or (parent is not None and (current is None or current.indent is not None)):
            if current is not None:
                current.end = number
            current = None
        if heading is not None:
            level = heading[0]
            numbered = _NUMBERED.match(heading[1].strip()) if level > 1 else None
            if numbered is not None:
                current = _Parent(number, numbered["n"], numbered["title"].strip(), level, None, checked=False)
                found.append(current)
            continue
        if parent is not None and current is None:
            current = _Parent(
                number, parent["n"], parent["title"].strip(), min(level + 1, 6), len(parent["indent"]),
                checked=parent["mark"] in "xX",
            )  # fmt: skip
            found.append(current)
            continue
        item = _ITEM.match(line) if current is not None and not inside else None
        if item is not None and current is not None:
            text = item["text"].strip()
            if len(text) > 4 and text.startswith("**") and text.endswith("**"):
                text = text[2:-2].strip()  # `- [ ] **Button component standards**`: a title in bold
            (current.done_items if item["mark"] in "xX" else current.open_items).append(text)
    if current is not None:
        current.end = len(lines) + 1
    # A numbered heading over no sub-task is a section, not a task (`### 1. Overview`).
    return [p for p in found if p.indent is not None or p.open_items or p.done_items]


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))
