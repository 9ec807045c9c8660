"""One task's history as the store holds it, read into typed facts the engine decides from.

Signal payloads are stored as their wire (camelCase) dicts; `TaskHistory` reads each one into its
model from `pm_agent.signals` once, so the engine works with `CompleteSignal.summary`, never with
`payload.get("summary")`. Event payloads are pm-agent's own and stay plain dicts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pm_agent.errors import SignalError
from pm_agent.lifecycle import IssueState
from pm_agent.signals import AnySignal, CompleteSignal, NeedsRoleFollowupSignal, parse_signal
from pm_agent.store import SessionStatus, SignalRecord, Store

WORK_ROLES = ("developer", "fixer")
"""The roles whose complete signal is the task's report (the gates read its evidence, delivery its review note).

Not the tester: its complete signal reports the tests it added, not the change; the criteria mapping, the
review note and the justifications the gates read stay the developer's or fixer's."""

FOLLOWUP_PENDING = "followup.pending"
FOLLOWUP_RESOLVED = "followup.resolved"
LIVE = (SessionStatus.STARTING, SessionStatus.RUNNING)


def typed_signal(record: SignalRecord) -> AnySignal | None:
    """A stored signal read into its model; None for a payload that no longer validates (a refused one)."""
    key = (record.run_id, record.id, repr(record.payload))
    if key in _TYPED:
        return _TYPED[key]
    try:
        typed: AnySignal | None = parse_signal(record.payload)
    except SignalError:
        typed = None
    if len(_TYPED) >= _TYPED_MAX:
        _TYPED.pop(next(iter(_TYPED)))
    _TYPED[key] = typed
    return typed


# A task's report is read four or five times on its way to the commit (gates, review, delivery, the prompt
# of a dependent), each a lenient parse and a validation (~0.3 ms). A stored signal never changes, and the
# models are frozen: one reading per signal, kept for the few tasks in flight. Keyed by run, row id and the
# payload itself (its repr, a few microseconds): two store files can hold the same run id and row id.
_TYPED: dict[tuple[str, int, str], AnySignal | None] = {}
_TYPED_MAX = 256


@dataclass(frozen=True)
class PendingFollowup:
    """A needs-role-followup with resume=true whose target role has not finished yet."""

    session_id: int  # the asking session, resumed when the target finishes
    return_state: IssueState  # the state the asker worked in
    target: str  # the role asked for
    asker_role: str
    asked: NeedsRoleFollowupSignal | None  # the asking signal (its prompt quotes it back)


class TaskHistory:
    """What the store says happened to one task: its reports, events, followups and sessions."""

    def __init__(self, store: Store, run_id: str, task_id: str) -> None:
        self.store = store
        self.run_id = run_id
        self.task_id = task_id

    def latest_report(self, roles: tuple[str, ...] = WORK_ROLES) -> CompleteSignal | None:
        """The newest accepted complete signal from one of `roles` on this task (None before any)."""
        best: SignalRecord | None = None
        for session in self.store.list_sessions(self.run_id, self.task_id):
            if session.role not in roles:
                continue
            for signal in self.store.signals_for_session(session.id):
                if signal.accepted and signal.kind == "complete" and (best is None or signal.id > best.id):
                    best = signal
        report = typed_signal(best) if best is not None else None
        return report if isinstance(report, CompleteSignal) else None

    def events(self, kind: str) -> list[dict[str, Any]]:
        """Payloads of this task's events of one kind, oldest first."""
        return [e.payload for e in self.store.events(self.run_id, self.task_id, kind=kind)]

    def session_signal(self, session_id: int, kind: str) -> AnySignal | None:
        """The first signal of `kind` a session sent, read into its model."""
        record = next((g for g in self.store.signals_for_session(session_id) if g.kind == kind), None)
        return typed_signal(record) if record is not None else None

    def pending_followup(self) -> PendingFollowup | None:
        """The newest needs-role-followup with resume=true whose target has not finished yet."""
        resolved = {int(p["session_id"]) for p in self.events(FOLLOWUP_RESOLVED)}
        open_ = [p for p in self.events(FOLLOWUP_PENDING) if int(p["session_id"]) not in resolved]
        if not open_:
            return None
        latest = open_[-1]
        asker = self.store.get_session(int(latest["session_id"]))
        asked = self.session_signal(asker.id, "needs-role-followup")
        return PendingFollowup(
            session_id=asker.id,
            return_state=IssueState(str(latest["return_state"])),
            target=str(latest.get("target", "")),
            asker_role=asker.role,
            asked=asked if isinstance(asked, NeedsRoleFollowupSignal) else None,
        )

    def since_state_entry(self, kind: str | None) -> int:
        """Sessions since the task entered its state that ended with `kind` (None: without a signal)."""
        transitions = self.store.transitions(self.run_id, self.task_id)
        since = transitions[-1].created_at if transitions else None
        count = 0
        for s in self.store.list_sessions(self.run_id, self.task_id):
            if since is not None and s.started_at < since:
                continue
            kinds = {g.kind for g in self.store.signals_for_session(s.id) if g.accepted}
            count += (kind in kinds) if kind is not None else (not kinds and s.status not in LIVE)
        return count

    def retry_count(self) -> int:
        """Fix attempts spent on the task so far."""
        return self.store.get_task(self.run_id, self.task_id).retry_count

    def fix_evidence(self) -> str:
        """What the fixer must fix: the latest `fix.requested` event, or a note that there is none."""
        requests = self.events("fix.requested")
        if not requests:
            return "(no recorded evidence)"
        latest = requests[-1]
        return f"Source: {latest.get('source', '')}\n{latest.get('evidence', '')}"
