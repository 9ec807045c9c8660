"""Task Master's task lists (`.taskmaster/tasks/tasks.json`, github.com/eyaltoledano/claude-task-master).

Its tasks are JSON objects: `id`, `title`, `description`, `details`, `testStrategy`, `priority`, `status`,
`dependencies` (task ids; `"3.2"` names task 3's subtask 2) and `subtasks` (the same fields, ids within their
task). The file holds them under a tag (`{"master": {"tasks": [...]}}`, the tag Task Master's state.json names
current), or bare in older versions (`{"tasks": [...]}`).

Each task not done is a pm-agent task with its id and title: its description and details, its subtasks as a
checklist and its test strategy make its body, its subtasks left to do (else its description) its acceptance
criteria, and its dependencies its edges, all of them (none is inferred: Task Master keeps them itself). A
task whose status is done, cancelled or deferred is not run (a warning names it) and an edge to it is met; a
`blocked` one is not run either, nor any task that waits for it through its dependencies (each named). The
plan is named after the tag (`taskmaster` for master) and its design doc is Task Master's PRD
(`.taskmaster/docs/prd.txt`, else the one PRD file there) unless one is given. Lines are those of each task's
title in the file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pm_agent.errors import PlanError
from pm_agent.plan import fields
from pm_agent.plan.models import Dependency, PlanHeader, Task

NOT_RUN = {"done": "done", "completed": "done", "cancelled": "cancelled", "deferred": "deferred"}
PRDS = ("prd.txt", "prd.md", "PRD.md")  # in .taskmaster/docs/


def prd(folder: Path) -> Path | None:
    """The PRD in the `.taskmaster` folder's docs/: prd.txt or prd.md, else its only text file named for one."""
    docs = folder / "docs"
    found = next((docs / name for name in PRDS if (docs / name).is_file()), None)
    if found is not None or not docs.is_dir():
        return found
    named = [p for p in docs.iterdir() if p.suffix.lower() in (".txt", ".md") and "prd" in p.name.lower()]
    return named[0] if len(named) == 1 else None


def is_task_list(path: Path) -> bool:
    """Whether `path` is a Task Master task list (a `.json` file) or its `.taskmaster` folder."""
    return path.suffix.lower() == ".json" or (path.is_dir() and path.name == ".taskmaster")


@dataclass
class TaskList:
    """A Task Master task list read: the tasks to run, the header, the plan id and what was said of it."""

    tasks: list[Task]
    header: PlanHeader
    plan_id: str
    warnings: list[str] = field(default_factory=list)
    design: Path | None = None  # the PRD in .taskmaster/docs/


def read_task_list(path: Path) -> TaskList:
    """The task list at `path` (tasks.json or its `.taskmaster` folder); PlanError naming the file and line."""
    if path.is_dir():
        listed = path / "tasks" / "tasks.json"
        if not listed.is_file():
            raise PlanError("a Task Master folder without tasks/tasks.json (parse-prd writes it)", path=path)
        path = listed
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PlanError(f"cannot read the task list: {exc}", path=path) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlanError(f"not JSON: {exc.msg}", path=path, line=exc.lineno) from None
    tag, entries = _tagged(data, path)
    warnings: list[str] = []
    skipped: set[str] = set()
    blocked: set[str] = set()  # Task Master's `blocked`: held, with every task that waits for it
    kept: list[tuple[dict[str, Any], int]] = []
    at = 0
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("id") in (None, "") or not str(entry.get("title") or "").strip():
            raise PlanError("a task without an id or a title", path=path, line=_line(text, at))
        found = text.find(json.dumps(entry["title"], ensure_ascii=False)[1:-1], at)
        at = found if found >= 0 else at
        status = str(entry.get("status") or "pending").strip().lower()
        if status == "blocked":
            blocked.add(_id(entry["id"]))
        if status in NOT_RUN:
            skipped.add(_id(entry["id"]))
            said = f"task {entry['id']} {entry['title']!r} is {NOT_RUN[status]}: not run"
            warnings.append(f"{path}:{_line(text, at)}: {said}")
            continue
        kept.append((entry, _line(text, at)))
    ids = [_id(e["id"]) for e, _ in kept]
    if len(set(ids)) != len(ids):
        twice = next(i for i in ids if ids.count(i) > 1)
        raise PlanError(f"task {twice} is listed twice", path=path)
    if not kept:
        why = f"all {len(skipped)} task(s) are done, cancelled or deferred" if skipped else "it lists no tasks"
        raise PlanError(f"no tasks to run: {why}", path=path)
    kept = _unblocked(kept, blocked, warnings, path)
    if not kept:
        raise PlanError(f"no tasks to run: the {len(ids)} task(s) left are blocked or wait for one that is", path=path)
    known = {_id(e["id"]) for e, _ in kept}
    tasks = [_task(entry, line, known, skipped, path) for entry, line in kept]
    header = PlanHeader(title=f"Task Master: {tag}" if tag else "Task Master")
    plan_id = "taskmaster" if tag in (None, "master") else fields.plan_id_from_path(f"taskmaster-{tag}")
    warnings.insert(0, f"{path}: a Task Master task list{f' (tag {tag})' if tag else ''}: {len(tasks)} task(s)")
    return TaskList(tasks, header, plan_id, warnings, prd(path.parent.parent))  # .taskmaster/tasks/tasks.json


