"""Watches one agent session: records its output, kills it when stuck, ends it after a routing signal.

`SessionMonitor.run()` drives a started `AgentSession` to its end:

- every stdout line is stored (`record_session_event`, idempotent on seq) as it arrives, and the
  session's `last_output_at` is kept current (`touch_session`);
- no output for `stuck_after_s` (before the first line: at least `startup_s`): the whole process
  group is killed, status `stuck`;
- past `time_budget_s`: killed, status `killed`;
- while the process runs, the store is polled for the session's accepted signal (the MCP server
  stores it before answering the agent). A non-`complete` signal gives the agent `signal_grace_s`
  to end its turn, then the session is ended: seed 004 kills it to ask the user or launch a role;
- exit with no accepted signal: status `crashed`, with the exit code and the last lines;
- afterwards, with a VCS baseline: an agent that committed, moved HEAD or switched branch makes
  the outcome `tampered` (its result must be refused), recorded as a `pm/tampered` session event;
- afterwards, with a checkout guard (any agent CLI): changes to the main checkout or to pm-agent's
  refs are undone where safe and listed in `outcome.escapes` (`pm/escaped`); the calls the
  confinement refused (the CLI's `permission_denials`, the hook's log) in `outcome.denials` (`pm/denied`).

Store calls run in a worker thread (SQLite may wait on its lock), one at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pm_agent.agents.base import AgentEvent, AgentSession, Denial, EventKind, Outcome, SessionLimits, StopReason
from pm_agent.agents.confine import collect_denials, stream_denials
from pm_agent.errors import PmAgentError
from pm_agent.signals.tokens import TOOL
from pm_agent.store import SessionRecord, SessionStatus, SignalRecord, Store
from pm_agent.vcs import SessionBaseline, detect_tampering_since
from pm_agent.vcs.checkout_guard import CheckoutGuard, CheckoutReport, CheckoutTicket

__all__ = ["MonitorResult", "SessionMonitor", "final_status"]

log = logging.getLogger(__name__)

TOUCH_EVERY_S = 0.5  # at most this often a last_output_at update (each is a write transaction)
# At most this often a look for the session's signal while it runs. A `complete` signal is read when the
# process exits anyway; the look only starts the grace period of the others, which is seconds long.
SIGNAL_POLL_S = 1.0
# Besides, the agent's own stream says when to look: once a line names the signal tool (the model's call),
# every following line (the tool's answer comes after the signal is stored) wakes the watcher at once.
SIGNAL_TOOL = TOOL
BATCH_MAX = 256  # at most this many lines wait for one write (see _record_events)
MONITOR_EVENT_PREFIX = "pm/"  # kinds of the lines the monitor itself adds to the session log


@dataclass(frozen=True)
class MonitorResult:
    """The end of a monitored session: the stored record, the outcome and the accepted signal."""

    record: SessionRecord
    outcome: Outcome
    signal: SignalRecord | None
    status: SessionStatus
    checkout: CheckoutReport | None = None  # what the checkout guard found and did, when it watched


def final_status(outcome: Outcome, signal: SignalRecord | None) -> SessionStatus:
    """The session status for how it ended."""
    if outcome.stuck:
        return SessionStatus.STUCK
    if signal is not None:
        return SessionStatus.SIGNALLED
    if outcome.stopped in (StopReason.TIMEOUT, StopReason.CANCELLED):
        return SessionStatus.KILLED
    return SessionStatus.CRASHED


def _payload(event: AgentEvent) -> Any:
    """What the session log keeps of a line: the line, or for an oversize one its size and start."""
    if event.kind is EventKind.OVERSIZE:
        return {"oversize": True, "size": event.size, "start": event.line[:1024]}
    return event.line


class SessionMonitor:
    """Monitors and records one session; see the module docstring."""

    def __init__(
        self,
        store: Store,
        session_id: int,
        session: AgentSession,
        *,
        limits: SessionLimits,
        worktree: Path | None = None,
        baseline: SessionBaseline | None = None,
        guard: tuple[CheckoutGuard, CheckoutTicket] | None = None,
        denial_log: Path | None = None,
        poll_s: float = 0.25,
        on_exit: Callable[[], None] | None = None,
    ) -> None:
        self.store = store
        self.on_exit = on_exit  # told as soon as the agent's process has ended, before the checks after it
        self.session_id = session_id
        self.session = session
        self.limits = limits
        self.worktree = worktree
        self.baseline = baseline
        self.guard = guard
        self.denial_log = denial_log
        self._denials: list[Denial] = []
        self.poll_s = poll_s
        self.signal: SignalRecord | None = None
        self._signal_at: float | None = None
        self._signal_polled = 0.0
        self._signal_due = asyncio.Event()  # set by a line of the agent's that may follow its signal
        self._signal_called = False
        self._store_lock = asyncio.Lock()
        self._started = time.monotonic()
        self._last_touch = 0.0
        self._agent_id_saved = False
        self._last_seq = 0
        self._seen_output = False
        self._last_event_at: datetime | None = None
        self._touched_at: datetime | None = None
        self.record_errors = 0

    async def _call(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        async with self._store_lock:
            return await asyncio.to_thread(fn, *args, **kwargs)

    async def run(self) -> MonitorResult:
        """Drive the session to its end and record how it ended; kills it if cancelled or if recording fails."""
        recorder: asyncio.Future[None] | None = None
        watchdog: asyncio.Future[None] | None = None
        try:
            await self._call(
                self.store.update_session, self.session_id, status=SessionStatus.RUNNING, pid=self.session.pid
            )
            recorder = asyncio.ensure_future(self._record_events())
            watchdog = asyncio.ensure_future(self._watch())
            outcome = await self.session.wait()
            if self.on_exit is not None:
                self.on_exit()
            watchdog.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watchdog
            await recorder
        except BaseException:
            await asyncio.shield(self._abort(recorder, watchdog))
            raise
        return await self._finish(outcome)

    async def _abort(self, recorder: asyncio.Future[None] | None, watchdog: asyncio.Future[None] | None) -> None:
        """The caller is going away (cancelled, or the store failed): the agent must not run on unwatched."""
        if watchdog is not None:
            watchdog.cancel()
        await self.session.stop(StopReason.CANCELLED)
        outcome = await self.session.wait()
        if recorder is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(recorder, 5.0)
        try:
            await self._finish(outcome)
        except PmAgentError as exc:
            log.warning("session %s: could not record its end: %s", self.session_id, exc)

    # -- while running -------------------------------------------------------------------------
    async def _record_events(self) -> None:
        """Store every line as it comes; the lines that came while a write was under way go in the next one.

        A real session prints in bursts (a message, its tool call, the tool's result), and each line in its own
        transaction cost an fsync'd commit per line. Nothing waits for company: a line that comes alone is written
        at once. At most BATCH_MAX lines wait, so a slow store still slows the reading of the agent's output."""
        pending: list[AgentEvent] = []
        arrived, room = asyncio.Event(), asyncio.Event()
        ended = False

        async def read() -> None:
            nonlocal ended
            try:
                async for event in self.session.events():
                    while len(pending) >= BATCH_MAX:
                        room.clear()
                        await room.wait()
                    pending.append(event)
                    arrived.set()
            finally:
                ended = True
                arrived.set()

        reader = asyncio.ensure_future(read())
        try:
            while pending or not ended:
                await arrived.wait()
                arrived.clear()
                batch = pending[:]
                pending.clear()
                room.set()
                if batch:
                    await self._record(batch)
            await reader  # its error, if it failed, is the caller's
        finally:
            if not reader.done():
                reader.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await reader

    async def _record(self, batch: list[AgentEvent]) -> None:
        self._seen_output = True
        lines = [(event.seq, event.type, _payload(event)) for event in batch]
        now = time.monotonic()
        touch = batch[-1].at if now - self._last_touch >= TOUCH_EVERY_S else None
        if touch is not None:
            self._last_touch = now
        try:
            await self._call(self.store.record_session_events, self.session_id, lines, touch)
            self._touched_at = touch or self._touched_at
        except PmAgentError:
            for line in lines:  # a line the store refuses is logged and skipped; the others are written
                try:
                    await self._call(self.store.record_session_events, self.session_id, [line])
                except PmAgentError as exc:
                    self.record_errors += 1
                    log.warning("session %s: line %s not recorded: %s", self.session_id, line[0], exc)
        for event in batch:
            if event.data is not None and event.type in ("result", "system/permission_denied"):
                self._denials.extend(stream_denials(event.data))
            self._last_seq = max(self._last_seq, event.seq)
            if self.signal is None and (self._signal_called or SIGNAL_TOOL in event.line):
                self._signal_called = True
                self._signal_due.set()
        self._last_event_at = batch[-1].at
        if not self._agent_id_saved and self.session.agent_session_id:
            self._agent_id_saved = True
            try:  # the end of the session records it again
                await self._call(
                    self.store.update_session, self.session_id, agent_session_id=self.session.agent_session_id
                )
            except PmAgentError as exc:
                self.record_errors += 1
                log.warning("session %s: agent session id not recorded: %s", self.session_id, exc)

    async def _watch(self) -> None:
        while self.session.returncode is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._signal_due.wait(), self.poll_s)
            woken = self._signal_due.is_set()
            self._signal_due.clear()
            now = time.monotonic()
            stuck_after = self.limits.stuck_after_s
            if not self._seen_output:
                stuck_after = max(stuck_after, self.limits.startup_s)
            if now - self.session.last_activity >= stuck_after:
                await self._stop(StopReason.STUCK)
                return
            budget = self.limits.time_budget_s
            if budget is not None and now - self._started >= budget:
                await self._stop(StopReason.TIMEOUT)
                return
            if self.signal is None and (woken or now - self._signal_polled >= SIGNAL_POLL_S):
                self._signal_polled = now
                try:
                    self.signal = await self._accepted_signal()
                except PmAgentError as exc:  # a busy or failing store must not stop stuck detection
                    log.warning("session %s: signal poll failed: %s", self.session_id, exc)
                if self.signal is not None:
                    self._signal_at = now
            if (
                self.signal is not None
                and self.signal.kind != "complete"
                and self._signal_at is not None
                and now - self._signal_at >= self.limits.signal_grace_s
            ):
                await self._stop(StopReason.SIGNAL)
                return

    async def _stop(self, reason: StopReason) -> None:
        await self.session.stop(reason)

    async def _accepted_signal(self) -> SignalRecord | None:
        signal: SignalRecord | None = await self._call(self._stored_signal)
        return signal

    def _stored_signal(self) -> SignalRecord | None:
        """The session's accepted signal in the store, if any (a blocking read: call it in a worker thread)."""
        return next((s for s in self.store.signals_for_session(self.session_id) if s.accepted), None)

    def _touch_and_signal(self, touch: datetime | None, signal: SignalRecord | None) -> SignalRecord | None:
        """The session's last output time stored (if given), then its accepted signal (if not known yet)."""
        if touch is not None:
            self.store.touch_session(self.session_id, touch)
        return self._stored_signal() if signal is None else signal

    # -- after the end -------------------------------------------------------------------------
    async def _finish(self, outcome: Outcome) -> MonitorResult:
        touch = self._last_event_at if self._last_event_at != self._touched_at else None

        async def signalled() -> None:
            if touch is not None or self.signal is None:  # both in one worker-thread trip
                self.signal = await self._call(self._touch_and_signal, touch, self.signal)

        # The store's answer and the two checks, which only read git (the guard may restore the main checkout), side
        # by side; what they found is noted in order after.
        (reason, denials), report, _ = await asyncio.gather(self._tampering(), self._checkout(), signalled())
        outcome.stuck = outcome.stopped is StopReason.STUCK
        status = final_status(outcome, self.signal)
        outcome.crashed = status is SessionStatus.CRASHED
        if outcome.crashed and outcome.error is None:
            outcome.error = f"the agent exited (code {outcome.exit_code}) without an accepted signal"
        if outcome.stuck:
            outcome.error = f"no output for {self.limits.stuck_after_s:g} s: killed as stuck"
        if reason is not None:
            outcome.tampered = True
            outcome.tamper_reason = reason
            await self._note("tampered", {"reason": reason})
        await self._confinement(outcome, denials, report)
        if outcome.stopped is not None:
            await self._note("stopped", {"reason": outcome.stopped.value, "exit_code": outcome.exit_code})
        record: SessionRecord = await self._call(
            self.store.update_session,
            self.session_id,
            status=status,
            exit_code=outcome.exit_code,
            ended_at=outcome.ended_at or datetime.now(UTC),
            agent_session_id=outcome.agent_session_id,
            cost_usd=outcome.cost_usd,
            input_tokens=outcome.input_tokens,
            output_tokens=outcome.output_tokens,
            last_lines="\n".join(outcome.report_lines()),
        )
        return MonitorResult(record, outcome, self.signal, status, report)

    async def _tampering(self) -> tuple[str | None, list[Denial]]:
        """Whether the agent committed, moved HEAD or switched branch in its worktree (None: it did not), and the
        calls the confinement refused: one worker-thread trip for both."""
        baseline, worktree = self.baseline, self.worktree

        def look() -> tuple[str | None, list[Denial]]:
            reason = None if baseline is None or worktree is None else detect_tampering_since(worktree, baseline)
            return reason, collect_denials(self._denials, self.denial_log)

        return await asyncio.to_thread(look)

    async def _checkout(self) -> CheckoutReport | None:
        """The checkout guard's report (None without a guard)."""
        if self.guard is None:
            return None
        guard, ticket = self.guard
        label = f"session-{self.session_id}"
        try:
            report = await guard.check_after(ticket, label)
        except PmAgentError as exc:  # unchecked is not clean: the result is refused like an escape
            report = CheckoutReport(label, changes=[f"the main checkout could not be checked: {exc}"])
            report.unrestored.append("the main checkout (not checked)")
        return report

    async def _confinement(
        self, outcome: Outcome, denials: list[Denial], report: CheckoutReport | None
    ) -> CheckoutReport | None:
        """What the confinement refused during the session, and what got out of the worktree anyway, noted."""
        outcome.denials = denials
        for denial in outcome.denials:
            await self._note("denied", {"tool": denial.tool, "target": denial.target, "by": denial.by,
                                        "reason": denial.reason})  # fmt: skip
        if report is None:
            return None
        if report.escaped:
            outcome.escapes = report.lines()
            outcome.unrestored = list(report.unrestored)
            await self._note(
                "escaped", {"changes": outcome.escapes, "restored": report.restored, "unrestored": report.unrestored}
            )
        return report

    async def _note(self, what: str, payload: dict[str, Any]) -> None:
        """A line of the monitor's own in the session log (kind `pm/<what>`)."""
        self._last_seq += 1
        kind = MONITOR_EVENT_PREFIX + what
        await self._call(self.store.record_session_event, self.session_id, self._last_seq, kind, payload)
