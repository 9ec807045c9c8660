"""`SqliteStore`'s agent sessions, their transcript lines and the signals they send (`store.sessions`)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pm_agent.store import sessions as ss
from pm_agent.store._sqlite_base import SqliteStoreBase
from pm_agent.store.database import read_txn, write_txn
from pm_agent.store.records import SessionEventRecord, SessionRecord, SignalRecord


class SessionsMixin(SqliteStoreBase):
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
        with write_txn(self._writer) as conn:
            return ss.create_session_txn(
                conn,
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

    def session_by_token(self, token: str) -> SessionRecord | None:
        with read_txn(self.engine) as conn:
            return ss.session_by_token(conn, token)

    def get_session(self, session_id: int) -> SessionRecord:
        with read_txn(self.engine) as conn:
            return ss.get_session(conn, session_id)

    def list_sessions(self, run_id: str, task_id: str | None = None) -> list[SessionRecord]:
        with read_txn(self.engine) as conn:
            return ss.list_sessions(conn, run_id, task_id)

    def sessions_cost(self, run_id: str) -> float:
        with read_txn(self.engine) as conn:
            return ss.sessions_cost(conn, run_id)

    def update_session(self, session_id: int, **fields: Any) -> SessionRecord:
        with write_txn(self._writer) as conn:
            return ss.update_session_txn(conn, session_id, fields, now=self.now())

    def touch_session(self, session_id: int, at: datetime | None = None) -> None:
        with write_txn(self._writer) as conn:
            ss.touch_session_txn(conn, session_id, at or self.now())

    def record_session_event(self, session_id: int, seq: int, kind: str, payload: Any) -> bool:
        with write_txn(self._writer) as conn:
            return ss.record_session_event_txn(conn, session_id, seq, kind, payload, now=self.now())

    def session_events(self, session_id: int, after_seq: int = 0) -> list[SessionEventRecord]:
        with read_txn(self.engine) as conn:
            ss.get_session(conn, session_id)
            return ss.session_events_of(conn, session_id, after_seq)

    # -- signals
    def record_signal(
        self,
        *,
        run_id: str,
        task_id: str,
        session_id: int | None,
        attempt: int,
        seq: int,
        kind: str,
        payload: Mapping[str, Any],
        accepted: bool,
        reason: str = "",
    ) -> SignalRecord:
        with write_txn(self._writer) as conn:
            record, _ = ss.record_signal_txn(
                conn,
                run_id=run_id,
                task_id=task_id,
                session_id=session_id,
                attempt=attempt,
                seq=seq,
                kind=kind,
                payload=payload,
                accepted=accepted,
                reason=reason,
                now=self.now(),
            )
            return record

    def signals_for_session(self, session_id: int) -> list[SignalRecord]:
        with read_txn(self.engine) as conn:
            ss.get_session(conn, session_id)
            return ss.signals_for_session(conn, session_id)

    def unconsumed_signals(self, run_id: str) -> list[SignalRecord]:
        with read_txn(self.engine) as conn:
            return ss.unconsumed_signals(conn, run_id)

    def mark_signal_consumed(self, signal_id: int) -> SignalRecord:
        with write_txn(self._writer) as conn:
            return ss.mark_signal_consumed_txn(conn, signal_id, now=self.now())
