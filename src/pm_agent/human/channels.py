"""Escalation channels: how a question from the PM reaches a human and the answer comes back.

Every answer ends in the store (`answer_escalation`), whichever channel carried it, so a run can
be answered inline, from another shell (`pm-agent answer`), or by a scripted user in the demo.
"""

from __future__ import annotations

import asyncio
import queue
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, TextIO

from pm_agent.store import EscalationRecord, EscalationStatus, Store


class EscalationChannel(Protocol):
    """Shows escalations to a human; may collect the answer itself."""

    async def escalate(self, store: Store, escalation: EscalationRecord, text: str) -> None:
        """Present the escalation; an interactive channel may answer it through the store."""


@dataclass
class PrintOnlyChannel:
    """Prints the escalation and how to answer it from another shell; never waits."""

    out: TextIO = field(default_factory=lambda: sys.stdout)

    async def escalate(self, store: Store, escalation: EscalationRecord, text: str) -> None:
        """Say how to answer it (the run's listener has shown the escalation itself)."""
        self.out.write(f'Answer escalation #{escalation.id} with: pm-agent answer {escalation.id} "..."\n')
        self.out.flush()


@dataclass
class TerminalChannel:
    """Asks in the terminal that runs `pm-agent run`; an empty line defers to `pm-agent answer`.

    One daemon thread reads the terminal, so a pending prompt never holds up the loop or the exit,
    and an answer given meanwhile from another shell (`pm-agent answer`) ends the prompt.
    """

    read_line: Callable[[], str] = field(default_factory=lambda: sys.stdin.readline)
    out: TextIO = field(default_factory=lambda: sys.stdout)
    poll_s: float = 0.5
    _lines: queue.Queue[str] = field(default_factory=queue.Queue, init=False, repr=False)
    _reader: threading.Thread | None = field(default=None, init=False, repr=False)
    _one_at_a_time: asyncio.Lock = field(default_factory=asyncio.Lock, init=False, repr=False)

    def _pump(self) -> None:
        while True:
            line = self.read_line()
            self._lines.put(line)
            if line == "":  # end of input
                return

    async def escalate(self, store: Store, escalation: EscalationRecord, text: str) -> None:
        """Prompt, then wait for a typed line or for the escalation to be answered elsewhere."""
        async with self._one_at_a_time:
            if (await asyncio.to_thread(store.get_escalation, escalation.id)).status is not EscalationStatus.OPEN:
                return
            self.out.write(f"Your answer to escalation #{escalation.id} (empty: later, with pm-agent answer): ")
            self.out.flush()
            if self._reader is None:
                self._reader = threading.Thread(target=self._pump, name="pm-agent-stdin", daemon=True)
                self._reader.start()
            while True:
                try:
                    line = (await asyncio.to_thread(self._lines.get, True, self.poll_s)).strip()
                    break
                except queue.Empty:
                    current = await asyncio.to_thread(store.get_escalation, escalation.id)
                    if current.status is not EscalationStatus.OPEN:
                        self.out.write(f"\n(escalation #{escalation.id} was answered elsewhere)\n")
                        self.out.flush()
                        return
            if line:
                current = await asyncio.to_thread(store.get_escalation, escalation.id)
                if current.status is EscalationStatus.OPEN:
                    await asyncio.to_thread(store.answer_escalation, escalation.id, line)


@dataclass
class ScriptedChannel:
    """The demo's scripted user: answers from a function of the escalation, and says so."""

    answer_for: Callable[[EscalationRecord], str | None]
    out: TextIO = field(default_factory=lambda: sys.stdout)

    async def escalate(self, store: Store, escalation: EscalationRecord, text: str) -> None:
        """Answer as the scripted user, and say so."""
        answer = self.answer_for(escalation)
        if answer is not None:
            self.out.write(f"[scripted user] answers escalation #{escalation.id}: {answer}\n")
            await asyncio.to_thread(store.answer_escalation, escalation.id, answer)
        self.out.flush()
