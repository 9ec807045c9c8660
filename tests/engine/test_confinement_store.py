"""pm-agent's own state is not the agents' to change: the store watch and the completion check.

No agent runs here: the store is changed the way an agent with a shell would (sqlite3 on
`.pm-agent/state.db`), and pm-agent's loop pass, resume and final gate must catch it, name the
check, put back what it knows and never release.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from pm_agent.engine import integrity
from pm_agent.engine.final import final_release_gate
from pm_agent.engine.launch import resume_run
from pm_agent.engine.loop import RECHECK_S, PmLoop
from pm_agent.engine.runctx import RunContext
from pm_agent.human.channels import PrintOnlyChannel
from pm_agent.lifecycle import IssueState
from pm_agent.store import default_store_path

from .conftest import Target, git

PLAN = """\
# calc

### Task 1: Addition

**Files:**
- Create: `src/calc/add.py`

**Acceptance criteria:**
- add(a, b) returns the sum

### Task 2: Subtraction

**Depends on:** Task 1

**Files:**
- Create: `src/calc/sub.py`

**Acceptance criteria:**
- sub(a, b) returns the difference
"""


def forge(db: Path, sql: str, *args: object) -> None:
    """What an agent could run from its shell: another connection, pm-agent's code nowhere."""
    with sqlite3.connect(db) as conn:
        conn.execute(sql, args)


def forge_completed(db: Path, task_id: str) -> None:
    """A careful forgery: state, status and the workflow context all say completed."""
    with sqlite3.connect(db) as conn:
        (context,) = conn.execute("select workflow_context from tasks where task_id = ?", (task_id,)).fetchone()
        ctx = json.loads(context) if context else {"task_id": task_id}
        ctx["current_state"] = "completed"
        conn.execute(
            "update tasks set state = 'completed', status = 'completed', workflow_context = ? where task_id = ?",
            (json.dumps(ctx), task_id),
        )


def state(rc: RunContext, task_id: str) -> str:
    return rc.store.get_task(rc.run_id, task_id).state


@pytest.fixture
def run(target: Callable[[str], Target]) -> tuple[Target, RunContext]:
    t = target(PLAN)
    return t, t.start()


def test_a_task_changed_in_the_store_is_caught_named_and_put_back(run: tuple[Target, RunContext]) -> None:
    t, rc = run
    assert integrity.check_run(rc) == []  # the first look adopts what pm-agent wrote at start
    rec = rc.move(rc.store.get_task(rc.run_id, "1"), IssueState.PLANNING_APPROACH, "test: pm-agent's own move")
    assert integrity.check_run(rc) == []  # pm-agent's own transitions are known
    forge(default_store_path(t.repo), "update tasks set state = 'creating_pr', retry_count = 0 where task_id = '1'")
    findings = integrity.check_run(rc)
    assert [(f.caught_by, f.task_id) for f in findings] == [("store-watch", "1")]
    assert "state 'planning_approach' → 'creating_pr'" in findings[0].problem
    integrity.handle_findings(rc, findings)
    assert state(rc, "1") == "planning_approach"  # put back through a recorded transition
    assert rc.store.transitions(rc.run_id, "1")[-1].reason == "store-watch: put back the state pm-agent had recorded"
    assert rc.aborted  # dispatching stops
    (esc,) = rc.store.list_escalations(rc.run_id)
    assert esc.source == "store-watch"
    assert "changed in the store without pm-agent" in esc.problem
    (event,) = [e for e in rc.store.events(rc.run_id, "1") if e.kind == "integrity.store"]
    assert event.payload["caught_by"] == "store-watch"
    assert event.payload["repaired"] == "task-1 put back to planning_approach"
    assert integrity.check_run(rc) == []  # repaired: consistent again
    assert rec.iteration_count == rc.store.get_task(rc.run_id, "1").iteration_count


def test_a_change_to_the_workflow_context_alone_is_caught_after_earlier_looks(run: tuple[Target, RunContext]) -> None:
    t, rc = run
    rc.move(rc.store.get_task(rc.run_id, "1"), IssueState.PLANNING_APPROACH, "test: pm-agent's own move")
    assert integrity.check_run(rc) == []
    assert integrity.check_run(rc) == []  # read twice unchanged: the watch answers from what it read before
    db = default_store_path(t.repo)
    with sqlite3.connect(db) as conn:
        (context,) = conn.execute("select workflow_context from tasks where task_id = '1'").fetchone()
    ctx = json.loads(context)
    ctx["iteration_count"] = ctx.get("iteration_count", 0) + 5
    forge(db, "update tasks set workflow_context = ? where task_id = '1'", json.dumps(ctx))
    findings = integrity.check_run(rc)
    assert [(f.caught_by, f.task_id) for f in findings] == [("store-watch", "1")]
    assert "workflow_context changed" in findings[0].problem


