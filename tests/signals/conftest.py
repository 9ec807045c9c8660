"""Shared fixtures: a real store file with one run (tasks 3 and 4) and sessions on it."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pm_agent.plan.models import Plan, Task
from pm_agent.signals import new_token
from pm_agent.store import open_store
from pm_agent.store.database import read_txn
from pm_agent.store.records import SessionRecord, SessionStatus, SignalRecord
from pm_agent.store.sessions import signals_for_task
from pm_agent.store.sqlite import SqliteStore

COMPLETE: dict[str, Any] = {
    "signal": "complete",
    "stepId": "3",
    "summary": "Added the login endpoint.",
    "filesCreated": ["src/app/login.py"],
    "testEvidence": ["4 passed in 0.12s"],
    "criteriaMapping": [{"criterion": "POST /login returns a token", "location": "src/app/login.py:12"}],
    "reviewNote": {"summary": "New endpoint.", "risks": [], "rollback": "revert the commit"},
    "testsClaimedPassing": True,
}


@dataclass
class World:
    """A store file with one run (tasks 3 and 4) and a helper to add sessions."""

    db: Path
    store: SqliteStore
    run_id: str

    def session(self, role: str = "developer", task_id: str = "3", attempt: int = 1) -> SessionRecord:
        session = self.store.create_session(
            self.run_id, task_id, role, attempt, new_token(), "claude", str(self.db.parent)
        )
        return self.store.update_session(session.id, status=SessionStatus.RUNNING)

    def signals(self, session: SessionRecord) -> list[SignalRecord]:
        """Read through a fresh store object: what is in the file, not what a cache holds."""
        with open_store(self.db) as store:
            return store.signals_for_session(session.id)

    def task_signals(self, task_id: str) -> list[SignalRecord]:
        with open_store(self.db) as store, read_txn(store.engine) as conn:
            return signals_for_task(conn, self.run_id, task_id)


@pytest.fixture
def complete() -> dict[str, Any]:
    """A valid complete signal for task 3 with seed 001's evidence."""
    return copy.deepcopy(COMPLETE)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    db = tmp_path / ".pm-agent" / "state.db"
    plan = Plan(
        plan_id="plan-1",
        path="docs/plan.md",
        tasks=[Task(id="3", title="Login endpoint"), Task(id="4", title="Logout endpoint")],
    )
    with open_store(db) as store:
        run = store.create_run(
            plan, baseline_sha="0" * 40, working_branch="pm/plan-1", shared_context={}, config={}
        )
        yield World(db, store, run.id)
