"""While the GitHub bridge runs, an escalation keeps the run waiting for its answer (from any channel).

Without it, a run whose tasks all wait for answers stops (exit 3) and is answered later with `pm-agent answer`
and `pm-agent resume`. With the bridge the team answers on GitHub, so the run waits for them, as it waits in
an interactive terminal: the wrapped channel shows the escalation (or prompts), then this one waits until the
store says it was answered. SIGINT/SIGTERM still stop the run; `pm-agent resume` picks it up again.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from pm_agent.human.channels import EscalationChannel
from pm_agent.reports.escalation import render_stored
from pm_agent.store import EscalationRecord, EscalationStatus, Store


@dataclass
class WaitForGitHub:
    """Show the escalation through `inner`, then wait until it is answered (on GitHub, or anywhere else)."""

    inner: EscalationChannel
    poll_s: float = 0.5

    async def escalate(self, store: Store, escalation: EscalationRecord, text: str) -> None:
        """Present it, then wait for the answer."""
        await self.inner.escalate(store, escalation, text)
        while True:  # the answer lands in the store from another thread or process: nothing to wait on but it
            current = await asyncio.to_thread(store.get_escalation, escalation.id)
            if current.status is not EscalationStatus.OPEN:
                return
            await asyncio.sleep(self.poll_s)


def still_open(store: Store, run_id: str) -> list[tuple[EscalationRecord, str]]:
    """The run's open blocking escalations with their text: a resumed run waits for them again."""
    found = []
    for esc in store.list_escalations(run_id, EscalationStatus.OPEN):
        if esc.blocking:
            found.append((esc, render_stored(esc)))
    return found
