"""The signal desk: checks one signal_back call and records it, accepted or refused, before answering.

The checks, in order: a store and a session token, a session the token names, one accepted signal
per session, a live session on the task's current attempt, the task its stepId names, what its
role may send, then the payload itself (`pm_agent.signals.models`). `pm_agent.signals.server`
puts the desk behind the MCP tool; tests drive it in-process against a real store file.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

from pm_agent.errors import PmAgentError
from pm_agent.lifecycle.roles import ALLOWED_SIGNALS, Role, resolve_role
from pm_agent.signals.forms import read_id
from pm_agent.signals.limits import MAX_PAYLOAD_BYTES, kept_payload, payload_bytes, problem_lines
from pm_agent.signals.models import (
    SIGNAL_KINDS,
    AnySignal,
    NeedsRoleFollowupSignal,
    SignalPayloadError,
    signal_payload,
)
from pm_agent.signals.reading import SignalReading, read_signal, signal_kind
from pm_agent.signals.tokens import DB_ENV, RUN_ENV, TASK_ENV, TOKEN_ENV
from pm_agent.store.records import SessionRecord, SessionStatus, SignalRecord, TaskRecord
from pm_agent.store.signal_store import open_signal_store

__all__ = [
    "LIVE_STATUSES",
    "STOP",
    "Reply",
    "SignalDesk",
    "SignalStore",
    "allowed_kinds",
    "desk_from_env",
    "normalised_reason",
    "role_of",
    "same_task",
    "task_key",
]

log = logging.getLogger(__name__)

LIVE_STATUSES: Final[frozenset[SessionStatus]] = frozenset({SessionStatus.STARTING, SessionStatus.RUNNING})
STOP: Final = "Stop now: end your turn without further tool calls."

class SignalStore(Protocol):
    """What the server needs from the store (`store.signal_store.PlainSignalStore` and `SqliteStore` provide it)."""

    def session_by_token(self, token: str) -> SessionRecord | None: ...

    def signals_for_session(self, session_id: int) -> list[SignalRecord]: ...

    def get_task(self, run_id: str, task_id: str) -> TaskRecord: ...

    def record_signal(
        self,
        *,
        run_id: str,
        task_id: str,
        session_id: int | None,
        attempt: int,
        seq: int,
        kind: str,
        payload: dict[str, Any],
        accepted: bool,
        reason: str,
    ) -> SignalRecord: ...


@dataclass(frozen=True)
class Reply:
    """What signal_back answers: accepted or refused, and the text the agent reads."""

    accepted: bool
    text: str
    record: SignalRecord | None = None


_TASK_PREFIX = re.compile(r"^(?:task|step)[\s_\-#:]*", re.IGNORECASE)


def task_key(value: str) -> str:
    """A task id as agents write it, reduced to compare: "Task 3", "task-3", "#3" and "3" are all "3"."""
    text = value.strip().lower()
    text = _TASK_PREFIX.sub("", text).lstrip("#").strip()
    return text


def same_task(step_id: str, task_id: str) -> bool:
    """True when the agent's stepId names the task `task_id`."""
    return step_id.strip() == task_id or task_key(step_id) == task_key(task_id)


def role_of(session: SessionRecord) -> Role | None:
    """The session's role, or None when pm-agent does not know it."""
    try:
        return resolve_role(session.role)
    except ValueError:
        return None


def allowed_kinds(role: Role | None) -> list[str]:
    """The signal kinds `role` may send, in seed 004's order (none for an unknown role)."""
    if role is None:
        return []
    return [kind for kind in SIGNAL_KINDS if kind in ALLOWED_SIGNALS[role]]


def _next_step(signal: AnySignal) -> str:
    if signal.signal == "complete":
        return "pm-agent now runs its gates on your work."
    if signal.signal == "partially-complete":
        return "A fresh session of your role will continue from your continuation point."
    if signal.signal == "needs-user-input":
        return "Your question goes to a human; this session is resumed with the answer."
    assert isinstance(signal, NeedsRoleFollowupSignal)
    if signal.resume:
        return f"The {signal.target_role} role acts first; then this session is resumed."
    return f"The {signal.target_role} role takes over; this session will not be resumed."


