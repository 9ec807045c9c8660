"""Small helpers shared by the query modules: rows to records, validated partial updates."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import Enum
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from pm_agent.errors import NotFoundError, StoreError

if TYPE_CHECKING:  # the plain-sqlite3 writers use `merge` and friends without importing SQLAlchemy
    from sqlalchemy import Connection, CursorResult, Select

R = TypeVar("R", bound=BaseModel)

# The fields each kind of update may change (`merge` refuses any other).
RUN_FIELDS = frozenset(
    {
        "plan_doc",
        "design_doc",
        "current_sha",
        "working_branch",
        "shared_context",
        "config",
        "status",
        "checkpoint_tags",
    }
)
TASK_FIELDS = frozenset(
    {
        "title",
        "tier",
        "status",
        "ownership",
        "contract",
        "retry_count",
        "attempt",
        "iteration_count",
        "decision_log",
        "artifacts",
        "known_risks",
        "review_notes",
        "commit_sha",
        "duration_ms",
        "workflow_context",
        "started_at",
    }
)
BULKY = ("contract", "workflow_context", "shared_context", "config")  # named, not copied, in events
SESSION_FIELDS = frozenset(
    {
        "agent_session_id",
        "status",
        "pid",
        "exit_code",
        "workdir",
        "last_output_at",
        "ended_at",
        "cost_usd",
        "input_tokens",
        "output_tokens",
        "last_lines",
    }
)


def fetch_one(conn: Connection, stmt: Select[Any], model: type[R]) -> R | None:
    """The first row of `stmt` as a `model`, or None."""
    row = conn.execute(stmt).mappings().first()
    return None if row is None else model.model_validate(dict(row))


def fetch_required(conn: Connection, stmt: Select[Any], model: type[R], what: str) -> R:
    """The first row of `stmt` as a `model`; NotFoundError("unknown <what>") if there is none."""
    found = fetch_one(conn, stmt, model)
    if found is None:
        raise NotFoundError(f"unknown {what}")
    return found


def fetch_all(conn: Connection, stmt: Select[Any], model: type[R]) -> list[R]:
    """Every row of `stmt` as a `model`."""
    return [model.model_validate(dict(row)) for row in conn.execute(stmt).mappings()]


def inserted_id(result: CursorResult[Any]) -> int:
    """The integer primary key of the row an INSERT just wrote."""
    key = result.inserted_primary_key
    if key is None or key[0] is None:
        raise StoreError("the database did not report the new row's id")
    return int(key[0])


def db_value(value: Any) -> Any:
    """A validated field value as a column takes it (enum members as their plain value)."""
    return value.value if isinstance(value, Enum) else value


def merge(record: R, fields: Mapping[str, Any], allowed: Iterable[str], what: str) -> tuple[R, dict[str, Any]]:
    """`record` with `fields` applied and validated, and the column values to write.

    Raises StoreError naming the fields that may not be changed, or the validation error.
    """
    unknown = sorted(set(fields) - set(allowed))
    if unknown:
        raise StoreError(f"cannot update {what} field(s): {', '.join(unknown)}")
    try:
        new = type(record).model_validate({**record.model_dump(), **fields})
    except ValidationError as exc:
        raise StoreError(f"invalid {what} update: {exc}") from exc
    return new, {name: db_value(getattr(new, name)) for name in fields}


def json_payload(values: Mapping[str, Any], *, skip: Iterable[str] = ()) -> dict[str, Any]:
    """Changed values for an event payload; big or noisy fields in `skip` are listed by name only."""
    skipped = set(skip)
    payload = {name: value for name, value in values.items() if name not in skipped}
    omitted = sorted(skipped & set(values))
    if omitted:
        payload["also_changed"] = omitted
    return payload
