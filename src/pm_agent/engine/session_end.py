"""How an agent session ended, as the PM reads it (`Step`), and what a restart finds of the last one (`recover`):
a signal stored before pm-agent died is reused, an interrupted session is resumed."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from pm_agent.engine.decisions import SessionEnd
from pm_agent.engine.history import typed_signal
from pm_agent.engine.stopping import ended_by_stop
from pm_agent.store import SessionRecord, SessionStatus, SignalRecord, Store, TaskRecord


@dataclass(frozen=True)
class Step:
    """How one agent session ended, as far as the PM cares."""

    session: SessionRecord
    signal: SignalRecord | None
    status: SessionStatus
    detail: str = ""
    account_error: str | None = None  # the agent's account cannot work (agents/stream.py ACCOUNT_ERRORS)

    def end(self) -> SessionEnd:
        """The session's end as routing reads it (the signal read into its model)."""
        return SessionEnd(
            role=self.session.role,
            session_id=self.session.id,
            signal=typed_signal(self.signal) if self.signal is not None else None,
            status=self.status,
            detail=self.detail,
            resumable=self.status is not SessionStatus.STUCK and bool(self.session.agent_session_id),
            last_lines=self.session.last_lines[-2000:],
            account_error=self.account_error,
        )


def recover(store: Store, run_id: str, rec: TaskRecord, role: str) -> Step | tuple[SessionRecord, str] | None:
    """After a restart: reuse a stored signal, or resume a session pm-agent's death interrupted."""
    mine = [s for s in store.list_sessions(run_id, rec.task_id) if s.role == role and s.attempt == rec.attempt]
    if not mine or rec.attempt == 0:
        return None
    last = mine[-1]
    signal = next((g for g in store.signals_for_session(last.id) if g.accepted and not g.consumed), None)
    if signal is not None:
        if last.status in (SessionStatus.STARTING, SessionStatus.RUNNING):
            # pm-agent died between the signal being stored and the monitor closing the session.
            last = store.update_session(last.id, status=SessionStatus.SIGNALLED, ended_at=datetime.now(UTC))
        return Step(last, signal, last.status, "recovered from the store")
    interrupted = last.status in (SessionStatus.STARTING, SessionStatus.RUNNING)
    if interrupted:
        store.update_session(last.id, status=SessionStatus.KILLED, ended_at=datetime.now(UTC))
    # A SIGINT/SIGTERM stop interrupts a session as a crash does: both are resumed.
    if last.agent_session_id and (interrupted or ended_by_stop(store, last)):
        prompt = (
            "pm-agent restarted while you were working. Check the state of the files, finish the "
            "task, and call signal_back exactly once."
        )
        return (store.get_session(last.id), prompt)
    return None
