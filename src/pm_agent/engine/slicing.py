"""Seed 001 dispatch rule 1: a task over `patch_size_limit` is sliced into subtasks before dispatch.

The planner (PathSeeker) answers with the slices as a YAML list (`title`, `files`,
`acceptance_criteria`). Every slice but the last becomes a subtask `<id>.<n>` of its own, chained in
order; the task itself keeps the last slice and now depends on the others, so one agent works on
each piece and each piece goes through the gates and is committed on its own.
"""

from __future__ import annotations

from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pm_agent.plan.models import Dependency, ExpectedFiles, Task


class Slice(BaseModel):
    """One slice as the planner writes it."""

    model_config = ConfigDict(extra="ignore")

    title: str = Field(min_length=1)
    files: list[str] = Field(min_length=1)
    acceptance_criteria: list[str] = Field(default_factory=list)


def parse_slices(text: str) -> list[Slice] | None:
    """The planner's slices, or None when its answer is not a YAML list of at least two slices."""
    try:
        data: Any = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    if not isinstance(data, list) or len(data) < 2:
        return None
    try:
        return [Slice.model_validate(item) for item in data]
    except ValidationError:
        return None


def _files(task: Task, paths: list[str]) -> ExpectedFiles:
    """The task's expected files restricted to `paths` (new paths count as created)."""
    ef = task.expected_files
    known = set(ef.all_paths())
    return ExpectedFiles(
        create=[p for p in paths if p in ef.create or p not in known],
        modify=[p for p in paths if p in ef.modify],
        delete=[p for p in paths if p in ef.delete],
        test=[p for p in paths if p in ef.test],
        modify_ranges={p: r for p, r in ef.modify_ranges.items() if p in paths},
    )


def slice_task(task: Task, slices: list[Slice]) -> tuple[list[Task], Task]:
    """(subtasks for all slices but the last, the task narrowed to the last slice and depending on them)."""
    subtasks: list[Task] = []
    previous = list(task.depends_on)
    for number, piece in enumerate(slices[:-1], start=1):
        files = _files(task, piece.files)
        sub = task.model_copy(
            update={
                "id": f"{task.id}.{number}",
                "title": piece.title,
                "expected_files": files,
                "acceptance_criteria": piece.acceptance_criteria or [f"{piece.title} is done"],
                "tests_to_add": [t for t in task.tests_to_add if t in piece.files],
                "tests_to_run": [t for t in task.tests_to_run if t in piece.files],
                "depends_on": previous,
                "body": f"Slice {number} of {len(slices)} of {task.ref} ({task.title}): {piece.title}\n\n{task.body}",
                "decision_log": [f"slice {number}/{len(slices)} of {task.ref}, cut by the planner"],
            }
        )
        subtasks.append(sub)
        previous = [Dependency(task_id=sub.id, reason=f"slice {number} of {task.ref} comes first")]
    last = slices[-1]
    narrowed = task.model_copy(
        update={
            "expected_files": _files(task, last.files),
            "acceptance_criteria": last.acceptance_criteria or list(task.acceptance_criteria),
            "tests_to_add": [t for t in task.tests_to_add if t in last.files],
            "tests_to_run": [t for t in task.tests_to_run if t in last.files],
            "depends_on": [*task.depends_on, *previous],
            "decision_log": [*task.decision_log, f"sliced into {len(slices)}: keeps the last slice, {last.title}"],
        }
    )
    return subtasks, narrowed
