"""Plans split over files: one markdown file, or every markdown file of a folder read as one plan.

Two folder layouts are common. Plans written for one task per file (`docs/plans/<feature>/tasks/04-….md`,
each headed `# Task 4: …` with its own `**Depends on:**`) read like any plan. CCPM epic folders
(`.claude/epics/<name>/`) hold `epic.md` and one numbered file per task whose YAML front matter
carries `name`, `depends_on: [..]`, `parallel`, `conflicts_with`; such a file is one task: its id is
the front matter's `task_number`/`task_id`, else its `# Task N:` heading, else the file's number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from pm_agent.errors import PlanError
from pm_agent.plan import fields
from pm_agent.plan.deps import add_blocked
from pm_agent.plan.draft import Blocked
from pm_agent.plan.models import Dependency, PlanHeader, Task
from pm_agent.plan.parser import FileTask, ParsedPlan, check_tasks, read_plan
from pm_agent.plan.refs import Ref, read_refs

MARKDOWN_SUFFIXES = (".md", ".markdown")
# Front-matter keys that make a file one task (CCPM task files); `epic.md` or analysis notes have none.
_TASK_KEYS = ("depends_on", "dependencies", "conflicts_with", "parallel", "task_number", "task_id")
_ID_KEYS = ("task_number", "task_id", "id")
_LEADING_NUMBER = re.compile(r"^(\d+)(?=$|[-_. ])")
_KEY_LINE = re.compile(r"^(?P<key>[A-Za-z_][\w-]*)\s*:(?:\s+(?P<value>.*)|\s*$)")
# Files whose title, goal and stack head the plan before any other file's (`epic.md` in a CCPM epic).
_OVERVIEW_FILES = frozenset({"epic", "readme", "index", "overview", "plan", "00-overview", "_index"})
_GENERIC_FOLDERS = frozenset({"tasks", "task", "plan", "plans", "epics", "docs"})
_GENERIC_FILES = frozenset({"tasks", "todo"})  # Spec Kit's, Kiro's and OpenSpec's task lists are all tasks.md


@dataclass
class FolderPlan:
    """A plan read from one file or a folder: what `load_plan` needs before resolving dependencies."""

    header: PlanHeader
    tasks: list[Task]
    warnings: list[str] = field(default_factory=list)
    design: Path | None = None  # the design doc its form keeps beside the tasks, if any


def read_text(path: Path, what: str = "plan") -> str:
    """A doc's text as UTF-8; PlanError saying what is wrong (missing, unreadable, not UTF-8)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise PlanError(f"{what} file not found", path=path) from None
    except IsADirectoryError:
        raise PlanError(f"{what} path is a directory, not a file", path=path) from None
    except OSError as exc:
        raise PlanError(f"cannot read {what} file: {exc.strerror or exc}", path=path) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise PlanError(
            f"{what} file is not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})",
            path=path,
            line=line,
        ) from None


@dataclass
class FrontMatter:
    """A file's YAML front matter (values kept as strings) and its text with those lines blanked."""

    data: dict[str, Any] | None
    text: str
    warning: str | None = None


def split_front_matter(text: str) -> FrontMatter:
    """Front matter (`---` ... `---` on top) and the text with those lines blanked, line numbers kept.

    Values stay strings (`depends_on: [001, 010]` is ["001", "010"], not octal numbers). Front matter
    that is not valid YAML is read line by line (`key: value`, `key: [a, b]`), as CCPM's own scripts
    read it, with a warning. Text without front matter comes back unchanged with data None.
    """
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    if not text.startswith("---"):
        return FrontMatter(None, text)
    lines = text.split("\n")
    end = next((i for i in range(1, min(len(lines), 500)) if lines[i].strip() in ("---", "...")), None)
    if lines[0].strip() != "---" or end is None or end == 1 or not _KEY_LINE.match(lines[1]):
        return FrontMatter(None, text)
    blanked = "\n" * end + "\n" + "\n".join(lines[end + 1 :])
    try:
        data = yaml.load("\n".join(lines[1:end]), Loader=yaml.BaseLoader)
    except (yaml.YAMLError, RecursionError) as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 2}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or "nested too deeply"
        warning = f"front matter is not valid YAML ({where}{problem}); read line by line as `key: value`"
        return FrontMatter(_key_lines(lines[1:end]), blanked, warning)
    if not isinstance(data, dict):
        return FrontMatter(None, text)
    return FrontMatter(data, blanked)