class SignalDesk:
    """Checks and records signal_back calls for one session token."""

    def __init__(
        self,
        store: SignalStore | None,
        token: str | None,
        *,
        setup_problem: str | None = None,
        audit: tuple[str, str] | None = None,
    ) -> None:
        """`audit` is the (run_id, task_id) under which calls with an unknown token are recorded."""
        self.store = store
        self.token = token
        self.setup_problem = setup_problem
        self.audit = audit

    def session(self) -> SessionRecord | None:
        """The session this server speaks for, if the token names one."""
        if self.store is None or not self.token:
            return None
        return self.store.session_by_token(self.token)

    def receive(self, arguments: dict[str, Any]) -> Reply:
        """Check one call and record it (accepted or refused) before answering."""
        if self.store is None:
            reason = self.setup_problem or "pm-agent's signal server has no store"
            log.error("signal refused, nothing recorded: %s", reason)
            return Reply(False, f"Signal refused: {reason}. Nothing was recorded; tell the user and stop.")
        if not self.token:
            return self._refuse_unknown(arguments, f"no session token ({TOKEN_ENV} is not set)")
        session = self.store.session_by_token(self.token)
        if session is None:
            return self._refuse_unknown(arguments, "the session token is unknown to pm-agent")
        return self._receive_for(session, arguments)

    def _receive_for(self, session: SessionRecord, arguments: dict[str, Any]) -> Reply:
        assert self.store is not None
        earlier = self.store.signals_for_session(session.id)
        accepted = [s for s in earlier if s.accepted]
        if accepted:
            first = accepted[0]
            return self._refuse(
                session,
                earlier,
                arguments,
                f"this session already sent its signal ({first.kind}, seq {first.seq}); only one is taken",
                advice=STOP,
            )
        if session.status not in LIVE_STATUSES:
            return self._refuse(
                session,
                earlier,
                arguments,
                f"this session is {session.status.value}, no longer live",
                advice=STOP,
            )
        task = self.store.get_task(session.run_id, session.task_id)
        if session.attempt < task.attempt:
            return self._refuse(
                session,
                earlier,
                arguments,
                f"this session works on attempt {session.attempt} of task {session.task_id}, "
                f"but pm-agent has moved on to attempt {task.attempt}",
                advice=STOP,
            )
        size = payload_bytes(arguments)
        if size > MAX_PAYLOAD_BYTES:
            return self._refuse(
                session,
                earlier,
                arguments,
                f"the payload is {size:,} bytes, over the limit of {MAX_PAYLOAD_BYTES:,} bytes "
                f"({MAX_PAYLOAD_BYTES // 1024} KB)",
                advice="Send the key lines of long outputs, not whole logs, and call signal_back again.",
            )
        problems = self._problems(session, arguments)
        reading: SignalReading | None = None
        try:
            reading = read_signal(arguments)
        except SignalPayloadError as exc:
            problems = [*exc.problems, *(p for p in problems if p not in exc.problems)]
        if problems or reading is None:
            kind = signal_kind(arguments.get("signal"))
            return self._refuse(
                session,
                earlier,
                arguments,
                f"invalid {f'{kind} signal' if kind else 'signal'}:\n{problem_lines(problems)}",
                advice="Correct these and call signal_back again.",
            )
        signal = reading.signal
        notes = list(reading.normalised)
        if signal.step_id != session.task_id:
            notes.append(f"stepId: {signal.step_id!r} read as {session.task_id!r}")
        payload = {**signal_payload(signal), "stepId": session.task_id}  # canonical, like targetRole
        record = self.store.record_signal(
            run_id=session.run_id,
            task_id=session.task_id,
            session_id=session.id,
            attempt=session.attempt,
            seq=len(earlier) + 1,
            kind=signal.signal,
            payload=payload,
            accepted=True,
            reason=normalised_reason(notes),
        )
        if not record.accepted or record.payload != payload:
            # The store is idempotent on (session, seq): another call took this seq first.
            return Reply(
                False, f"Another signal_back call of this session took seq {record.seq} first; call again."
            )
        text = f"Signal {signal.signal} recorded for task {session.task_id}. {_next_step(signal)} {STOP}"
        return Reply(True, text, record)

    def _problems(self, session: SessionRecord, arguments: dict[str, Any]) -> list[str]:
        """Problems that need the session: the task named by stepId, and what the role may send."""
        problems: list[str] = []
        step_id, _ = read_id(arguments.get("stepId"))
        if isinstance(step_id, str) and step_id.strip() and not same_task(step_id, session.task_id):
            problems.append(
                f"stepId: this session works on task {session.task_id!r}, not {_clip(step_id.strip())}; "
                f'use "{session.task_id}"'
            )
        kind = signal_kind(arguments.get("signal"))
        role = role_of(session)
        may_send = allowed_kinds(role)
        if kind is not None and kind not in may_send:
            who = role.value if role is not None else repr(session.role)
            problems.append(
                f"signal: the {who} role may not send {kind}; it may send: {', '.join(may_send) or 'nothing'}"
            )
        return problems

    def _refuse(
        self,
        session: SessionRecord,
        earlier: list[SignalRecord],
        arguments: dict[str, Any],
        reason: str,
        *,
        advice: str,
    ) -> Reply:
        assert self.store is not None
        record: SignalRecord | None = None
        try:
            record = self.store.record_signal(
                run_id=session.run_id,
                task_id=session.task_id,
                session_id=session.id,
                attempt=session.attempt,
                seq=len(earlier) + 1,
                kind=_kind_text(arguments),
                payload=kept_payload(arguments),
                accepted=False,
                reason=reason,
            )
        except PmAgentError as exc:  # the refusal stands; its audit record is what failed
            log.error("could not record a refused signal of session %s: %s", session.id, exc)
        return Reply(False, f"Signal refused: {reason}\n{advice}", record)

    def _refuse_unknown(self, arguments: dict[str, Any], reason: str) -> Reply:
        """A call no session owns: recorded refused (session_id None) under the audit run/task if known."""
        assert self.store is not None
        record: SignalRecord | None = None
        if self.audit is not None:
            run_id, task_id = self.audit
            try:
                record = self.store.record_signal(
                    run_id=run_id,
                    task_id=task_id,
                    session_id=None,
                    attempt=0,
                    seq=0,
                    kind=_kind_text(arguments),
                    payload=kept_payload(arguments),
                    accepted=False,
                    reason=reason,
                )
            except PmAgentError as exc:
                log.warning("could not record a refused signal under %s/%s: %s", run_id, task_id, exc)
        if record is None:
            log.warning("signal refused without a session (%s): %r", reason, _kind_text(arguments))
        return Reply(
            False, f"Signal refused: {reason}. Nothing was accepted; tell the user and stop.", record
        )


