"""A task's history for `pm-agent log TASK`: transitions, sessions, signals, gates and events, merged.

Events that only mirror a row shown from its own table (`task.transition`, `session.created`,
`signal.recorded`, `gate.recorded`) are left out, so each happening appears once.
"""

from __future__ import annotations

from sqlalchemy import Connection

from pm_agent.store.events import list_events
from pm_agent.store.outcomes import list_gate_results
from pm_agent.store.records import HistoryEntry, HistorySource
from pm_agent.store.runs import list_transitions
from pm_agent.store.sessions import list_sessions, signals_for_task

MIRRORED_EVENTS = frozenset({"task.transition", "session.created", "signal.recorded", "gate.recorded"})
_RANK: dict[HistorySource, int] = {"transition": 0, "session": 1, "signal": 2, "gate": 3, "event": 4}


def task_history(conn: Connection, run_id: str, task_id: str) -> list[HistoryEntry]:
    """Everything recorded about a task, oldest first (ties: transition, session, signal, gate, event)."""
    keyed: list[tuple[int, HistoryEntry]] = []
    for t in list_transitions(conn, run_id, task_id):
        summary = f"{t.from_state} -> {t.to_state}: {t.reason}" + (
            f" (iteration {t.iteration})" if t.iteration else ""
        )
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
    for s in list_sessions(conn, run_id, task_id):
        summary = f"session {s.id}: {s.role} attempt {s.attempt} via {s.runner}"
        if s.resumed_from is not None:
            summary += f", resuming session {s.resumed_from}"
        data = s.model_dump(mode="json", exclude={"token", "last_lines"})
        keyed.append(
            (
                s.id,
                HistoryEntry(
                    at=s.started_at, source="session", kind="session.started", summary=summary, data=data
                ),
            )
        )
    for g in signals_for_task(conn, run_id, task_id):
        verdict = "accepted" if g.accepted else f"refused: {g.reason}"
        summary = f"{g.kind} from session {g.session_id} (attempt {g.attempt}, seq {g.seq}) {verdict}"
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
    for r in list_gate_results(conn, run_id, task_id):
        summary = f"gate {r.gate} {'PASS' if r.passed else 'FAIL'} (attempt {r.attempt})"
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
    for e in list_events(conn, run_id, task_id):
        if e.kind in MIRRORED_EVENTS:
            continue
        details = ", ".join(f"{k}={v}" for k, v in sorted(e.payload.items()))
        keyed.append(
            (
                e.id,
                HistoryEntry(at=e.created_at, source="event", kind=e.kind, summary=details, data=e.payload),
            )
        )
    keyed.sort(key=lambda item: (item[1].at, _RANK[item[1].source], item[0]))
    return [entry for _, entry in keyed]
