"""`pm-agent new "REQUEST"`: a request in, requirements and a plan out, then the run of that plan.

    result = new_request(repo, "Add a --json flag to the report", listener=..., channel=...)
    result = resume_request(repo, None, listener=..., channel=...)  # None: not an intake run

The intake is a run of its own in the store, with two pm-internal tasks (`requirements`, role
analyst; `plan`, role planner). Sessions, signal_back, the session monitor, escalations, `pm-agent
answer` and resume work on it unchanged, because they are keyed by (run, task). It is a separate
run, not two tasks inside the plan's run, because the PM loop, its integrity checks, the status
views and the release manifest read every task of a run: in a run of their own the intake tasks
are never scheduled, never counted as delivered work, and none of those parts needs to know them.
Once the plan is approved and committed, the intake run is `completed`, its `intake.handoff`
event names the plan, and the plan runs exactly as `pm-agent run` runs it (`run_plan`), from a
copy of the committed files in `.pm-agent/intake/<intake run>/` (the run's plan_doc, linking them).
"""

from __future__ import annotations

import asyncio
import secrets
import shutil
import signal
import sys
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

from pm_agent.agents.base import AgentRunner
from pm_agent.agents.factory import limits_from_config
from pm_agent.agents.session import AgentHost
from pm_agent.config import PmConfig, load_config
from pm_agent.engine.api import RunResult, run_plan
from pm_agent.engine.events import Listener
from pm_agent.engine.plansync import INTAKE_DIR
from pm_agent.engine.reconfig import RunOverrides
from pm_agent.engine.runlock import run_lock
from pm_agent.engine.startup import (
    check_agent,
    check_branch,
    check_login,
    exclude_state_dir,
    repo_root,
    store_exists,
    uncommitted_files,
)
from pm_agent.engine.stopping import Stopped, run_until_signal
from pm_agent.errors import InputError
from pm_agent.human.channels import EscalationChannel
from pm_agent.intake.agents import Phase
from pm_agent.intake.context import PLAN, REQUIREMENTS, STARTED, IntakeCtx, IntakeInfo
from pm_agent.intake.docs import IntakePaths
from pm_agent.intake.drift import note_drift
from pm_agent.intake.flow import drive_intake
from pm_agent.plan.models import Dependency, Plan, Task, Tier
from pm_agent.store import RunRecord, RunStatus, Store, default_store_path, open_store
from pm_agent.vcs import Git, working_branch
from pm_agent.vcs.checkout_guard import CheckoutGuard

__all__ = ["HANDOFF", "RequestResult", "intake_run_of", "new_request", "resume_request"]

HANDOFF = "intake.handoff"


@dataclass(frozen=True)
class RequestResult:
    """How far a request got: its intake, and the run of its plan once there is one."""

    intake_run: str
    intake: Phase
    run: RunResult | None = None
    stopped_by: signal.Signals | None = None

    @property
    def exit_code(self) -> int:
        """The plan run's exit code; before it: 3 waiting for a human, 128+N stopped, 1 aborted."""
        if self.run is not None:
            return self.run.exit_code
        if self.stopped_by is not None:
            return 128 + int(self.stopped_by)
        return 3 if self.intake is Phase.WAITING else 1


@dataclass(frozen=True)
class _Options:
    listener: Listener
    channel: EscalationChannel
    runner: AgentRunner
    slots: int | None
    agent: str | None
    poll_s: float
    allow_dirty: bool


def intake_plan(paths: IntakePaths, plan_file: Path, design_file: Path) -> Plan:
    """The intake run's two pm-internal tasks (a Plan only because a run is created from one)."""
    tasks = [
        Task(id=REQUIREMENTS, title="Requirements (analyst)", tier=Tier.LOW, ownership="intake"),
        Task(
            id=PLAN,
            title="Plan (planner)",
            tier=Tier.LOW,
            ownership="intake",
            depends_on=[Dependency(task_id=REQUIREMENTS)],
        ),
    ]
    return Plan(
        plan_id=paths.plan_id,
        path=str(plan_file),
        design_path=str(design_file),
        tasks=tasks,
        queue=[REQUIREMENTS, PLAN],
    )


