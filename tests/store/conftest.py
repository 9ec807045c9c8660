"""Fixtures for the store tests: a real SQLite file per test, a small plan, table dumps, faults.

The suite runs with --import-mode=importlib, so helpers are handed out as fixtures, not imported.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pm_agent.plan.models import Dependency, Plan, Task, Tier
from pm_agent.store import SqliteStore, open_store
from pm_agent.testing.clock import TickClock

Dump = dict[str, list[tuple[Any, ...]]]
PlanFactory = Callable[..., Plan]


def _make_plan(*ids: str, plan_id: str = "demo") -> Plan:
    """A plan with tasks `ids` (default 1, 2, 3), each depending on the one before."""
    ids = ids or ("1", "2", "3")
    tiers = [Tier.CRITICAL, Tier.NORMAL, Tier.LOW]
    tasks = [
        Task(
            id=task_id,
            title=f"Task {task_id}",
            tier=tiers[n % 3],
            ownership=f"module{n}",
            acceptance_criteria=[f"criterion of {task_id}"],
            depends_on=[Dependency(task_id=ids[n - 1])] if n else [],
            decision_log=[f"parsed {task_id}"],
        )
        for n, task_id in enumerate(ids)
    ]
    return Plan(plan_id=plan_id, path="docs/plans/plan.md", design_path="docs/plans/design.md", tasks=tasks)


def _dump_db(path: Path) -> Dump:
    """Every row of every table, through a plain sqlite3 connection (not the store's code)."""
    con = sqlite3.connect(path)
    try:
        query = "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
        names = [r[0] for r in con.execute(query)]
        return {name: con.execute(f'SELECT * FROM "{name}" ORDER BY rowid').fetchall() for name in names}
    finally:
        con.close()


@pytest.fixture
def make_plan() -> PlanFactory:
    """Build a Plan from task ids, straight from pm_agent.plan.models."""
    return _make_plan


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / ".pm-agent" / "state.db"


@pytest.fixture
def dump(db_path: Path) -> Callable[[], Dump]:
    """Dump every table of the test's database, to compare before and after a failed write."""
    return lambda: _dump_db(db_path)


@pytest.fixture
def store(db_path: Path) -> Iterator[SqliteStore]:
    with open_store(db_path, clock=TickClock()) as opened:
        yield opened


@pytest.fixture
def run_id(store: SqliteStore) -> str:
    run = store.create_run(
        _make_plan(),
        baseline_sha="a" * 40,
        working_branch="pm/demo",
        shared_context={"project_name": "demo"},
        config={"max_parallel": 3},
        run_id="run1",
    )
    return run.id


@pytest.fixture
def faulty_store(db_path: Path) -> Iterator[tuple[SqliteStore, Callable[[str | None], None]]]:
    """A store whose write transactions raise RuntimeError("fault at <point>") at the armed fault
    point; arm(None) disarms."""
    armed: list[str | None] = [None]

    def hook(name: str) -> None:
        if name == armed[0]:
            raise RuntimeError(f"fault at {name}")

    def arm(name: str | None) -> None:
        armed[0] = name

    with open_store(db_path, clock=TickClock(), fault=hook) as opened:
        yield opened, arm
