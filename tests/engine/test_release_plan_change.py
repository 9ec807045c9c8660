"""An unanswered plan-change escalation holds the release: the final release gate refuses (waiting for a human)
until it is settled, then goes on as before. No agent session runs here."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from pm_agent.engine.final import final_release_gate
from pm_agent.engine.reconcile import open_plan_escalations
from pm_agent.reports.escalation import Escalation

from .calc_plan import ADDITION, plan
from .conftest import Target

CHANGE = Escalation(
    problem="the plan changed task-1, which is completed",
    impact="the change is not applied until you answer",
    options=["continue", "restart", "reopen"],
    recommended="continue",
)


def test_an_open_plan_change_escalation_holds_the_release(target: Callable[[str], Target]) -> None:
    t = target(plan(ADDITION))
    rc = t.start()
    try:
        esc = rc.open_escalation(None, "plan-change:task-1", CHANGE)
        assert open_plan_escalations(rc.store, rc.run_id) == 1
        held = asyncio.run(final_release_gate(rc))
        assert (held.passed, held.waiting, held.reentered) == (False, True, False)
        assert held.problems == [f"plan-change escalation #{esc.id} (task-1) waits for an answer"]
        assert held.checks == []  # refused before any check ran
        assert "final.held" in t.listener.kinds()

        rc.store.answer_escalation(esc.id, "continue")  # answered, not yet acted on: still held
        assert asyncio.run(final_release_gate(rc)).waiting

        rc.store.mark_escalation_applied(esc.id)
        after = asyncio.run(final_release_gate(rc))
        assert not after.waiting
        assert after.problems == ["task-1 is not completed"]  # the gate went on to its own checks
    finally:
        rc.store.close()
