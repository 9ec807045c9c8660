"""The library entry points the CLI calls: run a plan, resume a run, answer an escalation."""

from __future__ import annotations

import asyncio
import gc
import shutil
import signal
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pm_agent.agents.base import AgentRunner
from pm_agent.config import PmConfig, load_config
from pm_agent.engine.events import Listener
from pm_agent.engine.final import FinalResult, final_release_gate
from pm_agent.engine.launch import resume_run, start_run
from pm_agent.engine.loop import LoopOutcome, PmLoop
from pm_agent.engine.reconfig import RunOverrides
from pm_agent.engine.runctx import RunContext
from pm_agent.engine.runlock import run_lock
from pm_agent.engine.startup import check_start, repo_root, store_exists
from pm_agent.engine.stopping import Stopped, run_until_signal
from pm_agent.errors import ConfigError, InputError, NotFoundError
from pm_agent.human.channels import EscalationChannel
from pm_agent.internal_tasks import is_pm_internal
from pm_agent.preflight.baseline import PreflightError, remove_stale_preflight
from pm_agent.reports.escalation import Escalation
from pm_agent.store import EscalationRecord, EscalationStatus, RunStatus, default_store_path, open_store
from pm_agent.vcs import Git

if TYPE_CHECKING:  # the bridge's modules are imported only when github.repo is set
    from pm_agent.github.api import GitHubApi
    from pm_agent.github.bridge import Bridge


@dataclass(frozen=True)
class RunResult:
    """Where a run stands when `run_plan` or `resume` returns."""

    run_id: str
    working_branch: str
    outcome: LoopOutcome
    final: FinalResult | None
    stopped_by: signal.Signals | None = None  # SIGINT or SIGTERM ended the run before it ended itself

    @property
    def exit_code(self) -> int:
        """0 released, 3 waiting for a human, 128+N stopped by signal N, 1 anything else."""
        if self.stopped_by is not None:
            return 128 + int(self.stopped_by)
        if self.final is not None and self.final.passed:
            return 0
        if self.outcome.waiting or (self.final is not None and self.final.waiting):
            return 3
        return 1


async def drive_run(rc: RunContext, poll_s: float) -> RunResult:
    """Loop, final release gate, and back into the loop while the gate opens remediation tasks."""
    # Every slot runs blocking work in threads (gate commands for minutes, git, the monitor's store writes);
    # asyncio's default pool (cpus + 4 threads) would make the slots queue for each other's threads.
    workers = 4 * rc.config.max_parallel_agents + 8
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(workers, thread_name_prefix="pm-agent"))
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
    agent: str | None = None,
    runner: AgentRunner | None = None,
    poll_s: float = 0.5,
    allow_dirty: bool = False,
) -> RunResult:
    """Drive a plan from nothing to a release manifest (or to the first point a human must act).

    Bad input (not a repository, no commits, a bad working branch or agent setup, uncommitted
    changes without `allow_dirty`) raises InputError before anything is written; another live run
    on the repository raises InputError naming its pid. `slots` and `agent` override the
    configuration, and a later `resume` applies them again.
    """
    overrides = RunOverrides(slots, agent)
    root = repo_root(repo)
    config = overrides.apply(config or load_config(root))
    checked = check_start(root, plan, design, config, allow_dirty=allow_dirty, runner=runner)
    github = _github_api(config)  # a missing token is an error before anything is written
    state_dir = default_store_path(checked.repo).parent
    fresh = not state_dir.exists()
    with run_lock(checked.repo, "run"):
        if github is not None:  # from the run's first write on, state changes queue their GitHub actions
            from pm_agent.github.bridge import enable

            enable(default_store_path(checked.repo))
        try:
            rc = start_run(
                checked.repo, plan, design, listener=listener, channel=channel, runner=runner, checked=checked
            )
        except PreflightError:
            if fresh:  # only the lock made .pm-agent/: a run that never started leaves nothing behind
                shutil.rmtree(state_dir, ignore_errors=True)
            raise
        overrides.record(rc.store, rc.run_id)
        return _drive(rc, poll_s, github)


def resume(
    repo: Path,
    run_id: str | None,
    *,
    listener: Listener,
    channel: EscalationChannel,
    runner: AgentRunner | None = None,
    poll_s: float = 0.5,
    reread_config: bool = False,
) -> RunResult:
    """Continue a stopped or crashed run where the store says it is; `reread_config`: take today's pm-agent.yaml."""
    state_dir = default_store_path(repo).parent
    if state_dir.exists() and not store_exists(repo):
        # A run killed during its preflight left a worktree and no run; under the lock, so never a live one's.
        with run_lock(repo, "resume"):
            remove_stale_preflight(Git(repo), state_dir)
    if not store_exists(repo):  # checked before the lock, which would create .pm-agent/
        raise NotFoundError(
            f"no pm-agent state in {repo}: nothing to resume; start with `pm-agent run PLAN.md`"
        )
    with run_lock(repo, "resume"):
        rc = resume_run(repo, run_id, listener=listener, channel=channel, runner=runner, reread_config=reread_config)
        try:
            github = _github_api(rc.config)
        except BaseException:
            rc.store.close()
            raise
        return _drive(rc, poll_s, github)


