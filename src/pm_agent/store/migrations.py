"""Versioned schema: an ordered list of named migrations, recorded in the `migrations` table.

Each migration is a function of a connection inside the write transaction that applies it, and
defines the tables it creates *as they were at that version* (never import the current tables from
`schema.py` here: a later column added there would make an old migration create it, and the
migration that adds it fail). To change the schema: edit `schema.py`, then append a migration;
never edit or reorder a released one.

`migrate()` applies what is missing in one BEGIN IMMEDIATE transaction, so two processes opening a
fresh database at once apply each migration exactly once; a database that records a migration
this code does not know (made by a newer pm-agent) is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    Engine,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    Table,
    Text,
    UniqueConstraint,
    inspect,
    select,
)
from sqlalchemy.engine import Connection

from pm_agent.errors import StoreError
from pm_agent.store import schema
from pm_agent.store.database import read_txn, write_txn, writer

Migration = tuple[str, Callable[[Connection], None]]


def _meta() -> MetaData:
    return MetaData(naming_convention=schema.NAMING)


def _when() -> Column[datetime]:
    return Column("created_at", DateTime(timezone=True), nullable=False)


def _stub(md: MetaData, name: str, *keys: str) -> None:
    """A referenced table's key columns, so a foreign key compiles; the stub is never created."""
    Table(name, md, *(Column(key, Text if key != "id" else Integer, primary_key=True) for key in keys))


def _task_fk() -> ForeignKeyConstraint:
    return ForeignKeyConstraint(["run_id", "task_id"], ["tasks.run_id", "tasks.task_id"])


def _m001_runs_tasks_events(conn: Connection) -> None:
    md = _meta()
    Table(
        "runs",
        md,
        Column("id", Text, primary_key=True),
        Column("plan_id", Text, nullable=False),
        Column("plan_doc", Text, nullable=False),
        Column("design_doc", Text),
        Column("baseline_sha", Text, nullable=False),
        Column("current_sha", Text, nullable=False),
        Column("working_branch", Text, nullable=False),
        Column("shared_context", Text, nullable=False),
        Column("config", Text, nullable=False),
        Column("status", Text, nullable=False),
        Column("checkpoint_tags", Text, nullable=False),
        _when(),
        Column("updated_at", DateTime(timezone=True), nullable=False),
    )
    Table(
        "tasks",
        md,
        Column("run_id", Text, ForeignKey("runs.id"), primary_key=True),
        Column("task_id", Text, primary_key=True),
        Column("plan_order", Integer, nullable=False),
        Column("title", Text, nullable=False),
        Column("tier", Text, nullable=False),
        Column("status", Text, nullable=False),
        Column("state", Text, nullable=False),
        Column("ownership", Text, nullable=False),
        Column("contract", Text, nullable=False),
        Column("retry_count", Integer, nullable=False),
        Column("attempt", Integer, nullable=False),
        Column("iteration_count", Integer, nullable=False),
        Column("decision_log", Text, nullable=False),
        Column("artifacts", Text, nullable=False),
        Column("known_risks", Text, nullable=False),
        Column("review_notes", Text),
        Column("commit_sha", Text),
        Column("duration_ms", Integer),
        Column("workflow_context", Text, nullable=False),
        Column("started_at", DateTime(timezone=True)),
        Column("updated_at", DateTime(timezone=True), nullable=False),
    )
    Table(
        "transitions",
        md,
        Column("id", Integer, primary_key=True),
        Column("run_id", Text, nullable=False),
        Column("task_id", Text, nullable=False),
        Column("seq", Integer, nullable=False),
        Column("from_state", Text, nullable=False),
        Column("to_state", Text, nullable=False),
        Column("reason", Text, nullable=False),
        Column("iteration", Integer, nullable=False),
        _when(),
        _task_fk(),
        UniqueConstraint("run_id", "task_id", "seq"),
    )
    Table(
        "events",
        md,
        Column("id", Integer, primary_key=True),
        Column("run_id", Text, ForeignKey("runs.id"), nullable=False),
        Column("task_id", Text),
        Column("kind", Text, nullable=False),
        Column("payload", Text, nullable=False),
        _when(),
        Index(None, "run_id", "task_id"),
    )
    md.create_all(conn)


