"""`pm-agent plan`: every task of a parsed plan, as data and as text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from pm_agent.plan.models import Plan, Task

_TIER_STYLE = {"critical": "bold red", "normal": "yellow", "low": "green"}


def plan_data(plan: Plan) -> dict[str, Any]:
    """The plan as JSON-ready data: header, shared context, tasks, the execution queue and the warnings."""
    return {
        "plan_id": plan.plan_id,
        "plan_doc": plan.path,
        "design_doc": plan.design_path,
        "header": plan.header.model_dump(mode="json"),
        "shared_context": plan.shared_context.model_dump(mode="json"),
        "queue": [f"task-{task_id}" for task_id in plan.queue],
        "tasks": [task.model_dump(mode="json") for task in plan.tasks],
        "warnings": list(plan.warnings),
    }


def _list(label: str, items: list[str]) -> list[Text]:
    if not items:
        return []
    return [Text(f"  {label}:", style="bold")] + [Text(f"    - {item}") for item in items]


def _dependency_lines(task: Task) -> list[Text]:
    """Explicit edges (with the prose written next to them), then each inferred edge with its reason."""
    explicit = [d for d in task.depends_on if not d.inferred]
    lines: list[Text] = []
    if explicit:
        deps = ", ".join(f"task-{d.task_id}" + (f" ({d.note})" if d.note else "") for d in explicit)
        lines.append(Text(f"  depends on: {deps}"))
    by_reason: dict[str, list[str]] = {}
    for dep in task.depends_on:
        if dep.inferred:
            by_reason.setdefault(dep.reason, []).append(f"task-{dep.task_id}")
    for reason, ids in by_reason.items():
        lines.append(Text(f"  depends on (inferred): {', '.join(ids)}: {reason}"))
    if not lines:
        said = "none (declared; nothing inferred)" if task.declared_independent else "none (independent)"
        lines.append(Text(f"  depends on: {said}"))
    return lines


def _task_lines(task: Task, position: int, root: str) -> list[Text]:
    tier = Text(task.tier.value.upper(), style=_TIER_STYLE[task.tier.value])
    head = Text.assemble((f"{position:>3}. ", "dim"), (f"task-{task.id}", "bold"), f"  {task.title}  ", tier)
    lines = [head]
    if task.source:
        lines.append(Text(f"  file: {_relative(task.source, root)}:{task.line}", style="dim"))
    lines.append(Text(f"  tier: {task.tier_reason}", style="dim"))
    lines += _dependency_lines(task)
    if task.ownership:
        lines.append(Text(f"  ownership: {task.ownership}"))
    lines.append(Text(f"  triage: {task.presence.value} — {task.presence_reason}"))
    files = task.expected_files
    for label, paths in (("create", files.create), ("modify", files.modify), ("delete", files.delete)):
        for path in paths:
            suffix = f":{files.modify_ranges[path]}" if label == "modify" and path in files.modify_ranges else ""
            lines.append(Text(f"  {label}: {path}{suffix}"))
    for path in files.test:
        lines.append(Text(f"  test: {path}"))
    if task.security_flags.any():
        flags = [name for name, value in task.security_flags.model_dump().items() if value]
        lines.append(Text(f"  security flags: {', '.join(flags)}", style="red"))
    lines += _list("acceptance criteria", task.acceptance_criteria)
    lines += _list("tests to add", task.tests_to_add)
    lines += _list("tests to run", task.tests_to_run)
    lines += _list("non-goals", task.non_goals)
    return lines


def _relative(source: str, root: str) -> str:
    try:
        return Path(source).relative_to(root).as_posix()
    except ValueError:
        return source


def render_plan(plan: Plan) -> RenderableType:
    """Every task in queue order, then the queue on one line, then what was read leniently."""
    by_id = {task.id: task for task in plan.tasks}
    title = plan.header.title or plan.plan_id
    parts: list[RenderableType] = [
        Text(f"{title}  ({plan.plan_id}, {len(plan.tasks)} tasks, from {plan.path})", style="bold underline")
    ]
    for position, task_id in enumerate(plan.queue, start=1):
        parts.extend(_task_lines(by_id[task_id], position, plan.path))
        parts.append(Text(""))
    parts.append(Text("Execution queue: " + " → ".join(f"task-{t}" for t in plan.queue), style="bold"))
    if plan.warnings:
        parts.append(Text(""))
        parts.append(Text(f"Warnings ({len(plan.warnings)}):", style="bold yellow"))
        parts.extend(Text(f"  {warning}", style="yellow") for warning in plan.warnings)
    return Group(*parts)
