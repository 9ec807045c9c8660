"""The documents a spec-driven tool keeps beside its task list, `tasks.md`: Kiro's spec (`.kiro/specs/<name>/`:
requirements.md, design.md) and Spec Kit's feature (`specs/001-name/`: spec.md, plan.md, research.md,
data-model.md, quickstart.md, contracts/) and Agent OS 1.x's (`.agent-os/specs/<date>-<name>/`: spec.md,
spec-lite.md, sub-specs/). Their tasks lean on them (`_Requirements: 1.2_`, "per
data-model.md"), so each task's body names them for the agent, and the plan's design doc, unless one is given,
is design.md (Kiro's), else plan.md (Spec Kit's technical plan), else spec.md (Agent OS's). An OpenSpec change
has its own (openspec.py).
"""

from __future__ import annotations

from pathlib import Path

from pm_agent.plan.models import Task
from pm_agent.plan.openspec import TASKS_FILE

KNOWN = (
    "requirements.md", "design.md", "spec.md", "spec-lite.md", "plan.md", "research.md", "data-model.md",
    "quickstart.md",
)  # fmt: skip
_FOLDERS = ("contracts", "sub-specs")


def companions(plan_path: Path) -> list[str]:
    """The documents beside a `tasks.md` plan (folders with a trailing slash), in reading order; [] otherwise."""
    if plan_path.name != TASKS_FILE:
        return []
    folder = plan_path.parent
    return [n for n in KNOWN if (folder / n).is_file()] + [f"{n}/" for n in _FOLDERS if (folder / n).is_dir()]


def design_doc(plan_path: Path) -> Path | None:
    """design.md beside the task list, else plan.md, else spec.md (Agent OS 1.x's): the design the tasks were
    written from."""
    found = companions(plan_path)
    return next((plan_path.parent / name for name in ("design.md", "plan.md", "spec.md") if name in found), None)


def pointed(tasks: list[Task], plan_path: Path, repo: Path | None) -> list[Task]:
    """The tasks with a line after each heading naming the documents beside the task list, for the agent."""
    found = companions(plan_path)
    if not found:
        return tasks
    folder = plan_path.parent
    try:
        shown = folder.resolve().relative_to(repo.resolve()).as_posix() if repo is not None else folder.name
    except ValueError:
        shown = folder.name
    named = ", ".join(found[:-1]) + " and " + found[-1] if len(found) > 1 else found[0]
    note = f"The task list's folder, `{shown}/`, also holds {named}: read what this task leans on there."
    out = []
    for task in tasks:
        heading, _, rest = task.body.partition("\n")
        out.append(task.model_copy(update={"body": f"{heading}\n\n{note}\n{rest}" if task.body else note}))
    return out
