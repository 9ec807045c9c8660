"""`load_plan`: plan (a file or a folder of them) and design doc in, a triaged, ordered Plan out. Writes nothing."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pm_agent.errors import PlanError
from pm_agent.plan import agentos1, companions, fastpath, openspec, taskmaster
from pm_agent.plan.context import build_shared_context
from pm_agent.plan.deps import add_blocked, execution_queue, resolve_edges
from pm_agent.plan.fields import plan_id_from_path
from pm_agent.plan.folder import (
    FolderPlan,
    plan_id_for_file,
    plan_id_for_folder,
    read_file_plan,
    read_folder,
    read_text,
)
from pm_agent.plan.github_source import mark_tasks
from pm_agent.plan.models import Plan, Task
from pm_agent.plan.parser import check_tasks
from pm_agent.plan.tiers import tier_update
from pm_agent.plan.triage import RepoView, triage_update

__all__ = ["load_plan", "read_plan_source", "read_text"]


def read_plan_source(plan_path: Path, repo: Path | None = None) -> tuple[FolderPlan, str]:
    """The plan's header, tasks (references unresolved), warnings and the design doc its form keeps beside the
    tasks (an OpenSpec change's design.md, else its proposal.md; Task Master's PRD; Kiro's design.md or Spec Kit's
    plan.md beside a tasks.md), and its plan id; file or folder. `repo`: the root the tasks name those documents
    from."""
    if taskmaster.is_task_list(plan_path):
        listed = taskmaster.read_task_list(plan_path)
        return FolderPlan(listed.header, listed.tasks, listed.warnings, listed.design), listed.plan_id
    change = openspec.change_folder(plan_path)
    if plan_path.is_dir() and change is None:
        openspec.refuse_folder(plan_path)
        return read_folder(plan_path), plan_id_for_folder(plan_path)
    if change is not None:
        plan_path = change / openspec.TASKS_FILE
    parsed = read_file_plan(plan_path, numbered=True).parsed
    parsed.tasks = mark_tasks(plan_path, parsed.tasks)  # a plan rendered from GitHub issues: each task's issue
    check_tasks(parsed.tasks, plan_path, parsed.refused)
    tasks = add_blocked(parsed.tasks, parsed.blocked, plan_path)
    if change is not None:
        header = openspec.header(change, parsed.header)
        return FolderPlan(header, tasks, parsed.warnings, openspec.design_doc(change)), plan_id_from_path(change.name)
    tasks = companions.pointed(tasks, plan_path, repo)
    design = companions.design_doc(plan_path)
    header = agentos1.header(plan_path, parsed.header)
    return FolderPlan(header, tasks, parsed.warnings, design), plan_id_for_file(plan_path)


def load_plan(plan_path: Path, design_path: Path | None = None, repo: Path | None = None) -> Plan:
    """Parse the plan, resolve dependencies, classify tiers, triage against `repo`, build the context.

    `plan_path` is a markdown file or a folder whose markdown files together are the plan. Without
    `repo` every task is MISSING ("no repository"). Raises PlanError on bad input; what was read
    leniently is in `Plan.warnings`.
    """
    with _no_gc_pauses():
        plan_path = Path(plan_path)
        source, plan_id = read_plan_source(plan_path, repo)
        design_path = design_path if design_path is not None else source.design
        design_text = read_text(Path(design_path), "design") if design_path is not None else None
        if repo is not None and not Path(repo).is_dir():
            raise PlanError("repository folder not found", path=repo)
        edges, dep_logs, warnings = resolve_edges(source.tasks, plan_path)
        view = RepoView.open(Path(repo) if repo is not None else None)
        tasks: list[Task] = []
        # What resolve, classify_tier and triage each do, as one copy of each task: the tier and the
        # triage read only fields that resolving leaves alone, and the log keeps their order.
        for task, deps, dep_log in zip(source.tasks, edges, dep_logs, strict=True):
            tier, tier_log = tier_update(task)
            presence, presence_log = triage_update(task, view)
            log = [*task.decision_log, *dep_log, *tier_log, presence_log]
            tasks.append(_updated(task, {**tier, **presence, "depends_on": deps, "decision_log": log}))
        return Plan(
            plan_id=plan_id,
            path=str(plan_path),
            design_path=str(design_path) if design_path is not None else None,
            header=source.header,
            tasks=tasks,
            queue=execution_queue(tasks, plan_path),  # checks for cycles
            shared_context=build_shared_context(source.header, design_text, repo, tasks),
            warnings=[*source.warnings, *warnings],
        )


def _updated(task: Task, update: dict[str, object]) -> Task:
    """`task.model_copy(update=update)`, made by updating the task itself: the tasks just read are seen by
    nothing else, and a copy of each is a dict of its 25 fields made anew (~21 MB at 10,000 tasks)."""
    if not fastpath.ENABLED:
        return task.model_copy(update=update)
    # What model_copy does to its copy (a model without extra fields); no validation either way.
    task.__dict__.update(update)
    task.__pydantic_fields_set__.update(update)
    return task


@contextmanager
def _no_gc_pauses() -> Iterator[None]:
    """The cyclic garbage collector off while a plan is read: its passes over the many young objects
    a large plan makes grow with the plan (a third of the load at 10,000 tasks); the objects outlive it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if gc.get_freeze_count() == 0:
                # Re-enabled, the collector would walk every object the load made at once (its young
                # generation is all of them: 10-25 ms at 1,000 tasks). Freezing and unfreezing moves them
                # to the old generation in two list splices, where they would end up anyway; only when
                # nothing else is frozen, since unfreezing thaws everything.
                gc.freeze()
                gc.unfreeze()
            gc.enable()
