"""Seed 001's shared context block: built once from the plan header, the design doc and the repo."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from pm_agent.plan.design import compact, parse_design_text
from pm_agent.plan.fields import parent_dir
from pm_agent.plan.models import PlanHeader, SharedContext, Task

MAX_ITEMS = 8
_TITLE_SUFFIX = re.compile(
    r"\s*[—–:\-]?\s*(implementation plan|design document|design doc|design|plan)\s*$", re.IGNORECASE
)
_SKIP_DIRS = ("__pycache__", "node_modules")


def project_name(title: str) -> str:
    """`Textstats Implementation Plan` -> `Textstats`; `PM Agent — Design Document` -> `PM Agent`."""
    cleaned = _TITLE_SUFFIX.sub("", title).strip(" -—–:")
    return cleaned or title.strip()


def key_paths(tasks: Sequence[Task], limit: int = MAX_ITEMS) -> list[str]:
    """The directories most tasks touch, most referenced first (ties in name order)."""
    counts: Counter[str] = Counter()
    for task in tasks:
        files = task.expected_files  # every expected path (all_paths, whose order a set does not need)
        dirs = {parent_dir(p) for paths in (files.create, files.modify, files.delete, files.test) for p in paths}
        counts.update(d + "/" for d in dirs if d != ".")
    return [d for d, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]]


def source_dirs(repo: Path | None) -> list[str]:
    """Top-level source folders: `src/<pkg>/<module>/` in a src layout with one package, else `src/*/`."""
    if repo is None or not (repo / "src").is_dir():
        return []

    def children(folder: Path) -> list[Path]:
        return sorted(
            p
            for p in folder.iterdir()
            if p.is_dir()
            and not p.name.startswith(".")
            and p.name not in _SKIP_DIRS
            and not p.name.endswith(".egg-info")
        )

    top = children(repo / "src")
    if len(top) == 1 and children(top[0]):
        top = children(top[0])
    return [p.relative_to(repo).as_posix() + "/" for p in top]


def ownership_areas(tasks: Sequence[Task]) -> list[str]:
    """`billing (Tasks 3, 5)` for each ownership area named in the plan, in plan order."""
    areas: dict[str, list[str]] = {}
    for task in tasks:
        if task.ownership:
            areas.setdefault(task.ownership, []).append(task.id)
    return [f"{area} (Task{'s' if len(ids) > 1 else ''} {', '.join(ids)})" for area, ids in areas.items()]


def build_shared_context(
    header: PlanHeader,
    design_text: str | None = None,
    repo: Path | None = None,
    tasks: Sequence[Task] = (),
) -> SharedContext:
    """The compact block every agent gets: name, stack, conventions, key paths, modules, principles."""
    design = parse_design_text(design_text) if design_text is not None else None
    name = ""
    if design is not None and design.title:
        name = project_name(design.title)
    elif header.title:
        name = project_name(header.title)
    elif repo is not None:
        name = Path(repo).resolve().name
    sections = design.sections if design is not None else {}
    stack = header.tech_stack or "; ".join(sections.get("tech_stack", [])[:4])
    principles = [f"Architecture: {compact(header.architecture)}"] if header.architecture else []
    principles += sections.get("principles", [])
    modules = [*ownership_areas(tasks), *source_dirs(repo), *sections.get("modules", [])]
    return SharedContext(
        project_name=name,
        tech_stack=compact(stack, 240),
        conventions=_unique(sections.get("conventions", []))[:MAX_ITEMS],
        key_paths=key_paths(tasks),
        module_boundaries=_unique(modules)[: MAX_ITEMS + 4],
        principles=_unique(principles)[:MAX_ITEMS],
    )


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))
