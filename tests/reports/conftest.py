"""A run with a bit of everything, written through the real Store API into a real git repository's state file."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest

from pm_agent.plan.models import Dependency, Plan, Task, TaskStatus, Tier
from pm_agent.statefile import default_store_path
from pm_agent.store import RiskStatus, Severity, SqliteStore, open_store
from pm_agent.testing.clock import TickClock
from pm_agent.testing.repo import init_repo


@dataclass(frozen=True)
class BusyRun:
    """Where the run is: the repository, its state file and the run id (the newest of two runs)."""

    repo: Path
    db: Path
    run_id: str


def _plan(plan_id: str, n: int) -> Plan:
    tiers = [Tier.CRITICAL, Tier.NORMAL, Tier.LOW]
    tasks = [
        Task(
            id=str(i), title=f"Task [{i}] title", tier=tiers[i % 3], ownership=f"m{i}", acceptance_criteria=["c"],
            depends_on=[Dependency(task_id=str(i - 1))] if i > 1 else [],
        )
        for i in range(1, n + 1)
    ]  # fmt: skip
    return Plan(plan_id=plan_id, path="docs/plan.md", tasks=tasks, queue=[t.id for t in tasks])


def _go(store: SqliteStore, run: str, task: str, path: list[str], status: TaskStatus) -> None:
    for n, (src, dst) in enumerate(itertools.pairwise(path)):
        store.transition(
            run, task, from_state=src, to_state=dst, reason=f"why {n}", iteration=n, workflow_context={},
            status=status if n == len(path) - 2 else TaskStatus.IN_PROGRESS,
        )  # fmt: skip


def fill(store: SqliteStore) -> str:
    """An older run, then the run under test: tasks in every kind of place, sessions, signals, gates, events."""
    store.create_run(_plan("old", 2), baseline_sha="b" * 40, working_branch="pm/old", shared_context={}, config={})
    run = store.create_run(
        _plan("demo", 6), baseline_sha="a" * 40, working_branch="pm/demo",
        shared_context={"project_name": "demo"}, config={"max_parallel": 3}, run_id="run-x",
    ).id  # fmt: skip
    done = ["received", "planning_approach", "implementing", "running_tests", "creating_pr", "completed"]
    _go(store, run, "1", done, TaskStatus.COMPLETED)
    _go(store, run, "2", ["received", "implementing", "waiting_for_human_input"], TaskStatus.ESCALATED)
    _go(store, run, "4", ["received", "implementing", "failed"], TaskStatus.FAILED)
    _go(store, run, "5", ["received", "implementing"], TaskStatus.IN_PROGRESS)
    s1 = store.create_session(run, "1", "developer", 1, "t1", "claude", "/w/1")
    store.update_session(s1.id, status="signalled", cost_usd=0.125, input_tokens=1000, output_tokens=100)
    s2 = store.create_session(run, "1", "reviewer", 1, "t2", "claude", "/w/1", resumed_from=s1.id)
    store.update_session(s2.id, status="exited", cost_usd=0.5, input_tokens=30, output_tokens=3)
    s3 = store.create_session(run, "5", "developer", 1, "t3", "claude", "/w/5")
    store.update_session(s3.id, status="running", cost_usd=0.0625, input_tokens=7, output_tokens=1)
    store.record_signal(run_id=run, task_id="1", session_id=s1.id, attempt=1, seq=1, kind="complete",
                        payload={"summary": "done"}, accepted=True)  # fmt: skip
    store.record_signal(run_id=run, task_id="1", session_id=s1.id, attempt=1, seq=2, kind="needs-user-input",
                        payload={"question": "?"}, accepted=False, reason="not allowed now")  # fmt: skip
    store.record_gate_result(run, "1", attempt=1, gate="tests", passed=False, evidence="1 failed")
    store.record_gate_result(run, "1", attempt=2, gate="tests", passed=True, evidence="ok")
    store.append_event(run, "dispatch.prompt", {"bytes": 2048, "role": "developer"}, task_id="1")
    store.append_event(run, "agent.note", {"text": "[bold]not markup[/]"}, task_id="1")
    store.append_event(run, "run.note", {"text": "about the run"})
    store.record_commit(run, "1", sha="c" * 40, branch="pm/demo", message="task-1")
    store.open_escalation(run, "2", source="needs-user-input", problem="Which port?", impact="task 2 waits",
                          options=["80", "8080"], recommended="8080", session_id=s1.id)  # fmt: skip
    answered = store.open_escalation(run, None, source="pm", problem="old", impact="-", options=["a", "b"],
                                     recommended="a", blocking=False)  # fmt: skip
    store.answer_escalation(answered.id, "a")
    store.open_escalation(run, None, source="pm", problem="run-wide", impact="all", options=["a", "b"],
                          recommended="b", blocking=False)  # fmt: skip
    store.add_risk(run, description="big input", severity=Severity.CRITICAL)
    gone = store.add_risk(run, description="handled", severity=Severity.LOW)
    store.update_risk_status(run, gone.id, RiskStatus.MITIGATED)
    store.add_risk(run, description="[normal] looking", severity=Severity.NORMAL, source_task="2")
    store.add_report(run, "progress", "PROGRESS — demo")
    return run


@pytest.fixture(params=[1, 0], ids=["ticking", "frozen-clock"])
def busy(request: pytest.FixtureRequest, tmp_path: Path) -> BusyRun:
    """The run, written and closed (no -wal left: the reader takes its immutable path)."""
    repo = init_repo(tmp_path / "repo")
    db = default_store_path(repo)
    step = timedelta(seconds=request.param, microseconds=250_000 * request.param)  # 1.25 s, or frozen
    with open_store(db, clock=TickClock(step=step)) as store:
        run_id = fill(store)
    return BusyRun(repo, db, run_id)


@pytest.fixture
def reopen() -> Callable[[Path], SqliteStore]:
    """Open a state file again through the store (to compare, or to hold it open like a live run)."""
    return lambda db: open_store(db)