def _check_new(
    root: Path, paths: IntakePaths, config: PmConfig, allow_dirty: bool, runner: AgentRunner | None
) -> tuple[str, AgentRunner]:
    """Every check before `new` writes anything; the working branch's name and the agent runner (`runner`, else the
    configuration's)."""
    git = Git(root)
    branch = config.working_branch or working_branch(paths.plan_id)
    check_branch(git, branch)
    if git.branch_exists(branch):
        raise InputError(
            f"the working branch {branch!r} exists already (an earlier run or request): "
            "pass --slug NAME to name this request differently, or delete the branch",
            path=root,
        )
    for rel in (paths.plan_rel, paths.design_rel):
        if (root / rel).exists():
            raise InputError(f"{rel} exists already: pass --slug NAME, or run it with `pm-agent run`", path=root)
    configured = check_agent(root, config)
    dirty = uncommitted_files(git)
    if dirty and not allow_dirty:
        raise InputError(
            f"uncommitted changes: {', '.join(dirty[:10])}. The analyst and planner work from HEAD and would never "
            "see them: commit or stash them (or pass --allow-dirty)",
            path=root,
        )
    runner = runner or configured
    check_login(root, config, runner)
    return branch, runner


def new_request(
    repo: Path,
    request: str,
    *,
    listener: Listener,
    channel: EscalationChannel,
    design: Path | None = None,
    yes: bool = False,
    config: PmConfig | None = None,
    slots: int | None = None,
    agent: str | None = None,
    runner: AgentRunner | None = None,
    poll_s: float = 0.5,
    allow_dirty: bool = False,
    slug: str | None = None,
    today: date | None = None,
) -> RequestResult:
    """From a request to requirements, a plan, its approval and commits, then the plan's run.

    InputError (nothing written) for an empty request, a bad repository, configuration or working
    branch, or uncommitted changes without `allow_dirty`."""
    if not request.strip():
        raise InputError("the request is empty: say what you want built")
    root = repo_root(repo)
    overrides = RunOverrides(slots, agent)
    config = overrides.apply(config or load_config(root))
    paths = IntakePaths.of(request, today or datetime.now(UTC).astimezone().date(), slug)
    branch, runner = _check_new(root, paths, config, allow_dirty, runner)
    user_design = design.read_text(encoding="utf-8") if design is not None else ""
    opts = _Options(listener, channel, runner, slots, agent, poll_s, allow_dirty)
    with run_lock(root, "new"):
        git = Git(root)
        exclude_state_dir(git)
        run_id = secrets.token_hex(4)
        state_dir = default_store_path(root).parent
        worktree = state_dir / "worktrees" / run_id / "intake"
        worktree.parent.mkdir(parents=True, exist_ok=True)
        baseline = git.head_sha()
        git.create_branch(branch, baseline)
        git.worktree_add(worktree, branch)
        info = IntakeInfo(
            request.strip(), paths.design_rel, paths.plan_rel, branch, str(worktree), user_design, yes, allow_dirty
        )
        store = open_store(default_store_path(root))
        try:
            plan = intake_plan(paths, info.plan_file, info.design_file)
            store.create_run(
                plan,
                baseline_sha=baseline,
                working_branch=branch,
                shared_context={},
                config=config.model_dump(mode="json"),
                run_id=run_id,
            )
            store.append_event(run_id, STARTED, info.payload())
            listener.emit("intake.started", f"request {run_id}: {paths.design_rel} and {paths.plan_rel} on {branch}")
            result = _drive(root, store, config, store.get_run(run_id), info, opts)
        finally:
            store.close()
    return _after(root, result, config, opts)


def intake_run_of(store: Store, run_id: str | None) -> tuple[RunRecord, IntakeInfo] | None:
    """The run (given, else the latest) when it is a request's intake, with its request; else None."""
    run = store.get_run(run_id) if run_id else store.latest_run()
    if run is None:
        return None
    started = [e for e in store.events(run.id, limit=5) if e.kind == STARTED]
    return (run, IntakeInfo.from_payload(started[0].payload)) if started else None


