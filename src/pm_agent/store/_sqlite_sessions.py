"""`SqliteStore`'s agent sessions, their transcript lines and the signals they send (`store.sessions`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pm_agent.store import _fast_queries as fq
from pm_agent.store import _fast_writes as fw
from pm_agent.store import sessions as ss
from pm_agent.store._sqlite_base import SqliteStoreBase
from pm_agent.store.database import read_txn
from pm_agent.store.records import SessionEventRecord, SessionRecord, SignalRecord
from pm_agent.store.signal_store import SignalCalls


class SessionsMixin(SignalCalls, SqliteStoreBase):
    """Sessions and signals, one transaction per write."""

    # -- sessions
    def create_session(
        self,
        run_id: str,
        task_id: str,
        role: str,
        attempt: int,
        token: str,
        runner: str,
        workdir: str,
        resumed_from: int | None = None,
    ) -> SessionRecord:
        with self._fast.write() as fast:
            return fw.create_session(
                fast,
                run_id=run_id,
                task_id=task_id,
                role=role,
                attempt=attempt,
                token=token,
                runner=runner,
                workdir=workdir,
                resumed_from=resumed_from,
                now=self.now(),
            )

    def get_session(self, session_id: int) -> SessionRecord:
        with self._fast.read() as fast:
            return fq.get_session(fast, session_id)

    def list_sessions(self, run_id: str, task_id: str | None = None) -> list[SessionRecord]:
        with self._fast.read() as fast:
            return fq.list_sessions(fast, run_id, task_id)

    def sessions_cost(self, run_id: str) -> float:
        with self._fast.read() as fast:
            return fq.sessions_cost(fast, run_id)

    def update_session(self, session_id: int, **fields: Any) -> SessionRecord:
        with self._fast.write() as fast:
            return fw.update_session(fast, session_id, fields, now=self.now())

    def touch_session(self, session_id: int, at: datetime | None = None) -> None:
        with self._fast.write() as fast:
            return fq.touch_session(fast, session_id, at or self.now())

    def record_session_event(self, session_id: int, seq: int, kind: str, payload: Any) -> bool:
        return self.record_session_events(session_id, [(seq, kind, payload)]) == 1

    def record_session_events(
        self, session_id: int, lines: Sequence[tuple[int, str, Any]], touched_at: datetime | None = None
    ) -> int:
        with self._fast.write() as fast:
            stored = fq.record_session_events(fast, session_id, lines, self.now())
            if touched_at is not None:
                fq.touch_session(fast, session_id, touched_at)
            return stored

    def session_events(self, session_id: int, after_seq: int = 0) -> list[SessionEventRecord]:
        with read_txn(self.engine) as conn:
            ss.get_session(conn, session_id)
            return ss.session_events_of(conn, session_id, after_seq)

    # -- signals
    def unconsumed_signals(self, run_id: str) -> list[SignalRecord]:
        with read_txn(self.engine) as conn:
            return ss.unconsumed_signals(conn, run_id)

    def mark_signal_consumed(self, signal_id: int) -> SignalRecord:
        with self._fast.write() as fast:
            return fw.mark_signal_consumed(fast, signal_id, now=self.now())
