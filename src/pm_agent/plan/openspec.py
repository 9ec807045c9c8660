"""OpenSpec changes (`openspec/changes/<id>/`): proposal.md says why, design.md how, specs/ the requirements as
delta specs with their scenarios, and tasks.md the work as groups of checklist items:

    ## 1. Core Implementation
    - [ ] 1.1 Create `src/core/list.ts` with list logic
    - [ ] 1.2 Add list command to CLI in `src/cli/index.ts`

OpenSpec's apply works through a change's tasks in order, checking items off as it goes. Its items are steps of
one piece of work (`1.3 Pattern: ^[a-z]...` belongs to `1.2 Implement validateChangeName()`), so pm-agent makes
each group one task: its id the group's number (else its position), its title the heading's, its unchecked
items its acceptance criteria, its section its body, and each group after the one before. A group whose items
are all checked is done: no task, a warning names it. The plan is named after the change's folder, its title
and goal come from proposal.md (`# Change: ...`, `## Why`), its design doc (unless one is given) is design.md,
else proposal.md; each task's body points the agent at the change's folder for the requirements.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from pm_agent.errors import PlanError
from pm_agent.plan.checklist import group_ids, in_order
from pm_agent.plan.markdown import fence_after, heading_line, literal
from pm_agent.plan.models import PlanHeader, Task

TASKS_FILE = "tasks.md"
_MARKERS = ("proposal.md", ".openspec.yaml")
_ITEM = re.compile(r"^[-*+] \[(?P<mark>[ xX~-])\] +(?P<text>\S.*)$")
# `1. Type Definitions`, `Phase 2: Change Creation`, `3) Tests`: the group's number and title.
_NUMBERED = re.compile(
    r"^(?:(?:phase|group|part|stage|step)\s+)?(?P<n>\d{1,3})(?:[.):]|\s*[-—–])?\s+(?P<title>\S.*)$", re.IGNORECASE
)
_TITLE_PREFIX = re.compile(r"^(?:change|proposal)\s*:\s*", re.IGNORECASE)


def change_folder(path: Path) -> Path | None:
    """The OpenSpec change `path` is (its folder) or whose tasks.md it is; None when it is neither."""
    folder = path if path.is_dir() else path.parent if path.name == TASKS_FILE else None
    if folder is None or not (folder / TASKS_FILE).is_file():
        return None
    return folder if any((folder / marker).exists() for marker in _MARKERS) else None


def refuse_folder(folder: Path) -> None:
    """A PlanError when `folder` is an OpenSpec change with no tasks.md yet, or holds changes rather than being
    one (the user must pick a change); nothing for any other folder."""
    if any((folder / marker).is_file() for marker in _MARKERS) and not (folder / TASKS_FILE).exists():
        raise PlanError(
            f"an OpenSpec change with no {TASKS_FILE} yet: write its tasks first (OpenSpec's /opsx:continue), "
            "then run the change",
            path=folder,
        )
    changes = sorted(p.name for p in folder.iterdir() if p.is_dir() and change_folder(p) is not None)
    if not changes:
        return
    shown = ", ".join(changes[:8]) + (f" and {len(changes) - 8} more" if len(changes) > 8 else "")
    raise PlanError(
        f"a folder of {len(changes)} OpenSpec change(s) ({shown}): run one change, e.g. {folder / changes[0]}",
        path=folder,
    )


def design_doc(folder: Path) -> Path | None:
    """The change's design doc: design.md, else proposal.md."""
    return next((folder / name for name in ("design.md", "proposal.md") if (folder / name).is_file()), None)


def header(folder: Path, read: PlanHeader) -> PlanHeader:
    """The plan's header: title from proposal.md's heading (else the change's name), goal from its `## Why`."""
    title, goal = "", ""
    proposal = folder / "proposal.md"
    if proposal.is_file():
        title, goal = _proposal(proposal.read_text(encoding="utf-8", errors="replace"))
    return read.model_copy(update={"title": title or folder.name, "goal": read.goal or goal})


def _proposal(text: str) -> tuple[str, str]:
    title, goal, section, fence = "", "", "", None
    for line in text.split("\n"):
        was, fence = fence, fence_after(fence, line)
        heading = heading_line(line) if was is None and fence is None else None
        if heading is not None:
            if heading[0] == 1 and not title:
                title = _TITLE_PREFIX.sub("", heading[1]).strip()
            section = heading[1].strip().casefold()
            if goal:
                break
            continue
        if section == "why" and (line.strip() or goal):
            if not line.strip():
                break  # the first paragraph
            goal = f"{goal} {line.strip()}".strip()
    return title, goal


@dataclass
class _Group:
    line: int  # the heading's, 1-based
    level: int
    title: str
    number: str | None
    open_items: list[str] = field(default_factory=list)
    done_items: list[str] = field(default_factory=list)