def resume_request(
    repo: Path,
    run_id: str | None,
    *,
    listener: Listener,
    channel: EscalationChannel,
    runner: AgentRunner | None = None,
    poll_s: float = 0.5,
) -> RequestResult | None:
    """Continue a request's intake (or start its plan's run, if the hand-off was cut off); None when
    the run is not an intake, for `pm-agent resume` to continue as a plan run."""
    if not store_exists(repo):
        return None
    with run_lock(repo, "resume"):
        store = open_store(default_store_path(repo))
        try:
            found = intake_run_of(store, run_id)
            if found is None:
                plan_run = store.get_run(run_id) if run_id else store.latest_run()
                if plan_run is not None:  # a request's plan run: its requirements may have changed meanwhile
                    note_drift(repo, store, plan_run, listener)
                return None
            run, info = found
            config = PmConfig.model_validate(run.config)
            runner = runner or check_agent(repo, config)
            check_login(repo, config, runner)
            opts = _Options(listener, channel, runner, None, None, poll_s, info.allow_dirty)
            if any(e.kind == HANDOFF for e in store.events(run.id)):
                result = RequestResult(run.id, Phase.DONE)
            else:
                store.set_run_status(run.id, RunStatus.RUNNING)
                listener.emit("run.resumed", f"request {run.id} resumed")
                result = _drive(repo, store, config, run, info, opts)
        finally:
            store.close()
    return _after(repo, result, config, opts)


def _drive(
    repo: Path, store: Store, config: PmConfig, run: RunRecord, info: IntakeInfo, opts: _Options
) -> RequestResult:
    """The intake until it is approved and committed, waits, fails, or a signal stops it."""
    db_path = default_store_path(repo)
    host = AgentHost(
        store,
        db_path,
        opts.runner,
        limits=limits_from_config(config.agent),
        python=sys.executable,
        checkout_guard=CheckoutGuard(repo, db_path.parent / "quarantine"),
        serve_signals=True,
    )
    ic = IntakeCtx(repo, store, config, host, run, info, opts.listener, opts.channel)

    def stopping(sig: signal.Signals) -> None:
        ic.emit("run.stopping", f"{sig.name}: stopping the request; its agent session is ended")

    try:
        outcome = asyncio.run(run_until_signal(drive_intake(ic), stopping))
    finally:
        host.close()
    if isinstance(outcome, Stopped):
        store.set_run_status(run.id, RunStatus.STOPPED)
        store.append_event(run.id, "run.stopped", {"signal": outcome.signal.name})
        return RequestResult(run.id, Phase.WAITING, stopped_by=outcome.signal)
    if outcome is Phase.DONE:
        _handoff(ic)
    else:
        store.set_run_status(run.id, RunStatus.FAILED if outcome is Phase.FAILED else RunStatus.STOPPED)
    return RequestResult(run.id, outcome)


def handoff_dir(repo: Path, run_id: str) -> Path:
    """Where the approved documents are copied for the plan's run: `.pm-agent/intake/<intake run>/`."""
    return default_store_path(repo).parent / INTAKE_DIR / run_id


def _handoff(ic: IntakeCtx) -> None:
    """Copy the committed documents out of the working branch, drop the intake worktree, mark it done."""
    dest = handoff_dir(ic.repo, ic.run_id)
    dest.mkdir(parents=True, exist_ok=True)
    git = Git(ic.repo)
    for rel in (ic.info.design_rel, ic.info.plan_rel):
        (dest / Path(rel).name).write_text(git.run("show", f"{ic.info.branch}:{rel}"), encoding="utf-8")
    if Path(ic.info.worktree).exists():
        git.worktree_remove(ic.info.worktree, force=True)
    shutil.rmtree(Path(ic.info.worktree).parent, ignore_errors=True)
    ic.store.set_run_status(ic.run_id, RunStatus.COMPLETED)
    ic.record(
        HANDOFF, {"plan": str(dest / Path(ic.info.plan_rel).name), "design": str(dest / Path(ic.info.design_rel).name)}
    )
    ic.emit("intake.handoff", f"request {ic.run_id} approved and committed; running its plan")


def _after(repo: Path, result: RequestResult, config: PmConfig, opts: _Options) -> RequestResult:
    """Once the intake is done: the plan's run, exactly as `pm-agent run` starts it."""
    if result.intake is not Phase.DONE or result.stopped_by is not None:
        return result
    store = open_store(default_store_path(repo))
    try:
        handoff = [e for e in store.events(result.intake_run) if e.kind == HANDOFF][-1].payload
    finally:
        store.close()
    run = run_plan(
        repo,
        Path(str(handoff["plan"])),
        Path(str(handoff["design"])),
        listener=opts.listener,
        channel=opts.channel,
        config=config,
        slots=opts.slots,
        agent=opts.agent,
        runner=opts.runner,
        poll_s=opts.poll_s,
        allow_dirty=opts.allow_dirty,
    )
    return RequestResult(result.intake_run, Phase.DONE, run)