def _m002_sessions_signals(conn: Connection) -> None:
    md = _meta()
    _stub(md, "runs", "id")
    _stub(md, "tasks", "run_id", "task_id")
    Table(
        "sessions",
        md,
        Column("id", Integer, primary_key=True),
        Column("run_id", Text, nullable=False),
        Column("task_id", Text, nullable=False),
        Column("role", Text, nullable=False),
        Column("attempt", Integer, nullable=False),
        Column("token", Text, nullable=False, unique=True),
        Column("runner", Text, nullable=False),
        Column("agent_session_id", Text),
        Column("resumed_from", Integer, ForeignKey("sessions.id")),
        Column("status", Text, nullable=False),
        Column("pid", Integer),
        Column("exit_code", Integer),
        Column("workdir", Text, nullable=False),
        Column("started_at", DateTime(timezone=True), nullable=False),
        Column("last_output_at", DateTime(timezone=True)),
        Column("ended_at", DateTime(timezone=True)),
        Column("cost_usd", Float, nullable=False),
        Column("input_tokens", Integer, nullable=False),
        Column("output_tokens", Integer, nullable=False),
        Column("last_lines", Text, nullable=False),
        _task_fk(),
        Index(None, "run_id", "task_id"),
    )
    Table(
        "session_events",
        md,
        Column("id", Integer, primary_key=True),
        Column("session_id", Integer, ForeignKey("sessions.id"), nullable=False),
        Column("seq", Integer, nullable=False),
        Column("kind", Text, nullable=False),
        Column("payload", Text, nullable=False),
        _when(),
        UniqueConstraint("session_id", "seq"),
    )
    Table(
        "signals",
        md,
        Column("id", Integer, primary_key=True),
        Column("run_id", Text, ForeignKey("runs.id"), nullable=False),
        Column("task_id", Text, nullable=False),
        Column("session_id", Integer, ForeignKey("sessions.id")),
        Column("attempt", Integer, nullable=False),
        Column("seq", Integer, nullable=False),
        Column("kind", Text, nullable=False),
        Column("payload", Text, nullable=False),
        Column("accepted", Boolean, nullable=False),
        Column("reason", Text, nullable=False),
        Column("consumed", Boolean, nullable=False),
        _when(),
        UniqueConstraint("session_id", "seq"),
        Index(None, "run_id", "consumed"),
    )
    md.create_all(conn, tables=[md.tables[n] for n in ("sessions", "session_events", "signals")])


def _m003_gates_escalations_commits(conn: Connection) -> None:
    md = _meta()
    _stub(md, "runs", "id")
    _stub(md, "tasks", "run_id", "task_id")
    _stub(md, "sessions", "id")
    Table(
        "gate_results",
        md,
        Column("id", Integer, primary_key=True),
        Column("run_id", Text, nullable=False),
        Column("task_id", Text, nullable=False),
        Column("attempt", Integer, nullable=False),
        Column("gate", Text, nullable=False),
        Column("passed", Boolean, nullable=False),
        Column("evidence", Text, nullable=False),
        _when(),
        _task_fk(),
        Index(None, "run_id", "task_id", "attempt"),
    )
    Table(
        "escalations",
        md,
        Column("id", Integer, primary_key=True),
        Column("run_id", Text, ForeignKey("runs.id"), nullable=False),
        Column("task_id", Text),
        Column("source", Text, nullable=False),
        Column("problem", Text, nullable=False),
        Column("impact", Text, nullable=False),
        Column("options", Text, nullable=False),
        Column("recommended", Text, nullable=False),
        Column("blocking", Boolean, nullable=False),
        Column("status", Text, nullable=False),
        Column("answer", Text),
        Column("session_id", Integer, ForeignKey("sessions.id")),
        _when(),
        Column("answered_at", DateTime(timezone=True)),
        _task_fk(),
        Index(None, "status"),
    )
    Table(
        "risks",
        md,
        Column("run_id", Text, ForeignKey("runs.id"), primary_key=True),
        Column("id", Text, primary_key=True),
        Column("description", Text, nullable=False),
        Column("severity", Text, nullable=False),
        Column("status", Text, nullable=False),
        Column("source_task", Text),
        _when(),
        Column("updated_at", DateTime(timezone=True), nullable=False),
    )
    Table(
        "commits",
        md,
        Column("id", Integer, primary_key=True),
        Column("run_id", Text, nullable=False),
        Column("task_id", Text, nullable=False),
        Column("sha", Text, nullable=False),
        Column("branch", Text, nullable=False),
        Column("message", Text, nullable=False),
        _when(),
        _task_fk(),
        UniqueConstraint("run_id", "task_id"),
    )
    Table(
        "reports",
        md,
        Column("id", Integer, primary_key=True),
        Column("run_id", Text, ForeignKey("runs.id"), nullable=False),
        Column("kind", Text, nullable=False),
        Column("text", Text, nullable=False),
        _when(),
    )
    names = ("gate_results", "escalations", "risks", "commits", "reports")
    md.create_all(conn, tables=[md.tables[n] for n in names])


