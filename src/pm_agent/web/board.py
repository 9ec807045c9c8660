"""Runs, the board and the inbox, read from the store (read only)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from pm_agent.reports.escalation import render_stored
from pm_agent.reports.state_reader import read_state
from pm_agent.store import EscalationRecord, EscalationStatus, EventRecord, RunRecord, SessionRecord, Store, TaskRecord
from pm_agent.web.groups import ACTIVE_GROUPS, GROUPS, group_of
from pm_agent.web.models import Board, BoardHeader, Card, Column, EscalationView, RunSummary

DISPATCHED = "slot.dispatched"  # engine/loop.py's event of a task taking a slot


def run_summaries(store: Store) -> list[RunSummary]:
    """Every run, newest first, with its counts."""
    open_by_run: dict[str, int] = defaultdict(int)
    for esc in store.list_escalations(status=EscalationStatus.OPEN):
        open_by_run[esc.run_id] += 1
    out = []
    for run in store.list_runs():
        rows = store.task_rows(run.id)
        out.append(
            RunSummary(
                id=run.id,
                plan_id=run.plan_id,
                status=run.status.value,
                working_branch=run.working_branch,
                created_at=run.created_at,
                updated_at=run.updated_at,
                done=sum(1 for r in rows if r.state == "completed"),
                total=len(rows),
                cost_usd=store.sessions_cost(run.id),
                open_escalations=open_by_run[run.id],
            )
        )
    return out


def slot_numbers(dispatches: Iterable[EventRecord], sessions: Iterable[SessionRecord] = ()) -> dict[str, int]:
    """Slot number (from 1) of each task holding a slot, replaying how the loop gives them (engine/agentslots.py).

    A slot is an agent's: a dispatch reserves one for the task (its event names every task holding one then, so a
    task no longer named has given its slot back), an agent session holds one from its start to its end (a fixer
    takes one without a dispatch; a task pm-agent checks holds none). A task taking a slot gets the lowest free
    number.
    """
    marks: list[tuple[datetime, int, str, str, frozenset[str] | None]] = []  # (at, order, what, task, holders)
    for event in dispatches:
        if event.task_id is not None:
            holders = frozenset(str(t) for t in event.payload.get("slots") or ())
            marks.append((event.created_at, 1, "take", event.task_id, holders))
    for session in sessions:
        marks.append((session.started_at, 1, "take", session.task_id, None))
        if session.ended_at is not None:
            marks.append((session.ended_at, 0, "give", session.task_id, None))  # before a take at the same time
    held: dict[str, int] = {}
    for _, _, what, task, named in sorted(marks, key=lambda m: (m[0], m[1])):
        if what == "give":
            held.pop(task, None)
            continue
        if named is not None:
            held = {t: n for t, n in held.items() if t in named}
        if task not in held:
            taken = set(held.values())
            held[task] = next(n for n in range(1, len(taken) + 2) if n not in taken)
    return held


def _max_slots(run: RunRecord) -> int:
    value = run.config.get("max_parallel_agents", 3)
    return int(value) if isinstance(value, int) else 3


def board(store: Store, db: Path, run_id: str) -> Board:
    """The run's board: a card per task in its state's column, and the header line."""
    run = store.get_run(run_id)
    now = store.now()
    tasks = store.list_tasks(run_id)
    entered = _entered(store, run_id)
    cost: dict[str, float] = defaultdict(float)
    sessions = store.list_sessions(run_id)
    for session in sessions:
        cost[session.task_id] += session.cost_usd
    slots = slot_numbers(store.events_of_kind(run_id, (DISPATCHED,)), sessions)
    cards = [card(t, entered.get(t.task_id, t.updated_at), now, slots, cost[t.task_id]) for t in tasks]
    columns = [Column(group=g, label=label, cards=[c for c in cards if c.group == g]) for g, label in GROUPS]
    open_escalations = len(store.list_escalations(run_id, EscalationStatus.OPEN))
    header = BoardHeader(
        run_id=run.id,
        plan_id=run.plan_id,
        status=run.status.value,
        slots_in_use=sum(1 for c in cards if c.slot is not None),
        max_slots=_max_slots(run),
        done=sum(1 for c in cards if c.group == "done"),
        total=len(cards),
        cost_usd=sum(cost.values()),
        open_escalations=open_escalations,
    )
    return Board(header=header, columns=columns, last_event_id=last_event_id(db, run_id))


def last_event_id(db: Path, run_id: str) -> int:
    """The newest event id of the run (0 for none): where the page's live stream starts."""
    # One indexed MAX() through the read-only reader: paging through a long run's events would cost seconds.
    sql = "SELECT COALESCE(MAX(id), 0) FROM events WHERE run_id = ?"
    return int(read_state(db, lambda con: con.execute(sql, (run_id,)).fetchone()[0]))


def _entered(store: Store, run_id: str) -> dict[str, datetime]:
    """When each task entered its current state (its last transition)."""
    entered: dict[str, datetime] = {}
    for event in store.events_of_kind(run_id, ("task.transition",)):
        if event.task_id is not None:
            entered[event.task_id] = event.created_at
    return entered


def card(rec: TaskRecord, since: datetime, now: datetime, slots: dict[str, int], cost: float) -> Card:
    group = group_of(rec.state.value)
    return Card(
        task_id=rec.task_id,
        title=rec.title,
        tier=rec.tier.value,
        state=rec.state.value,
        group=group,
        attempt=rec.attempt,
        slot=slots.get(rec.task_id) if group in ACTIVE_GROUPS else None,
        in_state_s=max(0.0, (now - since).total_seconds()),
        cost_usd=cost,
    )


def answer_words(source: str) -> list[str]:
    """The words an answer may start with, as the engine reads them for this kind of escalation."""
    if source.startswith("plan-change:"):
        return ["continue", "restart", "re-open"]  # engine/reconcile.py `_word`
    if source == "needs-user-input" or source.startswith("intake"):
        return ["(your answer, in words)", "skip"]  # the asking session resumes with the text
    if source == "risk-audit":
        return ["accept", "mitigate", "abort"]
    if source == "environment":
        return ["retry", "skip", "abort"]
    return ["retry: GUIDANCE", "accept", "skip", "abort"]  # engine/routing.py `_answer`


def escalation_view(esc: EscalationRecord) -> EscalationView:
    """One escalation in seed 001's format, as `pm-agent escalations` prints it."""
    where = f"task-{esc.task_id}" if esc.task_id else "the run"
    return EscalationView(
        id=esc.id,
        run_id=esc.run_id,
        task_id=esc.task_id,
        source=esc.source,
        status=esc.status.value,
        text=f"{render_stored(esc)}\n(about {where})",
        answer_words=answer_words(esc.source),
        answer=esc.answer,
        created_at=esc.created_at,
    )


def inbox(store: Store) -> list[EscalationView]:
    """Open escalations of every run, oldest first."""
    return [escalation_view(e) for e in store.list_escalations(status=EscalationStatus.OPEN)]
