"""Branch and tag names (seed 001, Phase 4): valid git ref names built from plan and task ids.

task branch      feat/<plan-id>/task-<id>-<slug>       feat/wellness-cbt/task-07-voice-pipeline
checkpoint tag   pm/<plan-id>/checkpoint-task-<id>     pm/wellness-cbt/checkpoint-task-07
working branch   pm/<plan-id>/work
"""

from __future__ import annotations

import re
import unicodedata

_NON_SLUG = re.compile(r"[^a-z0-9]+")
_NON_ID = re.compile(r"[^A-Za-z0-9._]+")


def slugify(text: str, max_len: int = 40) -> str:
    """Lowercase ASCII words joined by '-', cut at a word boundary to at most `max_len` characters."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = _NON_SLUG.sub("-", ascii_text.lower()).strip("-")
    if len(slug) > max_len:
        cut = slug[:max_len]
        slug = cut.rsplit("-", 1)[0] if "-" in cut and slug[max_len] != "-" else cut
    return slug.strip("-")


def _id_part(task_id: str) -> str:
    """A task id as a ref component: 'task-7' and '7' both give '7'; unsafe characters become '-'."""
    raw = str(task_id).strip()
    if raw.lower().startswith("task-"):
        raw = raw[5:]
    part = _NON_ID.sub("-", raw).strip("-.")
    part = re.sub(r"\.{2,}", ".", part)
    if part.endswith(".lock"):  # git refuses ref components ending in .lock
        part = part[:-5] + "-lock"
    if not part:
        raise ValueError(f"task id {task_id!r} gives an empty ref component")
    return part


def _plan_part(plan_id: str) -> str:
    part = slugify(plan_id, max_len=60)
    if not part:
        raise ValueError(f"plan id {plan_id!r} gives an empty ref component")
    return part


def task_branch(plan_id: str, task_id: str, title: str) -> str:
    """`feat/<plan-id>/task-<id>-<slug>` (no slug suffix when the title has no usable words)."""
    slug = slugify(title)
    name = f"feat/{_plan_part(plan_id)}/task-{_id_part(task_id)}"
    return f"{name}-{slug}" if slug else name


def checkpoint_tag(plan_id: str, task_id: str) -> str:
    """`pm/<plan-id>/checkpoint-task-<id>`, set after a passed critical task."""
    return f"pm/{_plan_part(plan_id)}/checkpoint-task-{_id_part(task_id)}"


def working_branch(plan_id: str) -> str:
    """`pm/<plan-id>/work`: the plan's working branch that accepted tasks are integrated into."""
    return f"pm/{_plan_part(plan_id)}/work"


def is_protected_branch(name: str, protected: frozenset[str] = frozenset({"main", "master"})) -> bool:
    """Whether pm-agent must only read this branch."""
    return name.removeprefix("refs/heads/") in protected


__all__ = ["checkpoint_tag", "is_protected_branch", "slugify", "task_branch", "working_branch"]