def _m004_outbox(conn: Connection) -> None:
    md = _meta()
    _stub(md, "runs", "id")
    Table(
        "outbox",
        md,
        Column("id", Integer, primary_key=True),
        Column("run_id", Text, ForeignKey("runs.id"), nullable=False),
        Column("key", Text, nullable=False, unique=True),
        Column("kind", Text, nullable=False),
        Column("payload", Text, nullable=False),
        _when(),
        Column("sent_at", DateTime(timezone=True)),
        Column("attempts", Integer, nullable=False),
        Column("last_error", Text),
        Index(None, "sent_at"),
    )
    Table(
        "bridge_state",
        md,
        Column("key", Text, primary_key=True),
        Column("value", Text, nullable=False),
        Column("updated_at", DateTime(timezone=True), nullable=False),
    )
    md.create_all(conn, tables=[md.tables["outbox"], md.tables["bridge_state"]])


def _m005_task_order_index(conn: Connection) -> None:
    md = _meta()
    tasks = Table("tasks", md, Column("run_id", Text), Column("task_id", Text), Column("plan_order", Integer))
    Index(None, tasks.c.run_id, tasks.c.plan_order, tasks.c.task_id).create(conn)


def _m006_task_changes(conn: Connection) -> None:
    md = _meta()
    changes = Table(
        "task_changes",
        md,
        Column("seq", Integer, primary_key=True),
        Column("run_id", Text, nullable=False),
        Column("task_id", Text, nullable=False),
        UniqueConstraint("run_id", "task_id"),
        sqlite_autoincrement=True,  # a seq is never handed out twice, even after the last row's delete
    )
    changes.create(conn)
    # Delete-then-insert, not INSERT OR REPLACE: a trigger's conflict clause gives way to the outer statement's.
    touch = (
        "DELETE FROM task_changes WHERE run_id = {row}.run_id AND task_id = {row}.task_id; "
        "INSERT INTO task_changes (run_id, task_id) VALUES ({row}.run_id, {row}.task_id);"
    )
    for name, event, rows in (("insert", "INSERT", ("new",)), ("update", "UPDATE", ("old", "new")),
                              ("delete", "DELETE", ("old",))):  # fmt: skip
        body = " ".join(touch.format(row=row) for row in rows)
        conn.exec_driver_sql(f"CREATE TRIGGER task_changes_{name} AFTER {event} ON tasks BEGIN {body} END")


MIGRATIONS: list[Migration] = [
    ("001_runs_tasks_events", _m001_runs_tasks_events),
    ("002_sessions_signals", _m002_sessions_signals),
    ("003_gates_escalations_commits", _m003_gates_escalations_commits),
    ("004_outbox", _m004_outbox),
    ("005_task_order_index", _m005_task_order_index),
    ("006_task_changes", _m006_task_changes),
]


def migration_names() -> list[str]:
    """Every known migration, in order; the schema version is how many of them a database has."""
    return [name for name, _ in MIGRATIONS]


def _applied(conn: Connection) -> list[str]:
    if not inspect(conn).has_table(schema.migrations.name):
        return []
    return list(conn.scalars(select(schema.migrations.c.name).order_by(schema.migrations.c.id)))


def applied_migrations(engine: Engine) -> list[str]:
    """Names of the migrations this database records, in the order they were applied."""
    with read_txn(engine) as conn:
        return _applied(conn)


def _pending(applied: list[str], upto: str | None) -> list[Migration]:
    known = migration_names()
    unknown = [name for name in applied if name not in known]
    if unknown:
        raise StoreError(f"database has migrations this pm-agent does not know: {', '.join(unknown)}")
    if upto is not None and upto not in known:
        raise StoreError(f"unknown migration {upto!r}")
    stop = known.index(upto) + 1 if upto is not None else len(known)
    return [m for m in MIGRATIONS[:stop] if m[0] not in applied]


def migrate(engine: Engine, *, now: datetime, upto: str | None = None) -> list[str]:
    """Apply every missing migration (up to and including `upto`); return the names applied now."""
    if not _pending(applied_migrations(engine), upto):
        return []  # the common case: no write lock taken
    with write_txn(writer(engine)) as conn:
        schema.migrations.create(conn, checkfirst=True)
        todo = _pending(_applied(conn), upto)  # again, under the lock: another process may have won
        for name, apply in todo:
            apply(conn)
            conn.execute(schema.migrations.insert().values(name=name, applied_at=now))
    return [name for name, _ in todo]
