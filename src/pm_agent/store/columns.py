"""The columns the plain-sqlite3 paths (`_fast*`) read and write, as plain text: no SQLAlchemy import.

`schema.py` stays the one description of the tables; this is a copy of the part `_fast.Columns` needs
(each column's name, in table order, and how its value is stored), so the signal server, which runs
once per agent session, can read and write the store without importing SQLAlchemy. A test checks
every table here against its `schema.py` Table. Kinds: `json` (JSON text, like `types.JsonText`),
`time` (naive UTC text, like `types.UtcDateTime`), `bool` (0/1); no kind: stored as given.
"""

from __future__ import annotations

from typing import Final

__all__ = ["MIGRATIONS", "TABLES", "columns_of"]

# The migrations (`migrations.migration_names()`) of the schema these columns describe, in order.
MIGRATIONS: Final = (
    "001_runs_tasks_events",
    "002_sessions_signals",
    "003_gates_escalations_commits",
    "004_outbox",
    "005_task_order_index",
    "006_task_changes",
)

TABLES: Final[dict[str, str]] = {
    "tasks": (
        "run_id task_id plan_order title tier status state ownership contract:json retry_count attempt"
        " iteration_count decision_log:json artifacts:json known_risks:json review_notes:json commit_sha"
        " duration_ms workflow_context:json started_at:time updated_at:time"
    ),
    "sessions": (
        "id run_id task_id role attempt token runner agent_session_id resumed_from status pid exit_code workdir"
        " started_at:time last_output_at:time ended_at:time cost_usd input_tokens output_tokens last_lines"
    ),
    "signals": (
        "id run_id task_id session_id attempt seq kind payload:json accepted:bool reason consumed:bool created_at:time"
    ),
    "events": "id run_id task_id kind payload:json created_at:time",
    "transitions": "id run_id task_id seq from_state to_state reason iteration created_at:time",
    "gate_results": "id run_id task_id attempt gate passed:bool evidence created_at:time",
    "commits": "id run_id task_id sha branch message created_at:time",
}


def columns_of(table: str) -> list[tuple[str, str]]:
    """(name, kind) of each column of `table`, in table order; kind is "" for a value stored as given."""
    return [(name, kind) for name, _, kind in (word.partition(":") for word in TABLES[table].split())]
