"""The outbox table: rows written by the event hook in the transaction of the change, or not at all."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from pm_agent.errors import StoreError
from pm_agent.github.rows import outbox_rows
from pm_agent.plan.models import Dependency, Plan, Task, Tier
from pm_agent.store import SqliteStore, open_store
from pm_agent.store.outbox import Outbox, register_hook, unregister_hook
from pm_agent.store.planedit import Cancel


def _plan(*ids: str) -> Plan:
    """Tasks `ids`, the first depending on the last (so the queue is not plan order)."""
    tasks = [
        Task(
            id=task_id,
            title=f"Task {task_id}",
            tier=Tier.NORMAL,
            acceptance_criteria=[f"criterion of {task_id}"],
            depends_on=[Dependency(task_id=ids[-1])] if n == 0 and len(ids) > 1 else [],
        )
        for n, task_id in enumerate(ids)
    ]
    return Plan(plan_id="demo", path="docs/plans/plan.md", tasks=tasks, queue=[*ids[1:], ids[0]])


@pytest.fixture
def db_path(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / ".pm-agent" / "state.db"
    register_hook(path, outbox_rows)
    yield path
    unregister_hook(path)


@pytest.fixture
def store(db_path: Path) -> Iterator[SqliteStore]:
    with open_store(db_path) as opened:
        yield opened


def _run(store: SqliteStore, *ids: str) -> str:
    plan = _plan(*(ids or ("1", "2", "3")))
    return store.create_run(plan, baseline_sha="a" * 40, working_branch="pm/demo", shared_context={}, config={}).id


def _keys(store: SqliteStore, run_id: str) -> list[str]:
    return [row.key for row in Outbox(store.engine, store.now).rows(run_id)]


def test_run_start_writes_the_run_issue_then_task_issues_dependencies_first(store: SqliteStore) -> None:
    run_id = _run(store, "1", "2", "3")
    assert _keys(store, run_id) == [
        f"run-issue:{run_id}",
        f"issue:{run_id}:2",
        f"issue:{run_id}:3",
        f"issue:{run_id}:1",
    ]
    pending = Outbox(store.engine, store.now).pending(run_id)
    assert [(r.kind, r.payload) for r in pending[1:]] == [("task_issue", {"task_id": t}) for t in ("2", "3", "1")]
    assert all(r.sent_at is None and r.attempts == 0 for r in pending)


def test_without_a_registered_hook_nothing_is_written(tmp_path: Path) -> None:
    with open_store(tmp_path / "other.db") as other:
        run_id = _run(other)
        assert _keys(other, run_id) == []


def test_a_transition_writes_its_label_row_and_completion_its_close_row(store: SqliteStore) -> None:
    run_id = _run(store, "1")
    store.transition(run_id, "1", from_state="received", to_state="planning_approach", reason="go",
                     iteration=0, workflow_context={})  # fmt: skip
    store.transition(run_id, "1", from_state="planning_approach", to_state="completed", reason="done",
                     iteration=0, workflow_context={})  # fmt: skip
    rows = Outbox(store.engine, store.now).rows(run_id)
    labels = [(r.kind, r.payload) for r in rows if r.kind == "labels"]
    assert labels == [("labels", {"task_id": "1", "state": "planning_approach"}),
                      ("labels", {"task_id": "1", "state": "completed"})]  # fmt: skip
    assert rows[-1].key == f"done:{run_id}:1"


def test_a_refused_transition_writes_no_row(store: SqliteStore) -> None:
    run_id = _run(store, "1")
    before = _keys(store, run_id)
    with pytest.raises(StoreError, match="refused"):
        store.transition(run_id, "1", from_state="implementing", to_state="completed", reason="x",
                         iteration=0, workflow_context={})  # fmt: skip
    assert _keys(store, run_id) == before


def test_rows_roll_back_with_the_transaction_that_wrote_them(store: SqliteStore) -> None:
    # The plan edit adds a task (its issue row is written) and then fails on a stale cancel: all of it goes.
    run_id = _run(store, "1")
    before = _keys(store, run_id)
    stale = Cancel(task_id="1", from_state="implementing", to_state="failed", reason="dropped", iteration=0,
                   workflow_context={})  # fmt: skip
    with pytest.raises(StoreError):
        store.apply_plan_edit(run_id, added=[_plan("9").tasks[0]], updated=[], cancelled=[stale], reason="edit",
                              event="plan.edited", payload={})  # fmt: skip
    assert _keys(store, run_id) == before
    store.apply_plan_edit(run_id, added=[_plan("9").tasks[0]], updated=[], cancelled=[], reason="edit",
                          event="plan.edited", payload={})  # fmt: skip
    assert _keys(store, run_id) == [*before, f"issue:{run_id}:9"]


def test_escalations_opened_and_answered_are_rows_and_a_key_is_written_once(store: SqliteStore) -> None:
    run_id = _run(store, "1")
    esc = store.open_escalation(run_id, "1", source="q", problem="which?", impact="blocks", options=["a", "b"],
                                recommended="a", blocking=True, session_id=None)  # fmt: skip
    store.answer_escalation(esc.id, "a")
    outbox = Outbox(store.engine, store.now)
    rows = outbox.rows(run_id)
    assert [(r.key, r.payload) for r in rows[-2:]] == [
        (f"escalation:{run_id}:{esc.id}", {"escalation_id": esc.id, "task_id": "1"}),
        (f"answered:{run_id}:{esc.id}", {"escalation_id": esc.id, "task_id": "1"}),
    ]
    outbox.add(run_id, [rows[-1]])  # the same key again: a no-op
    assert len(outbox.rows(run_id)) == len(rows)


def test_sent_and_failed_rows_and_the_summary(store: SqliteStore) -> None:
    run_id = _run(store, "1")
    outbox = Outbox(store.engine, store.now)
    first, second = outbox.pending(run_id)
    outbox.begin(first.id)
    outbox.mark_sent(first.id)
    outbox.begin(second.id)
    outbox.mark_failed(second.id, "422 validation failed")
    assert outbox.summary(run_id) == (1, "422 validation failed")
    assert [r.id for r in outbox.pending(run_id)] == [second.id]
    assert outbox.pending(run_id)[0].attempts == 1


_CRASH = """
import os, signal, sys
from pm_agent.github.rows import outbox_rows
from pm_agent.plan.models import Plan, Task
from pm_agent.store import open_store
from pm_agent.store.outbox import register_hook
path = sys.argv[1]
register_hook(path, outbox_rows)
store = open_store(path)
plan = Plan(plan_id="demo", path="plan.md", tasks=[Task(id="1", title="One")])
run = store.create_run(plan, baseline_sha="a" * 40, working_branch="pm/demo", shared_context={}, config={})
store.transition(run.id, "1", from_state="received", to_state="planning_approach", reason="go", iteration=0,
                 workflow_context={})
