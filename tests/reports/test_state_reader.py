"""The stdlib reader behind `status` and `log` gives what the Store API gives, on the same file, and writes nothing."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pm_agent.errors import NotFoundError, StoreError
from pm_agent.lifecycle.states import IssueState
from pm_agent.plan.fields import normalize_task_id
from pm_agent.plan.models import TaskStatus, Tier
from pm_agent.reports import state_reader as sr
from pm_agent.reports.progress import TIERS, render_progress
from pm_agent.reports.progress_data import BLOCKED_STATES, file_progress_data
from pm_agent.reports.status import TASK_COLUMNS, render_task_log, status_data
from pm_agent.statefile import default_store_path
from pm_agent.store import EscalationStatus, RiskStatus, SessionStatus, SqliteStore
from pm_agent.store import default_store_path as store_default_path

Reopen = Callable[[Path], SqliteStore]


def _files(db: Path) -> dict[str, bytes]:
    """Every file of the state folder with its bytes (-shm: only that it is there, as readers mark it)."""
    return {p.name: b"" if p.name.endswith("-shm") else p.read_bytes() for p in sorted(db.parent.iterdir())}


def test_the_copied_constants_match_their_sources() -> None:
    assert list(sr.TASK_STATUSES) == [s.value for s in TaskStatus]
    assert set(BLOCKED_STATES) <= {s.value for s in IssueState}
    assert list(TIERS) == [Tier.CRITICAL.value, Tier.NORMAL.value, Tier.LOW.value]
    assert default_store_path(Path("/r")) == store_default_path(Path("/r")) == Path("/r/.pm-agent/state.db")
    for raw in ("3", "task-07", "Task 3", "TASK_3a", " task-12 ", "3a", "tasks"):
        assert sr.normalize_task_id(raw) == normalize_task_id(raw), raw


def test_status_data_is_the_stores_view(busy: Any, reopen: Reopen) -> None:
    before = _files(busy.db)
    data = sr.read_state(busy.db, status_data)
    assert _files(busy.db) == before, "reading wrote something"
    store = reopen(busy.db)
    try:
        run = store.get_run(busy.run_id)
        tasks = store.list_tasks(busy.run_id)
        sessions = store.list_sessions(busy.run_id)
        assert data["run"] == run.model_dump(mode="json")
        assert data["runs"] == [
            r.model_dump(mode="json", include={"id", "plan_id", "status", "created_at", "updated_at"})
            for r in store.list_runs()
        ]
        assert data["tasks"] == [t.model_dump(mode="json", include=set(TASK_COLUMNS)) for t in tasks]
        assert data["open_escalations"] == [
            e.model_dump(mode="json") for e in store.list_escalations(busy.run_id, EscalationStatus.OPEN)
        ]
        assert data["cost"] == {
            "usd": round(sum(s.cost_usd for s in sessions), 6),
            "input_tokens": sum(s.input_tokens for s in sessions),
            "output_tokens": sum(s.output_tokens for s in sessions),
            "sessions": len(sessions),
            "live_sessions": sum(1 for s in sessions if s.status in (SessionStatus.STARTING, SessionStatus.RUNNING)),
        }
        assert data["open_risks"] == len(store.list_risks(busy.run_id, RiskStatus.OPEN)) == 2
        assert data["counts"]["status"] == {s.value: sum(1 for t in tasks if t.status is s) for s in TaskStatus}
        assert data["counts"]["state"] == {
            state: sum(1 for t in tasks if t.state == state) for state in {t.state.value for t in tasks}
        }
        assert (data["counts"]["total"], data["counts"]["done"]) == (6, 1)
        assert data["by_status"]["pending"] == ["3", "6"]
        assert data["by_state"]["received"] == ["3", "6"]
        progress = sr.read_state(busy.db, lambda con: file_progress_data(con, busy.run_id, "demo"))
        assert [(t.task_id, t.status, t.state) for t in progress.tasks] == [
            (t.task_id, t.status, t.state) for t in tasks
        ]
        assert "task-3: depends on blocked task-2" in render_progress(progress)
    finally:
        store.close()


def test_task_log_is_the_stores_history(busy: Any, reopen: Reopen) -> None:
    before = _files(busy.db)
    logs = {task: sr.read_state(busy.db, lambda con, t=task: sr.task_log(con, busy.run_id, t)) for task in "125"}
    assert _files(busy.db) == before
    store = reopen(busy.db)
    try:
        for task, entries in logs.items():
            history = store.task_history(busy.run_id, task)
            assert [(e.at, e.source, e.kind, e.summary) for e in entries] == [
                (h.at, h.source, h.kind, h.summary) for h in history
            ], task
            assert render_task_log(entries) == render_task_log(history)
    finally:
        store.close()
    kinds = [e.kind for e in logs["1"]]
    assert {"transition", "session.started", "signal.complete", "signal.needs-user-input", "gate"} <= set(kinds)
    assert {"dispatch.prompt", "agent.note", "session.updated"} <= set(kinds)
    assert "task.transition" not in kinds  # mirrored events stay out, as in the store's history


def test_unknown_run_or_task_is_not_found(busy: Any) -> None:
    with pytest.raises(NotFoundError, match="unknown task '9' in run 'run-x'"):
        sr.read_state(busy.db, lambda con: sr.task_log(con, busy.run_id, "9"))
    with pytest.raises(NotFoundError, match="unknown run 'ghost'"):
        sr.read_state(busy.db, lambda con: sr.task_log(con, "ghost", "1"))
    with pytest.raises(NotFoundError, match="unknown run 'ghost'"):
        sr.read_state(busy.db, lambda con: status_data(con, "ghost"))


def test_a_live_writer_is_read_through_its_wal_and_nothing_is_added(busy: Any, reopen: Reopen) -> None:
    store = reopen(busy.db)  # a run holding the file open: -wal and -shm exist
    try:
        store.update_task(busy.run_id, "3", event="task.updated", attempt=4)  # committed, still in the WAL
        assert {p.name for p in busy.db.parent.iterdir()} >= {"state.db-wal", "state.db-shm"}
        before = _files(busy.db)
        data = sr.read_state(busy.db, status_data)
        assert _files(busy.db) == before
        assert next(t for t in data["tasks"] if t["task_id"] == "3")["attempt"] == 4
    finally:
        store.close()


def test_a_writer_arriving_during_an_immutable_read_makes_it_read_again(busy: Any, reopen: Reopen) -> None:
    calls: list[int] = []

    def read(con: sqlite3.Connection) -> int:
        if not calls:  # the first read is the immutable one; a run starts and commits meanwhile
            with reopen(busy.db) as store:
                store.update_task(busy.run_id, "3", event="task.updated", attempt=7)
        calls.append(1)
        return int(
            con.execute("SELECT attempt FROM tasks WHERE run_id = ? AND task_id = '3'", (busy.run_id,)).fetchone()[0]
        )

    assert sr.read_state(busy.db, read) == 7
    assert len(calls) == 2


def test_a_read_that_fails_while_a_writer_changes_the_file_is_read_again(busy: Any, reopen: Reopen) -> None:
    calls: list[int] = []

    def read(con: sqlite3.Connection) -> list[str]:
        calls.append(1)
        if len(calls) == 1:  # as a torn read might: the file changes under it and it fails
            with reopen(busy.db) as store:
                store.update_task(busy.run_id, "3", event="task.updated", attempt=9)
            raise NotFoundError("torn")
        return [t["task_id"] for t in sr.task_rows(con, busy.run_id) if t["attempt"] == 9]

    assert sr.read_state(busy.db, read) == ["3"]
    assert len(calls) == 2


def test_a_read_that_fails_on_an_unchanged_file_fails_once(busy: Any) -> None:
    calls: list[int] = []

    def read(con: sqlite3.Connection) -> None:
        calls.append(1)
        raise NotFoundError("unchanged")

    with pytest.raises(NotFoundError, match="unchanged"):
        sr.read_state(busy.db, read)
    assert len(calls) == 1


def test_a_file_that_is_no_database_is_a_store_error(tmp_path: Path) -> None:
    bad = tmp_path / "state.db"
    bad.write_text("not a database", encoding="utf-8")
    with pytest.raises(StoreError, match="cannot read"):
        sr.read_state(bad, status_data)
    assert bad.read_text(encoding="utf-8") == "not a database"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.db"]