def _drive(rc: RunContext, poll_s: float, github: GitHubApi | None = None) -> RunResult:
    """Drive the run until it ends or SIGINT/SIGTERM stops it (with the GitHub bridge beside it when configured);
    the bridge is flushed (bounded) and the store closed either way."""

    def stopping(sig: signal.Signals) -> None:
        rc.emit("run.stopping", f"{sig.name}: stopping the run; agents and gate commands in flight are ended")

    bridge: Bridge | None = None
    frozen = _freeze_startup()
    try:
        if github is not None:
            bridge = _start_bridge(rc, github)
        result = asyncio.run(run_until_signal(drive_run(rc, poll_s), stopping))
        if isinstance(result, Stopped):
            return _stopped(rc, result.signal)
        return result
    finally:
        if bridge is not None:
            left = bridge.stop()
            if left:
                rc.emit("github.pending", f"GitHub: {left} action(s) not sent yet; they go out on `pm-agent resume`")
        rc.host.close()
        rc.store.close()
        if frozen:
            gc.unfreeze()


def _freeze_startup() -> bool:
    """Leave what the start made (modules, the plan, the run's context) out of the collector's passes.

    They live as long as the run, and every pass over the oldest generation walked them again, holding
    the loop up to ~50 ms. Garbage among them is kept until the thaw. True when frozen here (nothing else
    had frozen any: a thaw thaws everything), for the caller to thaw at the end."""
    if gc.get_freeze_count():
        return False
    gc.freeze()
    return True


def _github_api(config: PmConfig) -> GitHubApi | None:
    """The GitHub client when `github.repo` is set (ConfigError naming the token's variable when it is unset)."""
    if config.github.repo is None:
        return None
    from pm_agent.github.bridge import github_api

    return github_api(config)


def _start_bridge(rc: RunContext, github: GitHubApi) -> Bridge:
    """Start the bridge thread; escalations then wait for answers from GitHub too, open ones included."""
    from pm_agent.github.bridge import Bridge
    from pm_agent.github.channel import WaitForGitHub, still_open
    from pm_agent.github.outbox import ReleaseTarget

    release = ReleaseTarget(rc.repo, rc.config.github.remote, rc.config.release_manifest_dir)
    bridge = Bridge(github, rc.db_path, rc.run_id, rc.config.github, release=release)
    bridge.start()
    rc.channel = WaitForGitHub(rc.channel)
    known = {esc.id for esc, _ in rc.pending_escalations}
    rc.pending_escalations += [p for p in still_open(rc.store, rc.run_id) if p[0].id not in known]
    rc.emit("github.started", f"GitHub bridge on {rc.config.github.repo}: issues, comments and answers")
    return bridge


def _stopped(rc: RunContext, sig: signal.Signals) -> RunResult:
    rc.store.set_run_status(rc.run_id, RunStatus.STOPPED)
    rc.store.append_event(rc.run_id, "run.stopped", {"signal": sig.name})
    done = [
        r.task_id for r in rc.store.list_tasks(rc.run_id) if r.state == "completed" and not is_pm_internal(r.task_id)
    ]
    return RunResult(rc.run_id, rc.run.working_branch, LoopOutcome(completed=done), None, stopped_by=sig)


def answer(repo: Path, escalation_id: int, text: str) -> EscalationRecord:
    """Answer an open escalation; a running pm-agent picks it up, a stopped one on `pm-agent resume`.

    The one path of every human answer given outside a run's own terminal (`pm-agent answer`, the dashboard)."""
    if not text.strip():
        raise InputError("the answer is empty")
    if not store_exists(repo):
        raise NotFoundError(f"no pm-agent state in {repo}: there is no escalation #{escalation_id} to answer")
    path = default_store_path(repo)
    github = _github_on(repo)
    if github:  # the answer's "answered elsewhere" comment is queued with it
        from pm_agent.github.bridge import enable

        enable(path)
    store = open_store(path)
    try:
        return store.answer_escalation(escalation_id, text)
    finally:
        store.close()
        if github:
            from pm_agent.github.bridge import disable

            disable(path)


def _github_on(repo: Path) -> bool:
    try:
        return load_config(repo).github.repo is not None
    except ConfigError:  # a broken pm-agent.yaml must not stop an answer; the run reports it on resume
        return False


def escalations(repo: Path, *, include_closed: bool = False) -> list[EscalationRecord]:
    """Escalations of every run, open ones only unless asked."""
    path = default_store_path(repo)
    if not path.exists():
        return []
    store = open_store(path)
    try:
        found = store.list_escalations()
        return found if include_closed else [e for e in found if e.status is EscalationStatus.OPEN]
    finally:
        store.close()
