"""The final review's task row is pm-agent's record, not plan work: a 3-task plan reads 3/3 everywhere
(`pm-agent status`, its --json, the progress report from the store and from the state file)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pm_agent.engine.final_review import CONTAINER
from pm_agent.internal_tasks import PM_INTERNAL_TASKS, is_pm_internal, plan_task_count
from pm_agent.plan.models import Plan, Presence, Task, TaskStatus, Tier
from pm_agent.reports.progress_data import file_progress_data, progress_text
from pm_agent.reports.state_reader import read_state
from pm_agent.statefile import default_store_path
from pm_agent.store import SqliteStore, open_store
from pm_agent.testing.repo import init_repo


def _done(store: SqliteStore, run: str, task: str) -> None:
    store.transition(
        run, task, from_state="received", to_state="completed", reason="done", iteration=1,
        workflow_context={}, status=TaskStatus.COMPLETED,
    )  # fmt: skip


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, str]:
    """A repository whose run has 3 plan tasks, 2 completed, and the final review's row (completed, as it is made)."""
    root = init_repo(tmp_path / "r", files={"README.md": "# r\n"})
    tasks = [Task(id=str(i), title=f"T{i}", tier=Tier.NORMAL, acceptance_criteria=["c"]) for i in (1, 2, 3)]
    plan = Plan(plan_id="p", path="plan.md", tasks=tasks, queue=["1", "2", "3"])
    with open_store(default_store_path(root)) as store:
        run = store.create_run(plan, baseline_sha="a" * 40, working_branch="pm/p/work", shared_context={}, config={})
        review = Task(id=CONTAINER, title="Final review of the working branch", tier=Tier.NORMAL,
                      presence=Presence.EXISTS, presence_reason="the final review's record")  # fmt: skip
        store.add_tasks(run.id, [review], reason="final review: the record of its reviewer sessions")
        for task in ("1", "2", CONTAINER):
            _done(store, run.id, task)
        assert len(store.list_tasks(run.id)) == 4  # the row is there; the views must leave it out
    return root, run.id


def pm(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("pm-agent", path=str(Path(sys.executable).parent))
    assert exe is not None
    return subprocess.run([exe, *args, "-C", str(root)], capture_output=True, text=True, timeout=120, check=False)


def test_the_final_review_row_is_the_one_pm_internal_row() -> None:
    assert {CONTAINER} == PM_INTERNAL_TASKS
    assert is_pm_internal("final-review")
    assert not is_pm_internal("1")
    assert not is_pm_internal("r1")  # a remediation task is plan work: it is counted


def test_status_counts_the_plans_tasks(repo: tuple[Path, str]) -> None:
    root, _ = repo
    shown = pm(root, "status", "--all")
    assert shown.returncode == 0, shown.stderr
    assert "Completed 2/3 tasks (1 pending, 2 completed)" in shown.stdout
    assert "Final review of the working branch" not in shown.stdout
    data = json.loads(pm(root, "status", "--json").stdout)
    assert data["counts"]["total"] == 3
    assert data["counts"]["done"] == 2
    assert data["counts"]["state"] == {"completed": 2, "received": 1}
    assert [t["task_id"] for t in data["tasks"]] == ["1", "2", "3"]
    assert data["by_status"] == {"completed": ["1", "2"], "pending": ["3"]}
    assert "Completed: 2/3 tasks" in data["progress_report"]


def test_the_progress_report_counts_the_plans_tasks(repo: tuple[Path, str]) -> None:
    root, run_id = repo
    text = progress_text(default_store_path(root), run_id, "p")
    assert "Completed: 2/3 tasks" in text
    assert "Estimated remaining: 0 critical, 1 normal, 0 low" in text
    from_file = read_state(default_store_path(root), lambda con: file_progress_data(con, run_id, "p"))
    assert [t.task_id for t in from_file.tasks] == ["1", "2", "3"]


def test_plan_task_count_leaves_pm_agents_rows_out_of_a_set_or_a_table() -> None:
    assert plan_task_count({"1", "2", CONTAINER}) == 2
    assert plan_task_count({"1": 0, CONTAINER: 0, "3": 0}) == 2
    assert plan_task_count({"1", "2"}) == 2
    assert plan_task_count(set()) == 0