def test_a_row_put_back_to_what_the_last_look_read_is_caught(run: tuple[Target, RunContext]) -> None:
    """The watch skips a row read unchanged only while pm-agent has not written the task since that read."""
    t, rc = run
    db = default_store_path(t.repo)
    columns = "state, status, commit_sha, iteration_count, retry_count, workflow_context"
    rec = rc.move(rc.store.get_task(rc.run_id, "1"), IssueState.PLANNING_APPROACH, "test: pm-agent's own move")
    assert integrity.check_run(rc) == []
    assert integrity.check_run(rc) == []
    with sqlite3.connect(db) as conn:
        looked_at = conn.execute(f"select {columns} from tasks where task_id = '1'").fetchone()
    rc.move(rec, IssueState.IMPLEMENTING, "test: pm-agent moves on")
    # The agent puts the row back, byte for byte, to what the watch read last time.
    forge(db, f"update tasks set ({columns}) = (?, ?, ?, ?, ?, ?) where task_id = '1'", *looked_at)
    findings = integrity.check_run(rc)
    assert [(f.caught_by, f.task_id) for f in findings] == [("store-watch", "1")]
    assert "state 'implementing' → 'planning_approach'" in findings[0].problem


def test_a_task_pm_agent_is_writing_is_left_to_the_next_look(run: tuple[Target, RunContext]) -> None:
    """A decision's writes run on a worker thread: a look meanwhile may see the row moved before `saw` ran."""
    t, rc = run
    assert integrity.check_run(rc) == []
    db = default_store_path(t.repo)
    rc.watch.writing.add("1")
    forge(db, "update tasks set state = 'creating_pr' where task_id = '1'")  # as if the write had landed
    forge(db, "update tasks set state = 'creating_pr' where task_id = '2'")  # a task nobody is writing
    assert [f.task_id for f in integrity.check_run(rc)] == ["2"]
    rc.watch.writing.discard("1")  # the write ended and `saw` never heard of this state: not pm-agent's
    assert [f.task_id for f in integrity.check_run(rc)] == ["1", "2"]


def test_the_loop_stops_before_dispatching_anything(run: tuple[Target, RunContext]) -> None:
    t, rc = run
    forge_completed(default_store_path(t.repo), "1")  # so that task 2 would look ready
    outcome = asyncio.run(PmLoop(rc).drive(poll_s=0.1))
    assert rc.aborted
    assert rc.store.list_sessions(rc.run_id) == []  # no agent was started
    assert not outcome.all_done
    sources = {e.source for e in rc.store.list_escalations(rc.run_id)}
    assert sources == {"completion-check"}  # adopted at the first look, but no `Refs: task-1` commit
    problems = [e.payload["problem"] for e in rc.store.events(rc.run_id, "1") if e.kind == "integrity.store"]
    assert problems == [f"task-1 is completed in the store but {rc.run.working_branch} has no `Refs: task-1` commit"]


def test_a_naive_update_is_caught_at_resume_by_its_own_workflow_context(run: tuple[Target, RunContext]) -> None:
    t, rc = run
    rc.store.close()
    forge(default_store_path(t.repo), "update tasks set state = 'completed' where task_id = '2'")
    again = resume_run(t.repo, rc.run_id, listener=t.listener, channel=PrintOnlyChannel())
    try:
        findings = integrity.check_run(again)
        assert [f.caught_by for f in findings] == ["store-watch"]  # one finding per task, the first check's
        assert "is stored in state 'completed' but its workflow context says 'received'" in findings[0].problem
    finally:
        again.store.close()


def test_the_final_gate_never_releases_with_a_task_missing(run: tuple[Target, RunContext]) -> None:
    t, rc = run
    rc.store.close()
    for task_id in ("1", "2"):
        forge_completed(default_store_path(t.repo), task_id)
    again = resume_run(t.repo, rc.run_id, listener=t.listener, channel=PrintOnlyChannel())
    try:
        before = git(t.repo, "rev-parse", again.run.working_branch)
        result = asyncio.run(final_release_gate(again))
        assert not result.passed
        assert result.manifest_file is None
        assert len(result.problems) == 2
        assert all(p.startswith("completion-check: task-") for p in result.problems)
        assert git(t.repo, "rev-parse", again.run.working_branch) == before  # no manifest commit
        assert not any(r.kind == "handoff" for r in again.store.list_reports(again.run_id))
    finally:
        again.store.close()