def _kind_text(arguments: dict[str, Any]) -> str:
    kind = arguments.get("signal")
    return signal_kind(kind) or (kind[:64] if isinstance(kind, str) else "")


def _clip(value: str, limit: int = 64) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def normalised_reason(notes: list[str]) -> str:
    """An accepted signal's `reason`: what was read leniently ("" when it was sent as the schema says)."""
    return f"normalised: {'; '.join(notes)}" if notes else ""


def desk_from_env(environ: dict[str, str] | None = None) -> SignalDesk:
    """The desk for the session named by the environment (`PM_AGENT_DB`, `PM_AGENT_SESSION_TOKEN`)."""
    env = dict(os.environ) if environ is None else environ
    token = env.get(TOKEN_ENV) or None
    run_id, task_id = env.get(RUN_ENV), env.get(TASK_ENV)
    audit = (run_id, task_id) if run_id and task_id else None
    db = env.get(DB_ENV)
    if not db:
        return SignalDesk(None, token, setup_problem=f"{DB_ENV} is not set")
    path = Path(db)
    if not path.is_file():
        return SignalDesk(None, token, setup_problem=f"the store {path} does not exist")
    store: SignalStore | None = open_signal_store(path)  # plain sqlite3: no SQLAlchemy in this process
    if store is None:  # not at this pm-agent's schema, or unreadable: the full way migrates it or says why
        try:
            from pm_agent.store.sqlite import open_store

            store = open_store(path)
        except Exception as exc:  # reported on every call, so the agent can say why it cannot signal
            return SignalDesk(None, token, setup_problem=f"the store {path} cannot be opened: {exc}")
    return SignalDesk(store, token, audit=audit)