@dataclass
class Converted:
    """tasks.md as a heading plan (lines kept): each group with something left to do a task heading."""

    text: str
    folder: str  # the change's folder as the agent finds it in its worktree
    docs: list[str]  # what the change's folder holds besides tasks.md: proposal.md, design.md, specs/
    tasks: dict[int, tuple[str, _Group]]  # by heading line: (task id, group)
    done: list[_Group]

    def annotate(self, tasks: list[Task]) -> list[Task]:
        """Each group's unchecked items as its acceptance criteria, the change's folder named in its body, and each
        group after the one before, as OpenSpec applies them."""
        docs = self.docs or ["proposal.md"]
        named = ", ".join(docs[:-1]) + " and " + docs[-1] if len(docs) > 1 else docs[0]
        pointer = (
            f"This task is a group of the OpenSpec change in `{self.folder}/`: its {named} say why and give the "
            "requirements and their scenarios."
        )
        out: list[Task] = []
        for task in tasks:
            found = self.tasks.get(task.line)
            if found is None:
                out.append(task)
                continue
            group = found[1]
            heading, _, rest = task.body.partition("\n")
            note = f"OpenSpec group {found[0]}: its {len(group.open_items)} unchecked item(s) are the task"
            if group.done_items:
                note += f" ({len(group.done_items)} checked off already)"
            update: dict[str, object] = {
                "acceptance_criteria": task.acceptance_criteria or group.open_items,
                "body": f"{heading}\n\n{pointer}\n{rest}",
                "decision_log": [*task.decision_log, note],
            }
            out.append(task.model_copy(update=update))
        return in_order(out, "OpenSpec applies a change's task groups in order")

    def refused(self) -> tuple[str, int] | None:
        """Why tasks.md has nothing to run: every group's items are checked off."""
        if self.tasks or not self.done:
            return None
        return f"every item of its {len(self.done)} OpenSpec task group(s) is checked off", self.done[0].line

    def warnings(self, path: Path | str | None) -> list[str]:
        """What the plan's reader is told about an OpenSpec task list."""
        where = f"{path}" if path else "plan"
        said = [f"{where}: an OpenSpec change's tasks: each of its {len(self.tasks)} group(s) is a task, in order"]
        said += [f"{where}:{g.line}: group {g.title!r} is done (its items are checked off): not run" for g in self.done]
        return said


@dataclass
class Form:
    """The list form of an OpenSpec change's tasks.md (listforms._ListForm), for the file at `path`."""

    path: Path

    def has_items(self, text: str) -> bool:
        """Whether a heading holds checklist items."""
        return bool(_groups(text.split("\n")))

    def as_headings(self, text: str) -> Converted:
        """The text with each group left to do a task heading, and each done group blanked with its section."""
        lines = text.split("\n")
        groups = _groups(lines)
        ids = group_ids([g.number for g in groups])
        tasks: dict[int, tuple[str, _Group]] = {}
        done: list[_Group] = []
        blank: list[tuple[int, int]] = []
        ends = [g.line for g in groups[1:]] + [len(lines) + 1]
        for group, end, task_id in zip(groups, ends, ids, strict=True):
            if not group.open_items:
                done.append(group)
                blank.append((group.line, _section_end(lines, group, end)))
                continue
            tasks[group.line] = (task_id, group)
            lines[group.line - 1] = f"{'#' * group.level} Task {task_id}: {literal(group.title)}"
        for start, end in blank:
            lines[start - 1 : end - 1] = [""] * (end - start)
        folder = self.path.parent if self.path.name == TASKS_FILE else self.path
        docs = [name for name in ("proposal.md", "design.md", "specs/") if (folder / name).exists()]
        return Converted("\n".join(lines), _shown(folder), docs, tasks, done)


def _groups(lines: list[str]) -> list[_Group]:
    """Each heading (below the title) whose own section holds checklist items at the margin, with its items."""
    found: list[_Group] = []
    current: _Group | None = None
    fence: str | None = None
    for number, line in enumerate(lines, start=1):
        was, fence = fence, fence_after(fence, line)
        if was is not None or fence is not None:
            continue
        heading = heading_line(line)
        if heading is not None:
            current = None
            if heading[0] >= 2:
                text = heading[1].strip()
                numbered = _NUMBERED.match(text)
                title = numbered.group("title").strip() if numbered else text
                current = _Group(number, heading[0], title, numbered.group("n") if numbered else None)
            continue
        item = _ITEM.match(line)
        if item is not None and current is not None:
            if not current.open_items and not current.done_items:
                found.append(current)
            (current.done_items if item.group("mark") in "xX" else current.open_items).append(item.group("text"))
    return found


def _section_end(lines: list[str], group: _Group, limit: int) -> int:
    """The line after the group's section: its next heading, at most `limit` (the next group's heading)."""
    fence: str | None = None
    for number in range(group.line + 1, limit):
        line = lines[number - 1]
        was, fence = fence, fence_after(fence, line)
        if was is None and fence is None and heading_line(line) is not None:
            return number
    return limit


def _shown(folder: Path) -> str:
    """The change's folder from the repository's root (`openspec/changes/<id>`) where the path shows it."""
    parts = folder.parts
    if "openspec" in parts:
        return "/".join(parts[len(parts) - 1 - parts[::-1].index("openspec") :])
    return folder.name
