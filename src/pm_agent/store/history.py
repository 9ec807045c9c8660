"""A task's history for `pm-agent log TASK`: transitions, sessions, signals, gates and events, merged.

Events that only mirror a row shown from its own table (`task.transition`, `session.created`,
`signal.recorded`, `gate.recorded`) are left out, so each happening appears once. The summaries come from
`pm_agent.statefile`, which `pm-agent log` also uses when it reads the file without the store.
"""

from __future__ import annotations

from sqlalchemy import Connection

from pm_agent.statefile import (
    HISTORY_RANK,
    MIRRORED_EVENTS,
    event_summary,
    gate_summary,
    session_summary,
    signal_summary,
    transition_summary,
)
from pm_agent.store import _fast_queries as fq
from pm_agent.store._fast import raw
from pm_agent.store.records import HistoryEntry
from pm_agent.store.runs import list_transitions
from pm_agent.store.sessions import signals_for_task


def task_history(conn: Connection, run_id: str, task_id: str) -> list[HistoryEntry]:
    """Everything recorded about a task, oldest first (ties: transition, session, signal, gate, event)."""
    keyed: list[tuple[int, HistoryEntry]] = []
    for t in list_transitions(conn, run_id, task_id):
        summary = transition_summary(t.from_state, t.to_state, t.reason, t.iteration)
        keyed.append(
            (
                t.seq,
                HistoryEntry(
                    at=t.created_at,
                    source="transition",
                    kind="transition",
                    summary=summary,
                    data=t.model_dump(mode="json"),
                ),
            )
        )
    for s in fq.list_sessions(raw(conn), run_id, task_id):
        summary = session_summary(s.id, s.role, s.attempt, s.runner, s.resumed_from)
        data = s.model_dump(mode="json", exclude={"token", "last_lines"})
        keyed.append(
            (
                s.id,
                HistoryEntry(at=s.started_at, source="session", kind="session.started", summary=summary, data=data),
            )
        )
    for g in signals_for_task(conn, run_id, task_id):
        summary = signal_summary(g.kind, g.session_id, g.attempt, g.seq, g.accepted, g.reason)
        keyed.append(
            (
                g.id,
                HistoryEntry(
                    at=g.created_at,
                    source="signal",
                    kind=f"signal.{g.kind}",
                    summary=summary,
                    data=g.model_dump(mode="json"),
                ),
            )
        )
    for r in fq.gate_results_of(raw(conn), run_id, task_id):
        summary = gate_summary(r.gate, r.passed, r.attempt)
        keyed.append(
            (
                r.id,
                HistoryEntry(
                    at=r.created_at,
                    source="gate",
                    kind="gate",
                    summary=summary,
                    data=r.model_dump(mode="json"),
                ),
            )
        )
    for e in fq.list_events(raw(conn), run_id, task_id):
        if e.kind in MIRRORED_EVENTS:
            continue
        keyed.append(
            (
                e.id,
                HistoryEntry(
                    at=e.created_at, source="event", kind=e.kind, summary=event_summary(e.payload), data=e.payload
                ),
            )
        )
    keyed.sort(key=lambda item: (item[1].at, HISTORY_RANK[item[1].source], item[0]))
    return [entry for _, entry in keyed]
