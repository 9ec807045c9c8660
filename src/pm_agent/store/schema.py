"""The current tables, as SQLAlchemy Core objects that queries use.

The DDL that creates them lives in `migrations.py`, frozen per version; a test checks that a
migrated database has exactly these tables and columns. To change the schema, change this file AND
append a migration.
"""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    Table,
    Text,
    UniqueConstraint,
)

from pm_agent.store.types import JsonText, UtcDateTime

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "fk": "fk_%(table_name)s_%(column_0_N_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING)


def _task_fk() -> ForeignKeyConstraint:
    return ForeignKeyConstraint(["run_id", "task_id"], ["tasks.run_id", "tasks.task_id"])


migrations = Table(
    "migrations",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", Text, nullable=False, unique=True),
    Column("applied_at", UtcDateTime, nullable=False),
)

runs = Table(
    "runs",
    metadata,
    Column("id", Text, primary_key=True),
    Column("plan_id", Text, nullable=False),
    Column("plan_doc", Text, nullable=False),
    Column("design_doc", Text),
    Column("baseline_sha", Text, nullable=False),
    Column("current_sha", Text, nullable=False),
    Column("working_branch", Text, nullable=False),
    Column("shared_context", JsonText, nullable=False),
    Column("config", JsonText, nullable=False),
    Column("status", Text, nullable=False),
    Column("checkpoint_tags", JsonText, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
)

tasks = Table(
    "tasks",
    metadata,
    Column("run_id", Text, ForeignKey("runs.id"), primary_key=True),
    Column("task_id", Text, primary_key=True),
    Column("plan_order", Integer, nullable=False),
    Column("title", Text, nullable=False),
    Column("tier", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("state", Text, nullable=False),
    Column("ownership", Text, nullable=False),
    Column("contract", JsonText, nullable=False),
    Column("retry_count", Integer, nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("iteration_count", Integer, nullable=False),
    Column("decision_log", JsonText, nullable=False),
    Column("artifacts", JsonText, nullable=False),
    Column("known_risks", JsonText, nullable=False),
    Column("review_notes", JsonText),
    Column("commit_sha", Text),
    Column("duration_ms", Integer),
    Column("workflow_context", JsonText, nullable=False),
    Column("started_at", UtcDateTime),
    Column("updated_at", UtcDateTime, nullable=False),
    # Task ids in plan order from the index alone (migration 005): a row holds its contract and workflow
    # context inline and so fills a page of its own, and the loop lists every task's id after every task.
    Index(None, "run_id", "plan_order", "task_id"),
)

transitions = Table(
    "transitions",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", Text, nullable=False),
    Column("task_id", Text, nullable=False),
    Column("seq", Integer, nullable=False),
    Column("from_state", Text, nullable=False),
    Column("to_state", Text, nullable=False),
    Column("reason", Text, nullable=False),
    Column("iteration", Integer, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    _task_fk(),
    UniqueConstraint("run_id", "task_id", "seq"),
)

events = Table(
    "events",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", Text, ForeignKey("runs.id"), nullable=False),
    Column("task_id", Text),
    Column("kind", Text, nullable=False),
    Column("payload", JsonText, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Index(None, "run_id", "task_id"),
)

sessions = Table(
    "sessions",
    metadata,
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
    Column("started_at", UtcDateTime, nullable=False),
    Column("last_output_at", UtcDateTime),
    Column("ended_at", UtcDateTime),
    Column("cost_usd", Float, nullable=False),
    Column("input_tokens", Integer, nullable=False),
    Column("output_tokens", Integer, nullable=False),
    Column("last_lines", Text, nullable=False),
    _task_fk(),
    Index(None, "run_id", "task_id"),
)

session_events = Table(
    "session_events",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("session_id", Integer, ForeignKey("sessions.id"), nullable=False),
    Column("seq", Integer, nullable=False),
    Column("kind", Text, nullable=False),
    Column("payload", Text, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    UniqueConstraint("session_id", "seq"),
)

signals = Table(
    "signals",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", Text, ForeignKey("runs.id"), nullable=False),
    Column("task_id", Text, nullable=False),
    Column("session_id", Integer, ForeignKey("sessions.id")),
    Column("attempt", Integer, nullable=False),
    Column("seq", Integer, nullable=False),
    Column("kind", Text, nullable=False),
    Column("payload", JsonText, nullable=False),
    Column("accepted", Boolean, nullable=False),
    Column("reason", Text, nullable=False),
    Column("consumed", Boolean, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    UniqueConstraint("session_id", "seq"),
    Index(None, "run_id", "consumed"),
)

gate_results = Table(
    "gate_results",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", Text, nullable=False),
    Column("task_id", Text, nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("gate", Text, nullable=False),
    Column("passed", Boolean, nullable=False),
    Column("evidence", Text, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    _task_fk(),
    Index(None, "run_id", "task_id", "attempt"),
)

escalations = Table(
    "escalations",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", Text, ForeignKey("runs.id"), nullable=False),
    Column("task_id", Text),
    Column("source", Text, nullable=False),
    Column("problem", Text, nullable=False),
    Column("impact", Text, nullable=False),
    Column("options", JsonText, nullable=False),
    Column("recommended", Text, nullable=False),
    Column("blocking", Boolean, nullable=False),
    Column("status", Text, nullable=False),
    Column("answer", Text),
    Column("session_id", Integer, ForeignKey("sessions.id")),
    Column("created_at", UtcDateTime, nullable=False),
    Column("answered_at", UtcDateTime),
    _task_fk(),
    Index(None, "status"),
)

risks = Table(
    "risks",
    metadata,
    Column("run_id", Text, ForeignKey("runs.id"), primary_key=True),
    Column("id", Text, primary_key=True),
    Column("description", Text, nullable=False),
    Column("severity", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("source_task", Text),
    Column("created_at", UtcDateTime, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
)

commits = Table(
    "commits",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", Text, nullable=False),
    Column("task_id", Text, nullable=False),
    Column("sha", Text, nullable=False),
    Column("branch", Text, nullable=False),
    Column("message", Text, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    _task_fk(),
    UniqueConstraint("run_id", "task_id"),
)

reports = Table(
    "reports",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", Text, ForeignKey("runs.id"), nullable=False),
    Column("kind", Text, nullable=False),
    Column("text", Text, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
)

outbox = Table(
    "outbox",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", Text, ForeignKey("runs.id"), nullable=False),
    Column("key", Text, nullable=False, unique=True),
    Column("kind", Text, nullable=False),
    Column("payload", JsonText, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("sent_at", UtcDateTime),
    Column("attempts", Integer, nullable=False),
    Column("last_error", Text),
    Index(None, "sent_at"),
)

bridge_state = Table(
    "bridge_state",
    metadata,
    Column("key", Text, primary_key=True),
    Column("value", Text, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
)

# Which task rows changed, and in what order (`seq`, never reused): kept by the triggers migration 006
# puts on `tasks`, for every writer (pm-agent's threads, a shell with sqlite3), so the store watch reads
# the rows changed since its last look instead of every row (integrity.py). One row per task.
task_changes = Table(
    "task_changes",
    metadata,
    Column("seq", Integer, primary_key=True),
    Column("run_id", Text, nullable=False),
    Column("task_id", Text, nullable=False),
    UniqueConstraint("run_id", "task_id"),
    sqlite_autoincrement=True,
)