print(run.id, flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # before any sender ran
"""


def test_a_kill_9_after_the_change_loses_no_row(db_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(_CRASH), str(db_path)], capture_output=True,
                          text=True, timeout=120, check=False)  # fmt: skip
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    run_id = proc.stdout.strip()
    with open_store(db_path) as store:
        pending = Outbox(store.engine, store.now).pending(run_id)
        assert [r.kind for r in pending] == ["run_issue", "task_issue", "labels"]
        assert pending[-1].payload == {"task_id": "1", "state": "planning_approach"}


def test_pm_agents_own_task_rows_get_no_issue_and_their_escalations_go_to_the_run(store: SqliteStore) -> None:
    from pm_agent.engine.final_review import CONTAINER
    from pm_agent.github.rows import INTERNAL_TASKS

    assert CONTAINER in INTERNAL_TASKS
    run_id = _run(store, "1")
    before = _keys(store, run_id)
    store.add_tasks(run_id, [Task(id=CONTAINER, title="Final review")], reason="final review")
    store.transition(run_id, CONTAINER, from_state="received", to_state="implementing", reason="go",
                     iteration=0, workflow_context={})  # fmt: skip
    assert _keys(store, run_id) == before
    esc = store.open_escalation(run_id, CONTAINER, source="q", problem="ship?", impact="x", options=["a", "b"],
                                recommended="a", blocking=True, session_id=None)  # fmt: skip
    [row] = Outbox(store.engine, store.now).pending(run_id)[-1:]
    assert row.payload == {"escalation_id": esc.id, "task_id": None}
