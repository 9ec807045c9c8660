"""`get_task` hands back the record it built for a row read unchanged: it must equal the record built afresh.

The cache (`_fast_queries._TASK_CACHE`) is keyed by run and task id; these tests change every column of a task
in many ways (through the store and behind its back, in two store files with the same run id) and compare each
read with the record built from the row by `Columns.record`, the uncached path.
"""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pm_agent.lifecycle import IssueState
from pm_agent.plan.models import Plan, TaskStatus, Tier
from pm_agent.store import SqliteStore, TaskRecord, open_store
from pm_agent.store import _fast_queries as fq
from pm_agent.testing.clock import TickClock


def _fresh(path: Path, run_id: str, task_id: str) -> TaskRecord:
    """The record built from the row as stored, without the cache."""
    con = sqlite3.connect(path)
    try:
        row = con.execute(f"{fq.TASKS.select} WHERE run_id = ? AND task_id = ?", (run_id, task_id)).fetchone()
    finally:
        con.close()
    return fq.TASKS.record(row, TaskRecord)


def _same(a: TaskRecord, b: TaskRecord) -> None:
    assert a == b
    assert a.model_dump(mode="json") == b.model_dump(mode="json")


def _behind_its_back(path: Path, run_id: str, task_id: str, rnd: random.Random) -> None:
    """One column changed by another connection (another process would do the same)."""
    column, value = rnd.choice(
        [
            ("title", f"title {rnd.randint(0, 3)}"),
            ("state", rnd.choice([s.value for s in IssueState])),
            ("status", rnd.choice([s.value for s in TaskStatus])),
            ("tier", rnd.choice([t.value for t in Tier])),
            ("retry_count", rnd.randint(0, 2)),
            ("attempt", rnd.randint(0, 2)),
            ("commit_sha", rnd.choice([None, "b" * 40, "c" * 40])),
            ("decision_log", json.dumps([f"line {rnd.randint(0, 2)}"])),
            ("artifacts", json.dumps(rnd.choice([[], ["a.md"], ["a.md", "b.md"]]))),
            ("review_notes", json.dumps(rnd.choice([None, {"summary": "ok"}, ["x"]]))),
            ("workflow_context", json.dumps({"current_state": rnd.choice(["received", "implementing"])})),
            ("duration_ms", rnd.choice([None, 5, 6])),
            ("updated_at", f"2026-01-02 03:04:0{rnd.randint(0, 3)}.000000"),
        ]
    )
    con = sqlite3.connect(path)
    try:
        with con:
            con.execute(f"UPDATE tasks SET {column} = ? WHERE run_id = ? AND task_id = ?", (value, run_id, task_id))
    finally:
        con.close()


def _through_the_store(store: SqliteStore, run_id: str, task_id: str, rnd: random.Random) -> None:
    """One write of the store's own, with a few columns changed (sometimes to what they were)."""
    fields = rnd.choice(
        [
            {"retry_count": rnd.randint(0, 2)},
            {"attempt": rnd.randint(0, 2), "started_at": datetime(2026, 1, 2, tzinfo=UTC)},
            {"decision_log": [f"d{rnd.randint(0, 2)}"]},
            {"review_notes": {"summary": rnd.choice(["ok", "no"])}},
            {"commit_sha": rnd.choice(["d" * 40, "e" * 40]), "artifacts": ["x.md"]},
        ]
    )
    store.update_task(run_id, task_id, event="task.touched", **fields)


def test_every_read_equals_the_record_built_afresh(tmp_path: Path, make_plan: Callable[..., Plan]) -> None:
    rnd = random.Random(11)
    paths = [tmp_path / "a" / "state.db", tmp_path / "b" / "state.db"]
    stores = [open_store(p, clock=TickClock()) for p in paths]
    try:
        for n, store in enumerate(stores):  # the same run id and task ids in both files, different contents
            store.create_run(
                make_plan("1", "2", "3"),
                baseline_sha="a" * 40,
                working_branch=f"pm/{n}",
                shared_context={},
                config={},
                run_id="run1",
            )
        changed = 0
        for _ in range(600):
            i = rnd.randrange(2)
            store, path, task_id = stores[i], paths[i], rnd.choice(["1", "2", "3"])
            before = store.get_task("run1", task_id)
            roll = rnd.random()
            if roll < 0.4:
                _behind_its_back(path, "run1", task_id, rnd)
            elif roll < 0.7:
                _through_the_store(store, "run1", task_id, rnd)
            # else: read unchanged, the cached record comes back
            read = store.get_task("run1", task_id)
            _same(read, _fresh(path, "run1", task_id))
            _same(store.get_task("run1", task_id), read)
            changed += read != before
        assert changed > 200  # the reads above did see changes, not only cached records
    finally:
        for store in stores:
            store.close()


def test_a_changed_row_is_read_again_even_within_the_same_second(
    tmp_path: Path, make_plan: Callable[..., Plan]
) -> None:
    path = tmp_path / "state.db"
    with open_store(path, clock=TickClock(step=timedelta(0))) as store:  # updated_at does not move
        store.create_run(
            make_plan("1"), baseline_sha="a" * 40, working_branch="pm/x", shared_context={}, config={}, run_id="r"
        )
        first = store.get_task("r", "1")
        store.update_task("r", "1", event="task.touched", retry_count=2)
        again = store.get_task("r", "1")
        assert first.retry_count == 0
        assert again.retry_count == 2
        assert again.updated_at == first.updated_at
        _same(again, _fresh(path, "r", "1"))


def test_the_cache_stays_bounded(tmp_path: Path, make_plan: Callable[..., Plan]) -> None:
    path = tmp_path / "state.db"
    ids = [str(n) for n in range(1, 40)]
    with open_store(path, clock=TickClock()) as store:
        for k in range(fq.TASK_CACHE_MAX // len(ids) + 2):
            store.create_run(
                make_plan(*ids), baseline_sha="a" * 40, working_branch=f"pm/{k}", shared_context={}, config={},
                run_id=f"run{k}",
            )  # fmt: skip
            for task_id in ids:
                _same(store.get_task(f"run{k}", task_id), _fresh(path, f"run{k}", task_id))
                assert len(fq._TASK_CACHE) <= fq.TASK_CACHE_MAX
