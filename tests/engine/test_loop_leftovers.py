"""A completed task's worktree that a stopped pm-agent left behind is removed when the loop starts again
(its removal waits for the next dispatch, so a kill in between leaves it). No agent runs here."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from pm_agent.engine.loop import PmLoop
from pm_agent.lifecycle import IssueState

from .conftest import Target, git

PLAN = """\
# calc

### Task 1: Addition

**Files:**
- Create: `src/calc/add.py`

**Acceptance criteria:**
- add(a, b) returns the sum

### Task 2: Subtraction

**Files:**
- Create: `src/calc/sub.py`

**Acceptance criteria:**
- sub(a, b) returns the difference
"""


def test_a_completed_tasks_leftover_worktree_is_removed_and_an_open_tasks_kept(
    target: Callable[[str], Target],
) -> None:
    t = target(PLAN)
    rc = t.start()
    branch = rc.run.working_branch
    git(t.repo, "checkout", "-q", branch)
    git(t.repo, "commit", "-q", "--allow-empty", "-m", "feat(calc): addition\n\nRefs: task-1")
    git(t.repo, "checkout", "-q", "main")
    done = rc.store.get_task(rc.run_id, "1")
    for to in (IssueState.PLANNING_APPROACH, IssueState.IMPLEMENTING, IssueState.CREATING_PR, IssueState.COMPLETED):
        done = rc.move(done, to, "test")
    open_task = rc.store.get_task(rc.run_id, "2")
    for rec in (done, open_task):  # both worktrees on disk, as a kill before the cleanup leaves them
        rc.git.worktree_add(rc.worktree_path(rec.task_id), rc.task_branch_of(rec), branch)
    rc.aborted = True  # nothing is dispatched: only the cleanup runs
    asyncio.run(PmLoop(rc).drive(poll_s=0.1))
    assert not rc.worktree_path("1").exists()
    assert not rc.git.branch_exists(rc.task_branch_of(done))
    assert rc.worktree_path("2").exists()  # not completed: its work stays
    assert rc.git.branch_exists(rc.task_branch_of(open_task))
    assert [w.path for w in rc.git.worktree_list()] == [str(t.repo), str(rc.worktree_path("2"))]
