"""What each stored event asks of GitHub: `outbox_rows(event) -> rows`, pure (no store, no network).

The store calls it inside the transaction that writes the event (`store.outbox.register_hook`), so a row
exists exactly when the change that caused it committed. Keys are idempotency keys: a row written twice is
one row, and the sender finds on GitHub what a key already did (its marker) before doing it again.

    run.created, run.tasks_added -> run_issue, task_issue per task (dependencies first)
    task.transition              -> labels (state:<to>); completed -> task_done (comment + close)
    task.staged                  -> task_pull (a kept CRITICAL branch landed as a merge commit: its pull request
                                    into the working branch, opened before the working branch contains it)
    escalation.opened            -> escalation (comment on the task's issue, or the run issue)
    escalation.answered          -> answered (tells GitHub which answer was taken)
    run.status completed         -> run_done (the run issue is closed)
    report.added                 -> report (progress reports and the handoff, on the run issue);
                                    the handoff also -> release (push, pull request, its link on the run issue)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

RUN_ISSUE = "run_issue"
TASK_ISSUE = "task_issue"
LABELS = "labels"
TASK_DONE = "task_done"
ESCALATION = "escalation"
ANSWERED = "answered"
REPORT = "report"
REFUSED = "refused"
RELEASE = "release"
TASK_PULL = "task_pull"
RUN_DONE = "run_done"

_REPORTED = ("progress", "handoff")
INTERNAL_TASKS = frozenset({"final-review"})
"""pm-agent's own task rows (engine.final_review.CONTAINER holds the final review's sessions): no issue; their
escalations go to the run issue."""


class EventLike(Protocol):
    """The stored event the store hands over (`store.outbox.StoredEvent`)."""

    @property
    def id(self) -> int: ...
    @property
    def run_id(self) -> str: ...
    @property
    def task_id(self) -> str | None: ...
    @property
    def kind(self) -> str: ...
    @property
    def payload(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class Row:
    """One outbox row: an idempotency key, what to do, and what with."""

    key: str
    kind: str
    payload: Mapping[str, Any] = field(default_factory=dict)


def issue_key(run_id: str, task_id: str) -> str:
    """The outbox key (and bridge-state key) of a task's issue."""
    return f"issue:{run_id}:{task_id}"


def run_issue_key(run_id: str) -> str:
    """The outbox key (and bridge-state key) of the run's issue."""
    return f"run-issue:{run_id}"


def task_pull_key(run_id: str, task_id: str) -> str:
    """The outbox key (and bridge-state key) of a kept task branch's pull request."""
    return f"task-pull:{run_id}:{task_id}"


def _issues(run_id: str, task_ids: list[str]) -> list[Row]:
    return [Row(issue_key(run_id, t), TASK_ISSUE, {"task_id": t}) for t in task_ids if t not in INTERNAL_TASKS]


def _ordered(payload: Mapping[str, Any]) -> list[str]:
    """Tasks in queue order (dependencies before dependants, so their `#N` exists), then any the queue left out."""
    tasks = [str(t) for t in payload.get("tasks", [])]
    queue = [str(t) for t in payload.get("queue", []) if str(t) in tasks]
    return queue + [t for t in tasks if t not in queue]


def outbox_rows(event: EventLike) -> list[Row]:
    """The GitHub actions `event` causes (none for most events)."""
    run, task, payload = event.run_id, event.task_id, event.payload
    if task in INTERNAL_TASKS:
        task = None  # its escalations are the run's; its transitions have no issue to label
    if event.kind == "run.created":
        return [Row(run_issue_key(run), RUN_ISSUE), *_issues(run, _ordered(payload))]
    if event.kind == "run.tasks_added":
        return _issues(run, _ordered(payload))
    if event.kind == "task.transition" and task is not None:
        to = str(payload.get("to", ""))
        rows = [Row(f"labels:{run}:{task}:{event.id}", LABELS, {"task_id": task, "state": to})]
        if to == "completed":
            rows.append(Row(f"done:{run}:{task}", TASK_DONE, {"task_id": task}))
        return rows
    if event.kind == "task.staged" and task is not None:
        keep = ("branch", "working_branch", "merge", "review_artifact")
        return [Row(task_pull_key(run, task), TASK_PULL, {"task_id": task, **{k: payload.get(k) for k in keep}})]
    if event.kind == "escalation.opened":
        esc = int(payload["escalation_id"])
        return [Row(f"escalation:{run}:{esc}", ESCALATION, {"escalation_id": esc, "task_id": task})]
    if event.kind == "escalation.answered":
        esc = int(payload["escalation_id"])
        return [Row(f"answered:{run}:{esc}", ANSWERED, {"escalation_id": esc, "task_id": task})]
    if event.kind == "run.status" and payload.get("status") == "completed":
        return [Row(f"run-done:{run}", RUN_DONE)]
    if event.kind == "report.added" and payload.get("kind") in _REPORTED:
        report = int(payload["report_id"])
        rows = [Row(f"report:{run}:{report}", REPORT, {"report_id": report})]
        if payload.get("kind") == "handoff":  # the release passed: push the branch, open the pull request
            rows.append(Row(f"release:{run}", RELEASE, {"report_id": report}))
        return rows
    return []


def catch_up_rows(run_id: str, task_ids: list[str], open_escalations: list[tuple[int, str | None]]) -> list[Row]:
    """What a bridge turned on after the run began still owes: the issues and the open escalations' comments.

    The same keys as the events' rows, so for a run that had the bridge from the start this adds nothing."""
    rows = [Row(run_issue_key(run_id), RUN_ISSUE), *_issues(run_id, task_ids)]
    for esc, task in open_escalations:
        task = None if task in INTERNAL_TASKS else task
        rows.append(Row(f"escalation:{run_id}:{esc}", ESCALATION, {"escalation_id": esc, "task_id": task}))
    return rows