def mark_done(text: str, ids: list[str], path: Path) -> tuple[str, int]:
    """The task list (read from `path`: its tag is the one run) with the given tasks' status (and their
    subtasks') set to done, as Task Master's `set-status` writes it, and how many statuses changed; the text
    unchanged when writing it back as Task Master does (two-space JSON) would change anything else in it."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return text, 0
    ending = "\n" if text.endswith("\n") else ""
    if json.dumps(data, indent=2, ensure_ascii=False) + ending != text:
        return text, 0  # not as Task Master writes it (hand-edited): left alone rather than reformatted
    try:
        _, entries = _tagged(data, path)
    except PlanError:
        return text, 0
    wanted, changed = set(ids), 0
    for entry in entries:
        if isinstance(entry, dict) and _id(entry.get("id")) in wanted:
            for item in [entry, *[s for s in entry.get("subtasks") or [] if isinstance(s, dict)]]:
                if str(item.get("status") or "").strip().lower() not in NOT_RUN:
                    item["status"] = "done"
                    changed += 1
    return (json.dumps(data, indent=2, ensure_ascii=False) + ending, changed) if changed else (text, 0)


def _tagged(data: Any, path: Path) -> tuple[str | None, list[Any]]:
    """(the tag, its task entries) of the file's data: tagged as Task Master writes it since 0.17, or bare."""
    if isinstance(data, list):
        return None, data
    if not isinstance(data, dict):
        raise PlanError("a Task Master task list is a JSON object", path=path, line=1)
    if isinstance(data.get("tasks"), list):
        return None, data["tasks"]
    tags: dict[str, Any] = data["tags"] if isinstance(data.get("tags"), dict) else data
    named = {k: v["tasks"] for k, v in tags.items() if isinstance(v, dict) and isinstance(v.get("tasks"), list)}
    if not named:
        raise PlanError("no `tasks` list in it (a Task Master task list holds them under a tag)", path=path, line=1)
    current = _current_tag(path) or data.get("currentTag")
    for tag in (current, "master"):
        if tag in named:
            return str(tag), named[str(tag)]
    if len(named) == 1:
        tag = next(iter(named))
        return tag, named[tag]
    listed = ", ".join(sorted(named))
    raise PlanError(f"several tags ({listed}) and none is current: set one with `task-master use-tag`", path=path)


