"""`pm-agent status` data and rendering, from a real store's file (read while the store has it open)."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from pm_agent.errors import NotFoundError
from pm_agent.plan.models import TaskStatus
from pm_agent.reports.state_reader import read_state
from pm_agent.reports.status import render_status, status_data
from pm_agent.store import SqliteStore


def _text(renderable: Any) -> str:
    out = io.StringIO()
    Console(file=out, width=160, color_system=None).print(renderable)
    return out.getvalue()


def _status(db_path: Path, run_id: str | None = None) -> dict[str, Any]:
    return read_state(db_path, lambda con: status_data(con, run_id))


def test_status_of_an_empty_store(store: SqliteStore, db_path: Path) -> None:
    data = _status(db_path)
    assert data["run"] is None
    assert data["runs"] == []
    assert data["counts"]["total"] == 0
    assert "No runs yet" in _text(render_status(data))


def test_status_counts_groups_escalations_and_cost(
    store: SqliteStore, run_id: str, make_plan: Callable[..., Any], db_path: Path
) -> None:
    store.transition(
        run_id, "1", from_state="received", to_state="completed", reason="done", iteration=3,
        workflow_context={}, status=TaskStatus.COMPLETED,
    )  # fmt: skip
    store.transition(
        run_id, "2", from_state="received", to_state="implementing", reason="dispatch", iteration=0,
        workflow_context={}, status=TaskStatus.IN_PROGRESS,
    )  # fmt: skip
    s1 = store.create_session(run_id, "1", "developer", 1, "t1", "claude", "/w")
    store.update_session(s1.id, status="signalled", cost_usd=0.5, input_tokens=100, output_tokens=10)
    s2 = store.create_session(run_id, "2", "developer", 1, "t2", "claude", "/w")
    store.update_session(s2.id, status="running", cost_usd=0.25, input_tokens=50, output_tokens=5)
    esc = store.open_escalation(
        run_id, "2", source="needs-user-input", problem="Which port?", impact="task 2 waits",
        options=["80", "8080"], recommended="8080",
    )  # fmt: skip
    answered = store.open_escalation(
        run_id, None, source="pm", problem="old", impact="-", options=["a"], recommended="a"
    )
    store.answer_escalation(answered.id, "a")
    store.add_risk(run_id, description="r", severity="normal")  # type: ignore[arg-type]
    store.create_run(
        make_plan("9"), baseline_sha="b", working_branch="x", shared_context={}, config={}, run_id="run0"
    )

    data = _status(db_path, run_id)
    json.dumps(data)  # what `status --json` prints
    assert data["run"]["id"] == run_id
    assert [r["id"] for r in data["runs"]] == ["run0", run_id]
    assert [t["task_id"] for t in data["tasks"]] == ["1", "2", "3"]
    assert data["by_status"] == {"completed": ["1"], "in_progress": ["2"], "pending": ["3"]}
    assert data["by_state"] == {"completed": ["1"], "implementing": ["2"], "received": ["3"]}
    counts = data["counts"]
    assert (counts["total"], counts["done"]) == (3, 1)
    assert counts["status"] == {
        "pending": 1, "ready": 0, "in_progress": 1, "completed": 1, "failed": 0, "escalated": 0,
    }  # fmt: skip
    assert counts["state"] == {"completed": 1, "implementing": 1, "received": 1}
    assert [e["id"] for e in data["open_escalations"]] == [esc.id]
    assert data["cost"] == {
        "usd": 0.75, "input_tokens": 150, "output_tokens": 15, "sessions": 2, "live_sessions": 1,
    }  # fmt: skip
    assert data["open_risks"] == 1

    assert _status(db_path)["run"]["id"] == "run0"  # default: the latest run

    text = _text(render_status(data))
    assert f"Run {run_id}" in text
    assert "Completed 1/3 tasks" in text
    assert "By state: 1 completed, 1 implementing, 1 received" in text
    assert "Unfinished tasks: 2 (1 completed not shown: --all)" in text
    rows = [line.split()[:4] for line in text.splitlines() if line[:1].isdigit()]
    assert rows == [["2", "Task", "2", "normal"], ["3", "Task", "3", "low"]]  # the unfinished ones, plan order
    every = _text(render_status(data, all_tasks=True))
    assert [line.split()[0] for line in every.splitlines() if line[:1].isdigit()] == ["1", "2", "3"]
    assert "not shown" not in every
    assert "Which port?" in text
    assert "$0.7500 over 2 sessions" in text


def test_status_of_an_unknown_run(store: SqliteStore, db_path: Path) -> None:
    with pytest.raises(NotFoundError, match="ghost"):
        _status(db_path, "ghost")
