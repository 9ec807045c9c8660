"""pm-agent's memory of its own writes to the tasks table (the `store-watch` check of integrity.py).

Kept apart from integrity.py so that `RunContext`, which feeds the memory on every move, can hold
one without importing the checks that read a `RunContext`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from pm_agent.lifecycle import IssueState
from pm_agent.store import TaskRecord, TaskRow, TaskRowValues

# What the checks read: full records (at the final gate), rows, or a row's stored values (the usual look).
AnyRow = TaskRecord | TaskRow | TaskRowValues

STORE_WATCH = "store-watch"
S = IssueState


@dataclass(frozen=True)
class Mark:
    """The fields of a task that only pm-agent's transitions write, as it last wrote them."""

    state: str
    status: str
    commit_sha: str | None
    iteration_count: int
    retry_count: int
    workflow_context: str  # canonical JSON

    @classmethod
    def of(cls, rec: TaskRecord | TaskRow) -> Mark:
        """The mark of a stored task."""
        return cls(
            state=rec.state.value,
            status=rec.status.value,
            commit_sha=rec.commit_sha,
            iteration_count=rec.iteration_count,
            retry_count=rec.retry_count,
            workflow_context=json.dumps(rec.workflow_context, sort_keys=True),
        )

    def differences(self, other: Mark) -> list[str]:
        """`field: expected → found` for each field that differs."""
        out = []
        for name in ("state", "status", "commit_sha", "iteration_count", "retry_count"):
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine != theirs:
                out.append(f"{name} {mine!r} → {theirs!r}")
        if self.workflow_context != other.workflow_context:
            out.append("workflow_context changed")
        return out


@dataclass(frozen=True)
class Finding:
    """One integrity problem: which check caught it, about which task, what pm-agent expected."""

    caught_by: str
    task_id: str | None
    problem: str
    expected: Mark | None = None  # what pm-agent last wrote (a repair puts it back)


@dataclass
class StoreWatch:
    """pm-agent's memory of its own writes to the tasks table; see the module docstring."""

    marks: dict[str, Mark] = field(default_factory=dict)
    verified: set[str] = field(default_factory=set)  # completed tasks whose Refs commit was found
    started: bool = False
    incidents: int = 0  # findings handled so far: a session running across one gets its result refused
    # Per task, the row last read and its mark: a row read again unchanged is not decoded and re-encoded
    # (at 200 tasks that was most of a check, and a check follows every task's end).
    read: dict[str, tuple[tuple[object, ...], Mark]] = field(default_factory=dict)
    # Tasks pm-agent is writing on a worker thread right now: their rows may or may not show the write yet,
    # and `saw` may not have run, so a look skips them (the next look sees the write done). Added and
    # removed on the event loop's thread, where the looks run: no write can start during a look.
    writing: set[str] = field(default_factory=set)
    # Where the last look left the store's journal of task changes (`Store.task_row_changes`), and the tasks
    # it left for the next look to read again whether they change or not (integrity.py).
    seq: int | None = None
    again: set[str] = field(default_factory=set)

    def saw(self, rec: TaskRecord) -> None:
        """pm-agent itself just wrote this task."""
        self.marks[rec.task_id] = Mark.of(rec)

    def compare(self, records: Sequence[AnyRow], gone: Sequence[str] | None = None) -> list[Finding]:
        """The differences between the store and the memory; the first call adopts what is stored. `records`
        are every task's row, or (with `gone`, the ids of the rows deleted) the rows changed since a look."""
        found: list[Finding] = []
        first = not self.started
        self.started = True
        if gone is None:
            missing = self.marks.keys() - {row_id(rec) for rec in records}
        else:  # not `keys() & gone`: that makes a set of every key
            missing = {task_id for task_id in gone if task_id in self.marks}
        marks, read, writing = self.marks, self.read, self.writing
        for rec in records:
            if writing and row_id(rec) in writing:
                continue
            if isinstance(rec, tuple):
                memo = read.get(rec[0])
                # As read last time, and that read was what pm-agent expects: nothing to decode.
                if memo is not None and memo[0] == rec[1:] and marks.get(rec[0]) is memo[1]:
                    continue
                rec = TaskRow.of(rec)
            mark = self._mark(rec)
            expected = marks.get(rec.task_id)
            if expected is None:
                found += _adopt(rec, first)
                marks[rec.task_id] = mark
            elif expected == mark:
                marks[rec.task_id] = mark  # the same values: the read's own mark lets the next look skip the row
            else:
                what = "; ".join(expected.differences(mark))
                found.append(Finding(STORE_WATCH, rec.task_id, f"task-{rec.task_id} changed in the store "
                                     f"without pm-agent: {what}", expected))  # fmt: skip
        for task_id in sorted(missing - writing):
            found.append(Finding(STORE_WATCH, task_id, f"task-{task_id} was deleted from the store"))
            del self.marks[task_id]
            self.read.pop(task_id, None)
        return found

    def _mark(self, rec: TaskRecord | TaskRow) -> Mark:
        if not isinstance(rec, TaskRow):
            return Mark.of(rec)
        key = (rec.state, rec.status, rec.commit_sha, rec.iteration_count, rec.retry_count, rec.workflow_json)
        memo = self.read.get(rec.task_id)
        if memo is None or memo[0] != key:
            memo = self.read[rec.task_id] = (key, Mark.of(rec))
        return memo[1]


def row_id(rec: AnyRow) -> str:
    """The task id of any kind of row."""
    return rec[0] if isinstance(rec, tuple) else rec.task_id


def _adopt(rec: TaskRecord | TaskRow, first: bool) -> list[Finding]:
    """A task pm-agent has no memory of: at the first look any consistent one, later only a new one."""
    # A task pm-agent never moved has an empty context: it must still be `received`.
    current = rec.workflow_context.get("current_state", S.RECEIVED.value)
    if current != rec.state:
        problem = f"task-{rec.task_id} is stored in state {rec.state.value!r} but its workflow context says {current!r}"
        return [Finding(STORE_WATCH, rec.task_id, problem)]
    if not first and (S(rec.state) is not S.RECEIVED or rec.iteration_count):
        problem = f"task-{rec.task_id} appeared in the store in state {rec.state.value!r} without pm-agent"
        return [Finding(STORE_WATCH, rec.task_id, problem)]
    return []