def _unblocked(
    kept: list[tuple[dict[str, Any], int]], blocked: set[str], warnings: list[str], path: Path
) -> list[tuple[dict[str, Any], int]]:
    """The tasks to run: neither blocked in Task Master nor waiting, through their dependencies, for one that is;
    each held task named in a warning at its line."""
    held = dict.fromkeys(blocked, "")  # task id: the blocked task it waits for ("" for a blocked one)
    grew = True
    while grew:  # a task waits for a held dependency: held too, until nothing changes (at most once per task)
        grew = False
        for entry, _ in kept:
            task_id = _id(entry["id"])
            waits = sorted({_id(d).split(".")[0] for d in entry.get("dependencies") or []} & held.keys())
            if task_id not in held and waits:
                held[task_id], grew = held[waits[0]] or waits[0], True
    for entry, line in kept:
        task_id = _id(entry["id"])
        if task_id in held:
            why = f"waits for task {held[task_id]}, which is blocked" if held[task_id] else "is blocked in Task Master"
            warnings.append(f"{path}:{line}: task {entry['id']} {entry['title']!r} {why}: not run")
    return [(entry, line) for entry, line in kept if _id(entry["id"]) not in held]


def _current_tag(path: Path) -> str | None:
    state = path.parent.parent / "state.json"  # .taskmaster/state.json beside .taskmaster/tasks/
    try:
        current = json.loads(state.read_text(encoding="utf-8")).get("currentTag")
    except (OSError, ValueError, AttributeError):
        return None
    return str(current) if current else None


def _task(entry: dict[str, Any], line: int, known: set[str], skipped: set[str], path: Path) -> Task:
    task_id = _id(entry["id"])
    title = str(entry["title"]).strip()
    description = str(entry.get("description") or "").strip()
    subtasks = [s for s in entry.get("subtasks") or [] if isinstance(s, dict)]
    open_subtasks = [s for s in subtasks if str(s.get("status") or "pending").strip().lower() not in NOT_RUN]
    deps: list[Dependency] = []
    log = [f"Task Master task {entry['id']} ({entry.get('priority') or 'no'} priority)"]
    for raw in entry.get("dependencies") or []:
        dep = _id(raw).split(".")[0]  # `3.2`: task 3's subtask 2; task 3 is the unit here
        if dep == task_id or any(d.task_id == dep for d in deps):
            continue
        if dep in skipped:
            log.append(f"dependency on task {dep} met: it is done, cancelled or deferred")
        elif dep in known:
            deps.append(Dependency(task_id=dep))
        else:
            raise PlanError(f"task {task_id} depends on task {dep}, which the list does not have", path=path, line=line)
    steps = [_subtask_line(task_id, s) for s in open_subtasks]
    return Task(
        id=task_id,
        title=title,
        line=line,
        description=description,
        steps=steps,
        acceptance_criteria=steps or [description or title],
        tests_to_add=[str(entry["testStrategy"]).strip()] if str(entry.get("testStrategy") or "").strip() else [],
        depends_on=deps,
        declared_independent=True,  # Task Master's dependencies are the whole story: none inferred
        decision_log=log,
        body=_body(task_id, entry, subtasks),
    )


def _body(task_id: str, entry: dict[str, Any], subtasks: list[dict[str, Any]]) -> str:
    """The task as Markdown, for the agent: what Task Master holds of it."""
    parts = [f"### Task {task_id}: {str(entry['title']).strip()}"]
    for key, label in (("description", ""), ("details", "**Details:**\n"), ("testStrategy", "**Test strategy:**\n")):
        value = str(entry.get(key) or "").strip()
        if value:
            parts.append(label + value)
    if subtasks:
        lines = ["**Subtasks:**"]
        for sub in subtasks:
            done = str(sub.get("status") or "").strip().lower() in NOT_RUN
            lines.append(f"- [{'x' if done else ' '}] {_subtask_line(task_id, sub)}")
            details = str(sub.get("details") or "").strip()
            if details and not done:
                lines.extend(f"  {row}" for row in details.splitlines())
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _subtask_line(task_id: str, sub: dict[str, Any]) -> str:
    description = str(sub.get("description") or "").strip()
    head = f"{task_id}.{sub.get('id')} {str(sub.get('title') or '').strip()}"
    return f"{head}: {description}" if description else head


def _id(value: Any) -> str:
    return str(value).strip()


def _line(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1
