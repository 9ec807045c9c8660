"""The synthetic run of benchmark 4 holds what it says, read back through the Store API (correctness, not speed)."""

from __future__ import annotations

import resource
import sys
from collections import Counter
from pathlib import Path

import pytest

from pm_agent.plan.models import TaskStatus
from pm_agent.reports.state_reader import read_state
from pm_agent.reports.status import status_data
from pm_agent.statefile import default_store_path
from pm_agent.store import EscalationStatus, RiskStatus, SessionStatus, open_store
from pm_agent.testing.repo import init_repo

BENCH_DIR = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH_DIR))

from bench_status import measure  # noqa: E402
from status_run import Mix, SyntheticRun, build_run  # noqa: E402


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> SyntheticRun:
    repo = init_repo(tmp_path_factory.mktemp("bench") / "repo")
    return build_run(repo, tasks=60, events_total=3000, seed=7)


def test_the_mix_leaves_every_kind_of_task() -> None:
    assert Mix.for_tasks(1000) == Mix(completed=700, in_progress=30, escalated=10, failed=5)
    assert Mix.for_tasks(60) == Mix(completed=42, in_progress=1, escalated=1, failed=1)


def test_the_store_reads_back_what_the_generator_reports(made: SyntheticRun) -> None:
    run = made
    with open_store(default_store_path(run.repo)) as store:
        tasks = store.list_tasks(run.run_id)
        assert len(tasks) == 60
        statuses = Counter(t.status for t in tasks)
        assert statuses == {
            TaskStatus.COMPLETED: 42, TaskStatus.IN_PROGRESS: 1, TaskStatus.ESCALATED: 1, TaskStatus.FAILED: 1,
            TaskStatus.PENDING: 15,
        }  # fmt: skip
        assert all(t.commit_sha for t in tasks if t.status is TaskStatus.COMPLETED)
        assert [t.task_id for t in tasks] == [str(i) for i in range(1, 61)]
        events = store.events(run.run_id)
        assert len(events) == run.events == 3000
        per_task = Counter(e.task_id for e in events if e.task_id is not None)
        started = {t.task_id for t in tasks if t.status is not TaskStatus.PENDING}
        assert set(per_task) == started  # the filler goes to tasks that started, none to pending ones
        assert per_task[run.busiest_task] == max(per_task.values())
        sessions = store.list_sessions(run.run_id)
        assert len(sessions) == run.sessions == 42 * 2 + 3
        assert run.cost_usd == round(sum(s.cost_usd for s in sessions), 6) > 0
        live = [s for s in sessions if s.status is SessionStatus.RUNNING]
        assert len(live) == run.live_sessions == 1
        open_escalations = store.list_escalations(run.run_id, EscalationStatus.OPEN)
        assert len(open_escalations) == run.open_escalations == 1
        assert len(store.list_risks(run.run_id, RiskStatus.OPEN)) == run.open_risks == 5
        history = store.task_history(run.run_id, "1")
        assert [h.summary for h in history if h.source == "transition"][-1].startswith("creating_pr -> completed")
        assert len(store.gate_results(run.run_id, "1")) == 3
        assert len(store.commits(run.run_id)) == 42


def test_status_over_the_generated_run_counts_what_the_store_holds(made: SyntheticRun) -> None:
    data = read_state(default_store_path(made.repo), status_data)
    assert data["counts"]["total"] == 60
    assert data["counts"]["status"]["completed"] == 42
    assert data["cost"]["sessions"] == made.sessions
    assert len(data["open_escalations"]) == 1


def test_measure_reports_each_runs_own_figures(tmp_path: Path) -> None:
    big = measure([sys.executable, "-c", "x = bytearray(64 * 1024 * 1024); print(len(x))"], tmp_path, repeat=2)
    small = measure([sys.executable, "-c", "pass"], tmp_path, repeat=1)
    assert len(big) == 2
    for wall, cpu, rss in big:
        assert wall > 0
        assert cpu >= 0
        assert rss >= 64
    own_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    assert small[0][2] < 40 < own_peak  # the child's own peak, not this (bigger) process's
    with pytest.raises(RuntimeError, match="exited 3"):
        measure([sys.executable, "-c", "raise SystemExit(3)"], tmp_path, repeat=1)