def _key_lines(lines: list[str]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for line in lines:
        match = _KEY_LINE.match(line)
        if match is None:
            continue
        value = match.group("value").strip()
        if value.startswith("[") and value.endswith("]"):
            data[match.group("key")] = [v.strip().strip("'\"") for v in value[1:-1].split(",") if v.strip()]
        else:
            data[match.group("key")] = value.strip("'\"")
    return data


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def _file_task(path: Path, meta: dict[str, Any], warn: list[str]) -> FileTask | None:
    """The task a front-matter file is, or None when its front matter has no task keys."""
    if not any(key in meta for key in _TASK_KEYS):
        return None
    explicit = next((s for key in _ID_KEYS for s in _strings(meta.get(key)) if s.strip()), None)
    # `001.md`, `393.md` are tasks; `393-analysis.md` next to them is a note about one.
    number = _LEADING_NUMBER.match(path.stem) if path.stem.isdigit() or explicit is not None else None
    if explicit is None and number is None:
        return None
    title = next((s.strip() for key in ("name", "title") for s in _strings(meta.get(key)) if s.strip()), "")
    refs: list[Ref] = []
    said_none = False
    for key in ("depends_on", "dependencies"):
        if key not in meta:
            continue
        items = _strings(meta[key])
        said_none = said_none or not items
        for item in items:
            try:
                refs.extend(read_refs(item))
            except ValueError as exc:
                warn.append(f"{path}:1: ignored in front matter {key}: {exc}")
    parallel = " ".join(_strings(meta.get("parallel"))).strip().lower()
    return FileTask(
        task_id=fields.normalize_task_id(explicit) if explicit else (number.group(1) if number else path.stem),
        title=title or path.stem,
        keep_id=explicit is not None,
        keep_title=bool(title),
        refs=tuple(refs),
        # CCPM writes `depends_on: []` on every task; with `parallel: true` it means "independent".
        said_none=said_none and not refs and parallel in ("true", "yes"),
    )


@dataclass
class FileRead:
    """One markdown file read: its part of the plan, whether it is a task file, its `conflicts_with`."""

    parsed: ParsedPlan
    task_file: bool = False
    conflicts: list[str] = field(default_factory=list)


def read_file_plan(path: Path, *, source: str = "", numbered: bool = False) -> FileRead:
    """One markdown file read as (part of) a plan; front matter with task keys makes it one task.

    `numbered`: a file without task headings may be read by its numbered headings (a single-file plan).
    """
    front = split_front_matter(read_text(path))
    meta, text = front.data, front.text
    warnings = [f"{path}:1: {front.warning}"] if front.warning else []
    file_task = _file_task(path, meta, warnings) if meta is not None else None
    parsed = read_plan(text, path, file_task=file_task, source=source, numbered=numbered)
    parsed.warnings[:0] = warnings
    if meta is None:
        return FileRead(parsed)
    if file_task is None:
        if not parsed.header.title:
            parsed.header.title = next((s.strip() for s in _strings(meta.get("name")) if s.strip()), "")
        return FileRead(parsed)
    return FileRead(parsed, task_file=True, conflicts=_strings(meta.get("conflicts_with")))


def _natural(relative: Path) -> tuple[tuple[tuple[int, int, str], ...], ...]:
    """Sort key: `2.md` before `10.md`, case ignored, a folder's own files before its sub-folders."""
    parts = relative.parts
    key: list[tuple[tuple[int, int, str], ...]] = []
    for depth, part in enumerate(parts):
        is_dir = depth < len(parts) - 1
        chunks = tuple(
            (int(is_dir), 0, chunk.zfill(12)) if chunk.isdigit() else (int(is_dir), 1, chunk.casefold())
            for chunk in re.split(r"(\d+)", part)
            if chunk
        )
        key.append(chunks)
    return tuple(key)


def markdown_files(folder: Path) -> list[Path]:
    """Every markdown file under `folder` in reading order, hidden files and folders left out."""
    found = [
        path
        for path in folder.rglob("*")
        if path.suffix.lower() in MARKDOWN_SUFFIXES
        and path.is_file()
        and not any(part.startswith(".") for part in path.relative_to(folder).parts)
    ]
    return sorted(found, key=lambda path: _natural(path.relative_to(folder)))


def read_folder(folder: Path) -> FolderPlan:
    """Every markdown file of the folder as one plan: ids unique across files, errors naming the file."""
    files = markdown_files(folder)
    if not files:
        raise PlanError("plan folder holds no markdown files (*.md)", path=folder)
    headers: list[tuple[bool, PlanHeader]] = []
    tasks: list[Task] = []
    warnings: list[str] = []
    file_tasks: list[tuple[str, str]] = []  # (task id, file number) of the tasks that are whole files, in order
    conflicts: dict[str, list[str]] = {}
    blocked: list[Blocked] = []
    for path in files:
        read = read_file_plan(path, source=str(path))
        headers.append((path.stem.casefold() not in _OVERVIEW_FILES, read.parsed.header))
        warnings.extend(read.parsed.warnings)
        tasks.extend(read.parsed.tasks)
        blocked.extend(read.parsed.blocked)
        if read.task_file and read.parsed.tasks:
            file_tasks.append((read.parsed.tasks[0].id, path.stem))
            if read.conflicts:
                conflicts[read.parsed.tasks[0].id] = read.conflicts
    check_tasks(tasks, folder)
    tasks = add_blocked(tasks, blocked, folder)
    header = PlanHeader()
    for _, part in sorted(headers, key=lambda pair: pair[0]):  # stable: overview files first, then in order
        _merge_header(header, part)
    tasks = _renumbered_refs(tasks, file_tasks, warnings)
    tasks = _conflict_edges(tasks, conflicts, warnings)
    return FolderPlan(header, tasks, warnings)


def _merge_header(into: PlanHeader, part: PlanHeader) -> None:
    for name in ("title", "goal", "architecture", "tech_stack"):
        if not getattr(into, name) and getattr(part, name):
            setattr(into, name, getattr(part, name))


def _renumbered_refs(tasks: list[Task], file_tasks: list[tuple[str, str]], warnings: list[str]) -> list[Task]:
    """Read a task file's reference that no task id matches by file: its number, else its position.

    CCPM numbers task files 001, 002, ... and `epic-sync` renames them to issue numbers (`309.md`),
    rewriting the references it recognises: a plan can mix `task_id: "004"`, `depends_on: [309]` and
    `depends_on: [1]` (the first file). Each such reading is a warning.
    """
    if not file_tasks:
        return tasks
    known = {fields.canonical_id(t.id) for t in tasks}
    by_number = {fields.canonical_id(stem): task_id for task_id, stem in file_tasks}
    in_files = {task_id for task_id, _ in file_tasks}
    renamed: list[Task] = []
    for task in tasks:
        deps: list[Dependency] = []
        for dep in task.depends_on:
            key = fields.canonical_id(dep.task_id)
            target: str | None = None
            if task.id in in_files and key not in known:
                if key in by_number:
                    target, how = by_number[key], f"the task in file {key}.md"
                elif key.isdigit() and 1 <= int(key) <= len(file_tasks):
                    target, how = file_tasks[int(key) - 1][0], f"task file number {key} in order"
            if target is not None:
                warnings.append(
                    f"{task.source}:{task.line}: Task {task.id} depends on '{dep.task_id}', which is no task id: "
                    f"read as {how}, Task {target} (ids renumbered by a sync?)"
                )
                dep = dep.model_copy(update={"task_id": target})
            deps.append(dep)
        renamed.append(task.model_copy(update={"depends_on": deps}) if deps != task.depends_on else task)
    return renamed


def _conflict_edges(tasks: list[Task], conflicts: dict[str, list[str]], warnings: list[str]) -> list[Task]:
    """`conflicts_with: [3]` (both change the same files): the later of the two tasks waits for the earlier."""
    if not conflicts:
        return tasks
    order = {fields.canonical_id(t.id): i for i, t in enumerate(tasks)}
    added: dict[int, list[Dependency]] = {}
    for task_id, others in conflicts.items():
        here = order[fields.canonical_id(task_id)]
        for other in others:
            there = order.get(fields.canonical_id(fields.normalize_task_id(other)))
            if there is None or there == here:
                if there is None:
                    warnings.append(
                        f"{tasks[here].source}:1: conflicts_with names Task {other}, which is not in the plan"
                    )
                continue
            later, earlier = max(here, there), min(here, there)
            reason = (
                f"conflicts_with in front matter: Task {tasks[later].id} and Task {tasks[earlier].id} "
                "change the same files"
            )
            added.setdefault(later, []).append(Dependency(task_id=tasks[earlier].id, inferred=True, reason=reason))
    result: list[Task] = []
    for index, task in enumerate(tasks):
        extra = [d for d in added.get(index, []) if d.task_id not in task.dependency_ids()]
        result.append(task.model_copy(update={"depends_on": [*task.depends_on, *extra]}) if extra else task)
    return result


def plan_id_for_file(path: Path) -> str:
    """`docs/plans/2026-02-18-csv-export.md` -> `csv-export`; a file named for its form rather than its work
    (`specs/001-albums/tasks.md`, `.kiro/specs/user-auth/tasks.md`) is named by its folder."""
    if path.stem.casefold() in _GENERIC_FILES:
        folder = path.resolve().parent
        if any(part and part.casefold() not in _GENERIC_FOLDERS for part in (folder.name, folder.parent.name)):
            return plan_id_for_folder(folder)
    return fields.plan_id_from_path(path.stem)


def plan_id_for_folder(folder: Path) -> str:
    """`docs/plans/csv-export/tasks` -> `csv-export`: the folder's name, or its parent's for `tasks/`."""
    for part in (folder.name, folder.parent.name, folder.parent.parent.name):
        if part and part.casefold() not in _GENERIC_FOLDERS:
            return fields.plan_id_from_path(part)
    return fields.plan_id_from_path(folder.name or "plan")
