"""The task rows pm-agent keeps for itself, named once for the engine and for the scripted agents.

Kept apart from `engine.final_review` (which uses it) so that the model server's process, which runs
the scripted team and the demo's brain, can name the final review's task without importing the engine.
"""

from __future__ import annotations

from collections.abc import Collection

FINAL_REVIEW = "final-review"  # the task row holding the final review's sessions (no plan task has this id)
FINAL_REVIEW_STEP = f"task-{FINAL_REVIEW}"  # its stepId, as session headers and scripts name a task
# Every count of a run's tasks (status, progress, the manifest, the release gate) leaves these rows out through
# `is_pm_internal`, so a 3-task plan reads 3/3, not 4/4.
PM_INTERNAL_TASKS = frozenset({FINAL_REVIEW})


def is_pm_internal(task_id: str) -> bool:
    """True for a task row pm-agent keeps for itself (PM_INTERNAL_TASKS), not a task of the plan."""
    return task_id in PM_INTERNAL_TASKS


def plan_task_count(ids: Collection[str]) -> int:
    """How many of `ids` (a dict or a set: looked up, not walked) are the plan's tasks, not pm-agent's rows."""
    return len(ids) - sum(1 for task_id in PM_INTERNAL_TASKS if task_id in ids)