def test_a_completed_task_with_its_commit_passes(run: tuple[Target, RunContext]) -> None:
    t, rc = run
    branch = rc.run.working_branch
    git(t.repo, "checkout", "-q", branch)
    git(t.repo, "commit", "-q", "--allow-empty", "-m", "feat(calc): addition\n\nRefs: task-1")
    git(t.repo, "checkout", "-q", "main")
    assert integrity.check_run(rc) == []
    rec = rc.store.get_task(rc.run_id, "1")
    for to in (IssueState.PLANNING_APPROACH, IssueState.IMPLEMENTING, IssueState.CREATING_PR, IssueState.COMPLETED):
        rec = rc.move(rec, to, "test")
    assert integrity.check_run(rc) == []
    assert "1" in rc.watch.verified
    git(t.repo, "branch", "-f", branch, f"{branch}~1")  # the commit disappears from the working branch
    rc.watch.verified.clear()  # as at resume and in the final gate: every completed task looked at again
    assert integrity.check_run(rc) == [], "nothing changed in the store: the usual look reads no row"
    findings = integrity.check_run(rc, *integrity.changed_rows(rc, full=True)[:2])  # the loop's look every RECHECK_S
    assert [(f.caught_by, f.task_id) for f in findings] == [("completion-check", "1")]


def test_the_usual_look_reads_the_changed_rows_and_catches_a_deletion(run: tuple[Target, RunContext]) -> None:
    t, rc = run
    assert integrity.check_run(rc) == []
    assert rc.store.task_row_changes(rc.run_id, rc.watch.seq).rows == []  # the look moved to the journal's end
    forge(default_store_path(t.repo), "delete from tasks where task_id = '2'")
    findings = integrity.check_run(rc)
    assert [(f.caught_by, f.task_id, f.problem) for f in findings] == [
        ("store-watch", "2", "task-2 was deleted from the store")
    ]


def test_a_change_hidden_from_the_journal_is_caught_by_the_look_over_every_row(run: tuple[Target, RunContext]) -> None:
    """An agent that also deletes the journal's entry gets past the usual look; the loop's look over every row
    (every RECHECK_S) still catches it. Dropping the journal's triggers gets past nothing (test_store_task_changes)."""
    t, rc = run
    assert integrity.check_run(rc) == []
    db = default_store_path(t.repo)
    forge(db, "update tasks set state = 'creating_pr' where task_id = '1'")
    forge(db, "delete from task_changes where task_id = '1'")
    assert integrity.check_run(rc) == []
    findings = integrity.check_run(rc, *integrity.changed_rows(rc, full=True)[:2])
    assert [(f.caught_by, f.task_id) for f in findings] == [("store-watch", "1")]


def test_the_loop_looks_over_every_row_every_recheck(run: tuple[Target, RunContext]) -> None:
    t, rc = run
    loop = PmLoop(rc)
    loop._check()  # the first look: every row
    db = default_store_path(t.repo)
    forge(db, "update tasks set state = 'creating_pr' where task_id = '1'")
    forge(db, "delete from task_changes where task_id = '1'")
    loop.changed = True
    loop._check()  # a usual look: the journal has nothing for it
    assert not rc.aborted
    loop.changed, loop.full_at = True, loop.full_at - RECHECK_S
    loop._check()
    assert rc.aborted
    assert [e.source for e in rc.store.list_escalations(rc.run_id)] == ["store-watch"]


def test_a_completion_finding_stands_at_every_look(run: tuple[Target, RunContext]) -> None:
    """A completed task without its commit is looked at again by every look, changed or not (as when every look
    read every row)."""
    _, rc = run
    rec = rc.store.get_task(rc.run_id, "1")
    for to in (IssueState.PLANNING_APPROACH, IssueState.IMPLEMENTING, IssueState.CREATING_PR, IssueState.COMPLETED):
        rec = rc.move(rec, to, "test")
    for _ in range(2):
        assert [(f.caught_by, f.task_id) for f in integrity.check_run(rc)] == [("completion-check", "1")]
