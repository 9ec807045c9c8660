"""The store's journal of task changes: the rows changed since a look, for every writer, deletions included."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pm_agent.errors import NotFoundError
from pm_agent.store import SqliteStore, open_store
from pm_agent.store.database import sqlite_engine, write_txn, writer
from pm_agent.store.migrations import migrate, migration_names
from pm_agent.store.runs import create_run_txn
from pm_agent.testing.clock import TickClock


def shell(db: Path, sql: str, *args: object) -> None:
    """A write from another connection, as sqlite3 in a shell would make it: pm-agent's code nowhere."""
    with sqlite3.connect(db) as conn:
        conn.execute(sql, args)


def ids(rows: list[Any]) -> list[str]:
    return [row[0] for row in rows]


def test_every_row_then_only_what_changed_since(store: SqliteStore, run_id: str, db_path: Path) -> None:
    first = store.task_row_changes(run_id, None)
    assert first.rows == store.task_row_values(run_id)
    assert ids(first.rows) == ["1", "2", "3"]
    assert first.gone is None  # every row read: a missing one is told by its absence
    nothing = store.task_row_changes(run_id, first.seq)
    assert (nothing.rows, nothing.gone, nothing.seq) == ([], [], first.seq)

    store.update_task(run_id, "3", event="test", review_notes="pm-agent's own write")
    shell(db_path, "update tasks set retry_count = 7 where task_id = '2'")
    changed = store.task_row_changes(run_id, first.seq)
    assert ids(changed.rows) == ["2", "3"], "plan order, whoever wrote"
    assert changed.rows[0] == store.task_row_values(run_id)[1]
    assert changed.rows[0][5] == 7
    assert changed.seq > first.seq
    assert store.task_row_changes(run_id, changed.seq).rows == []
    asked = store.task_row_changes(run_id, changed.seq, also={"1", "2"})
    assert ids(asked.rows) == ["1", "2"], "rows asked for are read changed or not"


def test_a_deleted_task_is_named_and_an_inserted_one_read(store: SqliteStore, run_id: str, db_path: Path) -> None:
    seq = store.task_row_changes(run_id, None).seq
    shell(db_path, "delete from tasks where task_id = '2'")
    shell(
        db_path,
        "insert into tasks select run_id, '9', 9, title, tier, status, state, ownership, contract, retry_count,"
        " attempt, iteration_count, decision_log, artifacts, known_risks, review_notes, commit_sha, duration_ms,"
        " workflow_context, started_at, updated_at from tasks where task_id = '1'",
    )
    shell(db_path, "update tasks set task_id = '7' where task_id = '3'")  # a task renamed: one gone, one new
    changed = store.task_row_changes(run_id, seq)
    assert changed.gone == ["2", "3"]
    assert ids(changed.rows) == ["7", "9"]  # plan order: 7 keeps the 3rd place


def test_a_seq_is_never_handed_out_twice(store: SqliteStore, run_id: str, db_path: Path) -> None:
    """The latest change's journal row is replaced by the next change of the same task: its seq must still grow
    (a rowid reused would hide the second change from a look that saw the first)."""
    store.update_task(run_id, "3", event="test", review_notes="one")
    seen = store.task_row_changes(run_id, None).seq
    store.update_task(run_id, "3", event="test", review_notes="two")
    assert ids(store.task_row_changes(run_id, seen).rows) == ["3"]


def test_without_the_journals_triggers_every_row_is_read(store: SqliteStore, run_id: str, db_path: Path) -> None:
    seq = store.task_row_changes(run_id, None).seq
    shell(db_path, "drop trigger task_changes_update")
    shell(db_path, "update tasks set retry_count = 7 where task_id = '2'")  # no journal row for this change
    changed = store.task_row_changes(run_id, seq)
    assert ids(changed.rows) == ["1", "2", "3"]
    assert changed.gone is None


def test_another_runs_changes_and_an_unknown_run(
    store: SqliteStore, run_id: str, make_plan: Callable[..., Any]
) -> None:
    seq = store.task_row_changes(run_id, None).seq
    other = store.create_run(
        make_plan("30", "4", "200"),
        baseline_sha="b" * 40,
        working_branch="pm/other",
        shared_context={},
        config={},
        run_id="run2",
    )
    assert store.task_row_changes(run_id, seq).rows == []
    assert ids(store.task_row_changes(other.id, seq).rows) == ["30", "4", "200"]
    seq = store.task_row_changes(other.id, seq).seq
    for task_id in ("200", "4", "30"):
        store.update_task(other.id, task_id, event="test", review_notes="in another order")
    asked = store.task_row_changes(other.id, seq, also={"4"})
    assert ids(asked.rows) == ["30", "4", "200"], "plan order, not the order of the writes or of the ids"
    with pytest.raises(NotFoundError, match="nope"):
        store.task_row_changes("nope", seq)


def test_a_database_from_before_the_journal_gets_it(db_path: Path, make_plan: Callable[..., Any]) -> None:
    before = migration_names()[migration_names().index("006_task_changes") - 1]
    engine = sqlite_engine(db_path)
    now = datetime(2026, 1, 1, tzinfo=UTC)
    try:
        migrate(engine, now=now, upto=before)
        with write_txn(writer(engine)) as conn:
            create_run_txn(
                conn, make_plan(), baseline_sha="b" * 40, working_branch="pm/demo",
                shared_context={}, config={}, now=now, run_id="old",
            )  # fmt: skip
    finally:
        engine.dispose()
    with open_store(db_path, clock=TickClock()) as store:
        seq = store.task_row_changes("old", None).seq
        assert seq == 0  # the rows written before the journal have no entry: the first look reads every row
        store.update_task("old", "2", event="test", review_notes="after the upgrade")
        assert ids(store.task_row_changes("old", seq).rows) == ["2"]
