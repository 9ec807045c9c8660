"""Escalation channels: how a question from the PM reaches a human and the answer comes back.

Every answer ends in the store (`answer_escalation`), whichever channel carried it, so a run can
be answered inline, from another shell (`pm-agent answer`), or by a scripted user in the demo.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, TextIO

from pm_agent.store import EscalationRecord, Store


class EscalationChannel(Protocol):
    """Shows escalations to a human; may collect the answer itself."""

    interactive: bool  # True: the run waits for answers instead of stopping

    async def escalate(self, store: Store, escalation: EscalationRecord, text: str) -> None:
        """Present the escalation; an interactive channel may answer it through the store."""


@dataclass
class PrintOnlyChannel:
    """Prints the escalation and how to answer it from another shell; never waits."""

    out: TextIO = field(default_factory=lambda: sys.stdout)
    interactive: bool = False

    async def escalate(self, store: Store, escalation: EscalationRecord, text: str) -> None:
        """Say how to answer it (the run's listener has shown the escalation itself)."""
        self.out.write(f'Answer escalation #{escalation.id} with: pm-agent answer {escalation.id} "..."\n')
        self.out.flush()


@dataclass
class TerminalChannel:
    """Asks in the terminal that runs `pm-agent run`; an empty line defers to `pm-agent answer`."""

    read_line: Callable[[], str] = field(default_factory=lambda: sys.stdin.readline)
    out: TextIO = field(default_factory=lambda: sys.stdout)
    interactive: bool = True

    async def escalate(self, store: Store, escalation: EscalationRecord, text: str) -> None:
        """Print it and read one answer line (in a thread, so other slots keep working)."""
        self.out.write(f"Your answer to escalation #{escalation.id} (empty: later, with pm-agent answer): ")
        self.out.flush()
        line = (await asyncio.to_thread(self.read_line)).strip()
        if line:
            current = await asyncio.to_thread(store.get_escalation, escalation.id)
            if current.status.value == "open":
                await asyncio.to_thread(store.answer_escalation, escalation.id, line)


@dataclass
class ScriptedChannel:
    """The demo's scripted user: answers from a function of the escalation, and says so."""

    answer_for: Callable[[EscalationRecord], str | None]
    out: TextIO = field(default_factory=lambda: sys.stdout)
    interactive: bool = True

    async def escalate(self, store: Store, escalation: EscalationRecord, text: str) -> None:
        """Answer as the scripted user, and say so."""
        answer = self.answer_for(escalation)
        if answer is not None:
            self.out.write(f"[scripted user] answers escalation #{escalation.id}: {answer}\n")
            await asyncio.to_thread(store.answer_escalation, escalation.id, answer)
        self.out.flush()
