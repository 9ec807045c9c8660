"""`load_plan`: plan and design docs in, a triaged, classified, ordered Plan out. Writes nothing."""

from __future__ import annotations

from pathlib import Path

from pm_agent.errors import PlanError
from pm_agent.plan.context import build_shared_context
from pm_agent.plan.deps import execution_queue, resolve_dependencies
from pm_agent.plan.fields import plan_id_from_path
from pm_agent.plan.models import Plan
from pm_agent.plan.parser import parse_plan_text
from pm_agent.plan.tiers import classify_tier
from pm_agent.plan.triage import triage


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


def load_plan(plan_path: Path, design_path: Path | None = None, repo: Path | None = None) -> Plan:
    """Parse the plan, resolve dependencies, classify tiers, triage against `repo`, build the context.

    Without `repo` every task is MISSING ("no repository"). Raises PlanError on bad input.
    """
    plan_path = Path(plan_path)
    header, tasks = parse_plan_text(read_text(plan_path), plan_path)
    design_text = read_text(Path(design_path), "design") if design_path is not None else None
    if repo is not None and not Path(repo).is_dir():
        raise PlanError("repository folder not found", path=repo)
    tasks = resolve_dependencies(tasks, plan_path)
    tasks = [classify_tier(task) for task in tasks]
    tasks = triage(tasks, Path(repo) if repo is not None else None)
    return Plan(
        plan_id=plan_id_from_path(plan_path.stem),
        path=str(plan_path),
        design_path=str(design_path) if design_path is not None else None,
        header=header,
        tasks=tasks,
        queue=execution_queue(tasks, plan_path),
        shared_context=build_shared_context(header, design_text, repo, tasks),
    )
