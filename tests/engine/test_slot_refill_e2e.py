"""A finished task frees its slot as soon as its commit is recorded: the next task is dispatched first,
the finished task's worktree is removed after (issue 11). With the real Claude Code CLI, one slot."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pm_agent.engine.events import RecordingListener
from pm_agent.testing.team import signal, write

from .conftest import Target

pytestmark = pytest.mark.claude

PLAN = """\
# notes

**Goal:** two notes.

### Task 1: Write the usage note

**Tier:** low
**Ownership:** docs-usage

**Files:**
- Create: `docs/usage.md`

**Acceptance criteria:**
- docs/usage.md says how to import calc

### Task 2: Write the history note

**Tier:** low
**Ownership:** docs-history

**Files:**
- Create: `docs/history.md`

**Acceptance criteria:**
- docs/history.md says when calc started
"""
USAGE = "docs/usage.md says how to import calc"
HISTORY = "docs/history.md says when calc started"


@dataclass
class WorktreeWatcher(RecordingListener):
    """At each dispatch, which other tasks' worktrees are still on disk."""

    worktrees: Callable[[str], Path] | None = None
    seen: dict[str, list[str]] = field(default_factory=dict)

    def emit(self, kind: str, message: str, **data: Any) -> None:
        super().emit(kind, message, **data)
        if kind == "slots" and self.worktrees is not None:
            task = message.split()[1].removeprefix("task-")
            self.seen[task] = [t for t in ("1", "2") if t != task and self.worktrees(t).exists()]


def _note(path: str, text: str, criterion: str) -> list[dict[str, object]]:
    return [
        write(path, text),
        signal(
            {
                "signal": "complete",
                "summary": f"wrote {path}",
                "filesCreated": [path],
                "criteriaMapping": [{"criterion": criterion, "location": f"{path}:1"}],
                "reviewNote": {"summary": "a note", "risks": [], "rollback": "revert the commit"},
            }
        ),
    ]


def test_the_next_task_is_dispatched_before_the_finished_worktree_is_removed(
    target: Callable[[str], Target],
) -> None:
    t = target(PLAN)
    t.listener = watcher = WorktreeWatcher()
    t.team.scripts = {
        ("task-1", "developer"): _note("docs/usage.md", "Import calc: `import calc`.\n", USAGE),
        ("task-2", "developer"): _note("docs/history.md", "calc started in 2026.\n", HISTORY),
    }
    rc = t.start(max_parallel_agents=1)
    watcher.worktrees = rc.worktree_path
    outcome = t.drive(rc)
    assert outcome.all_done, (outcome, t.listener.events[-10:])
    first, second = list(watcher.seen)  # in dispatch order
    assert watcher.seen[first] == []
    assert watcher.seen[second] == [first], "the finished task's worktree was removed before the slot was refilled"
    assert [t for t in ("1", "2") if rc.worktree_path(t).exists()] == []  # both removed in the end
