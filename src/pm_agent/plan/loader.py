"""`load_plan`: plan (a file or a folder of them) and design doc in, a triaged, ordered Plan out. Writes nothing."""

from __future__ import annotations

from pathlib import Path

from pm_agent.errors import PlanError
from pm_agent.plan.context import build_shared_context
from pm_agent.plan.deps import execution_queue, resolve
from pm_agent.plan.fields import plan_id_from_path
from pm_agent.plan.folder import FolderPlan, plan_id_for_folder, read_file_plan, read_folder, read_text
from pm_agent.plan.models import Plan
from pm_agent.plan.parser import check_tasks
from pm_agent.plan.tiers import classify_tier
from pm_agent.plan.triage import triage

__all__ = ["load_plan", "read_plan_source", "read_text"]


def read_plan_source(plan_path: Path) -> tuple[FolderPlan, str]:
    """The plan's header, tasks (references unresolved) and warnings, and its plan id; file or folder."""
    if plan_path.is_dir():
        return read_folder(plan_path), plan_id_for_folder(plan_path)
    parsed = read_file_plan(plan_path).parsed
    check_tasks(parsed.tasks, plan_path)
    return FolderPlan(parsed.header, parsed.tasks, parsed.warnings), plan_id_from_path(plan_path.stem)


def load_plan(plan_path: Path, design_path: Path | None = None, repo: Path | None = None) -> Plan:
    """Parse the plan, resolve dependencies, classify tiers, triage against `repo`, build the context.

    `plan_path` is a markdown file or a folder whose markdown files together are the plan. Without
    `repo` every task is MISSING ("no repository"). Raises PlanError on bad input; what was read
    leniently is in `Plan.warnings`.
    """
    plan_path = Path(plan_path)
    source, plan_id = read_plan_source(plan_path)
    design_text = read_text(Path(design_path), "design") if design_path is not None else None
    if repo is not None and not Path(repo).is_dir():
        raise PlanError("repository folder not found", path=repo)
    tasks, warnings = resolve(source.tasks, plan_path)
    tasks = [classify_tier(task) for task in tasks]
    tasks = triage(tasks, Path(repo) if repo is not None else None)
    return Plan(
        plan_id=plan_id,
        path=str(plan_path),
        design_path=str(design_path) if design_path is not None else None,
        header=source.header,
        tasks=tasks,
        queue=execution_queue(tasks, plan_path),
        shared_context=build_shared_context(source.header, design_text, repo, tasks),
        warnings=[*source.warnings, *warnings],
    )
