"""What an edited plan changes in a run, as data: old tasks + new plan + task states -> actions. Pure.

    diff = diff_plan(known, new_tasks, running=set(flows), asked=asked)

- a task id new to the run is added (queued);
- a queued task (state `received`, not in a slot) whose text changed takes the new contract; one whose
  dependencies alone changed (inferred edges move when tasks come and go) takes them too;
- a queued task gone from the plan is cancelled;
- a change to any other task (in a slot, working, waiting for a human, completed) is escalated once
  per text (`asked` holds the text already asked about): work already done is never altered.

A task's text is its title and its section of the plan verbatim (`Task.body`): triage, tiers and the
decision log are derived from the repository, not written by the user, and a sliced task keeps both.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from pm_agent.errors import PlanError
from pm_agent.lifecycle import IssueState
from pm_agent.plan.models import Task

__all__ = ["REMOVED", "ChangeKind", "Known", "PlanChange", "PlanDiff", "diff_plan", "text_sha"]

REMOVED = "removed"  # what `asked` holds for a task whose removal was already escalated


class ChangeKind(StrEnum):
    """What happened to a task that is no longer queued."""

    CHANGED = "changed"
    REMOVED = "removed"


@dataclass(frozen=True)
class Known:
    """A task the run already has, as the diff needs it."""

    task_id: str
    state: IssueState
    sha: str  # text_sha of its stored contract
    deps: tuple[str, ...]
    from_plan: bool  # False for tasks pm-agent added itself (slices, remediation, follow-ups)


@dataclass(frozen=True)
class PlanChange:
    """An edit to a task that is no longer queued: a human decides (continue, restart, re-open)."""

    task_id: str
    kind: ChangeKind
    state: IssueState
    task: Task | None  # the new contract; None when the task was removed
    sha: str  # the new text's sha, or REMOVED


@dataclass
class PlanDiff:
    """The actions one plan edit asks for."""

    added: list[Task] = field(default_factory=list)
    updated: list[Task] = field(default_factory=list)  # queued tasks taking their new contract
    cancelled: list[str] = field(default_factory=list)  # queued tasks removed from the plan
    escalated: list[PlanChange] = field(default_factory=list)
    unchanged: int = 0

    @property
    def empty(self) -> bool:
        """Nothing to apply and nothing to ask."""
        return not (self.added or self.updated or self.cancelled or self.escalated)

    def counts(self) -> dict[str, int]:
        """How many of each, for events and the console."""
        return {
            "added": len(self.added),
            "updated": len(self.updated),
            "cancelled": len(self.cancelled),
            "escalated": len(self.escalated),
            "unchanged": self.unchanged,
        }


def text_sha(title: str, body: str) -> str:
    """The sha of a task's user-written text: its title and its plan section, trailing blanks ignored."""
    lines = "\n".join(line.rstrip() for line in body.strip().splitlines())
    return hashlib.sha256(f"{title.strip()}\n{lines}".encode()).hexdigest()[:16]


def diff_plan(
    known: Sequence[Known],
    new: Sequence[Task],
    *,
    running: Collection[str] = (),
    asked: Mapping[str, str] | None = None,
) -> PlanDiff:
    """The actions that bring the run to the `new` plan (tasks resolved, in plan order).

    PlanError when a new task takes the id of a task pm-agent added itself (a slice or a remediation).
    """
    asked = asked or {}
    by_id = {k.task_id: k for k in known}
    diff = PlanDiff()
    in_plan = set()
    for task in new:
        in_plan.add(task.id)
        old = by_id.get(task.id)
        if old is None:
            diff.added.append(task)
            continue
        if not old.from_plan:
            raise PlanError(f"Task {task.id}: pm-agent already added a task with this id", line=task.line)
        sha = text_sha(task.title, task.body)
        queued = old.state is IssueState.RECEIVED and task.id not in running
        if sha == old.sha:
            if queued and tuple(task.dependency_ids()) != old.deps:
                diff.updated.append(task)
            else:
                diff.unchanged += 1
        elif queued:
            diff.updated.append(task)
        elif asked.get(task.id) != sha:
            diff.escalated.append(PlanChange(task.id, ChangeKind.CHANGED, old.state, task, sha))
        else:
            diff.unchanged += 1
    for old in known:
        if not old.from_plan or old.task_id in in_plan:
            continue
        if old.state is IssueState.RECEIVED and old.task_id not in running:
            diff.cancelled.append(old.task_id)
        elif old.state is not IssueState.FAILED and asked.get(old.task_id) != REMOVED:
            # A failed task (a cancelled one among them) removed from the plan: nothing left to stop.
            diff.escalated.append(PlanChange(old.task_id, ChangeKind.REMOVED, old.state, None, REMOVED))
    return diff
