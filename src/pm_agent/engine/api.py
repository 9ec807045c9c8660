"""The library entry points the CLI calls: run a plan, resume a run, answer an escalation."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from pm_agent.agents.base import AgentRunner
from pm_agent.config import PmConfig, load_config
from pm_agent.engine.events import Listener
from pm_agent.engine.final import FinalResult, final_release_gate
from pm_agent.engine.loop import LoopOutcome, PmLoop, resume_run, start_run
from pm_agent.engine.runctx import RunContext
from pm_agent.human.channels import EscalationChannel
from pm_agent.reports.escalation import Escalation
from pm_agent.store import EscalationRecord, RunStatus, default_store_path, open_store


@dataclass(frozen=True)
class RunResult:
    """Where a run stands when `run_plan` or `resume` returns."""

    run_id: str
    working_branch: str
    outcome: LoopOutcome
    final: FinalResult | None

    @property
    def exit_code(self) -> int:
        """0 released, 3 waiting for a human, 1 anything else."""
        if self.final is not None and self.final.passed:
            return 0
        if self.outcome.waiting or (self.final is not None and self.final.waiting):
            return 3
        return 1


async def drive_run(rc: RunContext, poll_s: float) -> RunResult:
    """Loop, final release gate, and back into the loop while the gate opens remediation tasks."""
    final: FinalResult | None = None
    for _ in range(rc.config.max_release_rounds):
        outcome = await PmLoop(rc).drive(poll_s=poll_s)
        if outcome.blocked and not outcome.waiting and not rc.aborted:  # aborted: its own escalation says why
            present_blockers(rc, outcome)
        if not outcome.all_done or rc.aborted:
            break
        final = await final_release_gate(rc)
        if not final.reentered:
            break
    else:
        outcome = await PmLoop(rc).drive(poll_s=poll_s)
    status = RunStatus.COMPLETED if final is not None and final.passed else RunStatus.STOPPED
    rc.store.set_run_status(rc.run_id, status)
    return RunResult(rc.run_id, rc.run.working_branch, outcome, final)


def present_blockers(rc: RunContext, outcome: LoopOutcome) -> None:
    """Seed 001: no task available (all blocked) → stop and present the blockers."""
    records = {r.task_id: r for r in rc.store.list_tasks(rc.run_id)}
    lines = []
    for task_id in outcome.blocked:
        deps = records[task_id].task().dependency_ids()
        stuck = [f"task-{d} ({records[d].state})" for d in deps if records[d].state != "completed"]
        lines.append(f"task-{task_id} waits on " + (", ".join(stuck) or "nothing recorded"))
    body = Escalation(
        problem="no task can run: " + "; ".join(lines),
        impact=f"{len(outcome.blocked)} task(s) cannot start; the release gate cannot run",
        options=[
            "fix the failed dependencies by hand, then `pm-agent resume`",
            "change the plan and start a new run",
        ],
        recommended="read `pm-agent log` of the failed tasks first",
        blocking=False,
    )
    rc.open_escalation(None, "all-blocked", body)


def run_plan(
    repo: Path,
    plan: Path,
    design: Path | None,
    *,
    listener: Listener,
    channel: EscalationChannel,
    config: PmConfig | None = None,
    slots: int | None = None,
    runner: AgentRunner | None = None,
    poll_s: float = 0.5,
) -> RunResult:
    """Drive a plan from nothing to a release manifest (or to the first point a human must act)."""
    config = config or load_config(repo)
    if slots is not None:
        config = config.model_copy(update={"max_parallel_agents": slots})
    rc = start_run(repo, plan, design, listener=listener, channel=channel, config=config, runner=runner)
    try:
        return asyncio.run(drive_run(rc, poll_s))
    finally:
        rc.store.close()


def resume(
    repo: Path,
    run_id: str | None,
    *,
    listener: Listener,
    channel: EscalationChannel,
    runner: AgentRunner | None = None,
    poll_s: float = 0.5,
) -> RunResult:
    """Continue a stopped or crashed run where the store says it is."""
    rc = resume_run(repo, run_id, listener=listener, channel=channel, runner=runner)
    try:
        return asyncio.run(drive_run(rc, poll_s))
    finally:
        rc.store.close()


def answer(repo: Path, escalation_id: int, text: str) -> EscalationRecord:
    """Answer an open escalation; a running pm-agent picks it up, a stopped one on `pm-agent resume`."""
    store = open_store(default_store_path(repo))
    try:
        return store.answer_escalation(escalation_id, text)
    finally:
        store.close()


def escalations(repo: Path, *, include_closed: bool = False) -> list[EscalationRecord]:
    """Escalations of every run, open ones only unless asked."""
    path = default_store_path(repo)
    if not path.exists():
        return []
    store = open_store(path)
    try:
        found = store.list_escalations()
        return found if include_closed else [e for e in found if e.status.value == "open"]
    finally:
        store.close()
