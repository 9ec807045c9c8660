"""Versioned schema: blank database, upgrade from an older version, concurrent first open."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import UniqueConstraint, inspect, text

from pm_agent.errors import StoreError
from pm_agent.store import open_store, schema
from pm_agent.store.database import read_txn, sqlite_engine, write_txn, writer
from pm_agent.store.migrations import MIGRATIONS, migrate, migration_names
from pm_agent.store.runs import create_run_txn

NOW = datetime(2026, 2, 18, 9, 0, tzinfo=UTC)


def test_blank_database_gets_every_migration(db_path: Path) -> None:
    with open_store(db_path) as store:
        assert store.applied_migrations() == migration_names()
        assert store.schema_version() == len(MIGRATIONS) >= 2
    assert db_path.exists()


def test_migrated_schema_matches_schema_module(db_path: Path) -> None:
    with open_store(db_path) as store:
        insp = inspect(store.engine)
        assert set(insp.get_table_names()) == set(schema.metadata.tables)
        for name, table in schema.metadata.tables.items():
            columns = {c["name"]: c for c in insp.get_columns(name)}
            assert list(columns) == [c.name for c in table.columns], name
            for column in table.columns:
                assert columns[column.name]["nullable"] == column.nullable, f"{name}.{column.name}"
            assert insp.get_pk_constraint(name)["constrained_columns"] == [c.name for c in table.primary_key]
            uniques = {tuple(u["column_names"]) for u in insp.get_unique_constraints(name)}
            expected = {
                tuple(c.name for c in u.columns) for u in table.constraints if isinstance(u, UniqueConstraint)
            }
            expected |= {(c.name,) for c in table.columns if c.unique}
            assert uniques == expected, name
            fks = {
                (tuple(f["constrained_columns"]), f["referred_table"]) for f in insp.get_foreign_keys(name)
            }
            want = {
                (tuple(fk.column_keys), next(iter(fk.elements)).column.table.name)
                for fk in table.foreign_key_constraints
            }
            assert fks == want, name
            indexes = {(i["name"], tuple(i["column_names"])) for i in insp.get_indexes(name)}
            assert indexes == {(str(i.name), tuple(c.name for c in i.columns)) for i in table.indexes}, name


def test_every_connection_is_configured(db_path: Path) -> None:
    with open_store(db_path) as store, read_txn(store.engine) as conn:
        pragma = {
            name: conn.exec_driver_sql(f"PRAGMA {name}").scalar()
            for name in ("journal_mode", "synchronous", "foreign_keys", "busy_timeout")
        }
    assert pragma == {"journal_mode": "wal", "synchronous": 2, "foreign_keys": 1, "busy_timeout": 10000}


def test_write_transactions_take_the_write_lock_up_front(db_path: Path) -> None:
    with open_store(db_path) as store:
        with write_txn(writer(store.engine)) as conn:
            # BEGIN IMMEDIATE holds the RESERVED lock before any write: another writer must wait
            other = sqlite3.connect(db_path, timeout=0)
            try:
                with pytest.raises(sqlite3.OperationalError, match="locked"):
                    other.execute("BEGIN IMMEDIATE")
            finally:
                other.close()
            conn.execute(text("SELECT 1"))
        with read_txn(store.engine):
            other = sqlite3.connect(db_path, timeout=0)
            try:
                other.execute("BEGIN IMMEDIATE")  # a reader never blocks a writer (WAL)
                other.execute("ROLLBACK")
            finally:
                other.close()


def test_upgrade_from_version_1_keeps_data(db_path: Path, make_plan: Callable[..., Any]) -> None:
    first = migration_names()[0]
    engine = sqlite_engine(db_path)
    try:
        assert migrate(engine, now=NOW, upto=first) == [first]
        assert not inspect(engine).has_table("sessions")
        with write_txn(writer(engine)) as conn:
            create_run_txn(
                conn, make_plan(), baseline_sha="b" * 40, working_branch="pm/demo",
                shared_context={"project_name": "old"}, config={}, now=NOW, run_id="old",
            )  # fmt: skip
    finally:
        engine.dispose()

    with open_store(db_path) as store:
        assert store.applied_migrations() == migration_names()
        run = store.get_run("old")
        assert run.shared_context == {"project_name": "old"}
        assert run.created_at == NOW
        assert [t.task_id for t in store.list_tasks("old")] == ["1", "2", "3"]
        assert [e.kind for e in store.events("old")] == ["run.created"]
        # the tables of the later migrations work with the old data
        session = store.create_session("old", "1", "developer", 1, "tok", "claude", "/w")
        assert store.list_sessions("old") == [session]


def test_reopening_applies_nothing(db_path: Path) -> None:
    open_store(db_path).close()
    engine = sqlite_engine(db_path)
    try:
        assert migrate(engine, now=NOW) == []
    finally:
        engine.dispose()
    con = sqlite3.connect(db_path)
    try:
        assert con.execute("SELECT count(*) FROM migrations").fetchone() == (len(MIGRATIONS),)
    finally:
        con.close()


def test_database_from_a_newer_pm_agent_is_refused(db_path: Path) -> None:
    open_store(db_path).close()
    con = sqlite3.connect(db_path)
    try:
        con.execute("INSERT INTO migrations (name, applied_at) VALUES ('999_future', '2030-01-01 00:00:00')")
        con.commit()
    finally:
        con.close()
    with pytest.raises(StoreError, match="999_future"):
        open_store(db_path)


def test_unknown_target_migration_is_refused(db_path: Path) -> None:
    engine = sqlite_engine(db_path)
    try:
        with pytest.raises(StoreError, match="unknown migration"):
            migrate(engine, now=NOW, upto="nope")
    finally:
        engine.dispose()


OPEN_SCRIPT = """
import sys, time
from pm_agent.store import open_store
start = float(sys.argv[2])
while time.time() < start:
    time.sleep(0.001)
open_store(sys.argv[1]).close()
"""


@pytest.mark.parametrize("round_", range(3))
def test_concurrent_first_open_migrates_once(db_path: Path, round_: int) -> None:
    """Four processes open a fresh store at the same moment (one of them sometimes got "database is locked"
    from the switch to WAL before `apply_pragmas` retried it): all succeed, the migrations run once."""
    import time

    start = str(time.time() + 1.0)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", OPEN_SCRIPT, str(db_path), start], stderr=subprocess.PIPE, text=True
        )
        for _ in range(4)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
    con = sqlite3.connect(db_path)
    try:
        names = [r[0] for r in con.execute("SELECT name FROM migrations ORDER BY id")]
    finally:
        con.close()
    assert names == migration_names()
