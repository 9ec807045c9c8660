"""The progress report read from a real store: states and statuses arrive as enums, not strings."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pm_agent.lifecycle.states import IssueState
from pm_agent.plan.models import Dependency, Plan, Task, TaskStatus, Tier
from pm_agent.reports.progress_data import file_progress_data, progress_text
from pm_agent.reports.state_reader import read_state
from pm_agent.store import RiskStatus, Severity, SqliteStore, open_store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    with open_store(tmp_path / "state.db") as opened:
        yield opened


def _plan() -> Plan:
    tasks = [
        Task(id="1", title="Ask", tier=Tier.NORMAL, ownership="a", acceptance_criteria=["c"]),
        Task(id="2", title="Wait", tier=Tier.LOW, ownership="b", acceptance_criteria=["c"],
             depends_on=[Dependency(task_id="1")]),
        Task(id="3", title="Done", tier=Tier.CRITICAL, ownership="c", acceptance_criteria=["c"]),
    ]  # fmt: skip
    return Plan(plan_id="p", path="plan.md", design_path="design.md", tasks=tasks)


def test_task_state_is_read_from_the_store_as_an_issue_state(store: SqliteStore) -> None:
    run = store.create_run(_plan(), baseline_sha="a" * 40, working_branch="pm/p", shared_context={}, config={})
    store.transition(
        run.id, "3", from_state="received", to_state="completed", reason="done", iteration=1,
        workflow_context={}, status=TaskStatus.COMPLETED,
    )  # fmt: skip
    states = {t.task_id: t.state for t in store.list_tasks(run.id)}
    assert states == {"1": IssueState.RECEIVED, "2": IssueState.RECEIVED, "3": IssueState.COMPLETED}
    assert all(type(state) is IssueState for state in states.values())


def test_blocked_tasks_and_open_risks_come_from_enums(store: SqliteStore, tmp_path: Path) -> None:
    run = store.create_run(_plan(), baseline_sha="a" * 40, working_branch="pm/p", shared_context={}, config={})
    store.transition(
        run.id, "1", from_state="received", to_state="waiting_for_human_input", reason="ask", iteration=0,
        workflow_context={}, status=TaskStatus.ESCALATED,
    )  # fmt: skip
    store.transition(
        run.id, "3", from_state="received", to_state="completed", reason="done", iteration=1,
        workflow_context={}, status=TaskStatus.COMPLETED,
    )  # fmt: skip
    kept = store.add_risk(run.id, description="still open", severity=Severity.CRITICAL)
    closed = store.add_risk(run.id, description="handled", severity=Severity.LOW)
    store.update_risk_status(run.id, closed.id, RiskStatus.MITIGATED)
    data = read_state(tmp_path / "state.db", lambda con: file_progress_data(con, run.id, "p"))
    reasons = {t.task_id: (t.status, t.state, t.blocked_reason) for t in data.tasks}
    assert reasons == {
        "1": (TaskStatus.ESCALATED, IssueState.WAITING_FOR_HUMAN_INPUT, "waiting for a human answer"),
        "2": (TaskStatus.PENDING, IssueState.RECEIVED, "depends on blocked task-1"),
        "3": (TaskStatus.COMPLETED, IssueState.COMPLETED, ""),
    }
    assert [r.risk_id for r in data.risks] == [kept.id]
    text = progress_text(tmp_path / "state.db", run.id, "p")
    assert "still open" in text
    assert "handled" not in text
