"""Phase 1 of a run (seed 001, ORCHESTRATE): a new run from a plan, or a stopped one from the store.

    rc = start_run(repo, plan_path, design_path, listener=..., channel=...)
    rc = resume_run(repo, run_id, listener=..., channel=...)

Either gives the `RunContext` that `PmLoop` (loop.py) drives.
"""

from __future__ import annotations

import sys
from pathlib import Path

from pm_agent.agents.base import AgentRunner
from pm_agent.agents.factory import limits_from_config
from pm_agent.agents.session import AgentHost
from pm_agent.config import PmConfig
from pm_agent.engine.baseline import load_baseline, record_baseline, refresh_baseline, run_preflight
from pm_agent.engine.events import Listener
from pm_agent.engine.reconcile import plan_exempt
from pm_agent.engine.reconfig import resume_config
from pm_agent.engine.runctx import RunContext
from pm_agent.engine.startup import (
    StartInput,
    catch_up,
    check_agent,
    check_login,
    check_start,
    done_on_branch,
    exclude_state_dir,
    record_takeover,
)
from pm_agent.errors import NotFoundError
from pm_agent.human.channels import EscalationChannel
from pm_agent.lifecycle import default_workflow
from pm_agent.preflight.baseline import remove_stale_preflight
from pm_agent.store import RunStatus, Store, default_store_path, open_store
from pm_agent.vcs import Git
from pm_agent.vcs.checkout_guard import CheckoutGuard


def _context(
    repo: Path,
    store: Store,
    config: PmConfig,
    run_id: str,
    listener: Listener,
    channel: EscalationChannel,
    runner: AgentRunner,
) -> RunContext:
    db_path = default_store_path(repo)
    limits = limits_from_config(config.agent)
    run = store.get_run(run_id)
    # The main checkout and pm-agent's refs; the plan is the user's to edit during the run (engine/reconcile.py).
    guard = CheckoutGuard(repo, db_path.parent / "quarantine", exempt=plan_exempt(repo, run))
    host = AgentHost(
        store,
        db_path,
        runner,
        limits=limits,
        python=sys.executable,
        checkout_guard=guard,
        serve_signals=True,
    )
    design = (
        Path(run.design_doc).read_text(encoding="utf-8") if run.design_doc and Path(run.design_doc).exists() else ""
    )
    wf = default_workflow()
    return RunContext(
        repo, store, db_path, config, wf, host, run, listener, channel, design_text=design, integrate_lock=guard.lock
    )


def start_run(
    repo: Path,
    plan_path: Path,
    design_path: Path | None,
    *,
    listener: Listener,
    channel: EscalationChannel,
    config: PmConfig | None = None,
    runner: AgentRunner | None = None,
    checked: StartInput | None = None,
    allow_dirty: bool = False,
) -> RunContext:
    """Phase 1 ORCHESTRATE: baseline scan, plan, triage, shared context, queue; one new run in the store.

    `checked` is what `check_start` returned (the API checks before taking the run lock); without it
    the same checks run here. Tasks already committed on an existing working branch are EXISTS.
    """
    checked = checked or check_start(repo, plan_path, design_path, config, allow_dirty=allow_dirty, runner=runner)
    repo, config, branch = checked.repo, checked.config, checked.branch
    git = Git(repo)
    baseline = git.head_sha()
    plan, on_branch = done_on_branch(git, branch, checked.plan, baseline)
    for warning in plan.warnings:
        listener.emit("plan.warning", warning)
    env_baseline = run_preflight(repo, git, config, baseline, listener)
    moved = catch_up(git, branch, baseline)
    if moved is not None:
        listener.emit("run.branch_forward", moved)
    if not git.branch_exists(branch):
        git.create_branch(branch, baseline)
    exclude_state_dir(git)
    store = open_store(default_store_path(repo))
    run = store.create_run(
        plan,
        baseline_sha=baseline,
        working_branch=branch,
        shared_context=plan.shared_context.model_dump(mode="json"),
        config=config.model_dump(mode="json"),
    )
    listener.emit("run.started", f"run {run.id}: {len(plan.tasks)} tasks from {plan.path}; working branch {branch}")
    record_takeover(store, run.id, checked, on_branch, listener)
    rc = _context(repo, store, config, run.id, listener, channel, checked.runner)
    record_baseline(rc, baseline, env_baseline)
    return rc


def resume_run(
    repo: Path,
    run_id: str | None,
    *,
    listener: Listener,
    channel: EscalationChannel,
    runner: AgentRunner | None = None,
    reread_config: bool = False,
) -> RunContext:
    """Rebuild the context of a stopped or crashed run from the store; `reread_config`: take today's pm-agent.yaml."""
    path = default_store_path(repo)
    if path.parent.exists():
        remove_stale_preflight(Git(repo), path.parent)  # a kill during a baseline run left its worktree
    if not path.exists():  # never create state just to find nothing in it
        raise NotFoundError(f"no pm-agent state in {path.parent}: nothing to resume; start with `pm-agent run PLAN.md`")
    store = open_store(path)
    try:
        run = store.get_run(run_id) if run_id else store.latest_run()
        if run is None:
            raise NotFoundError(f"no run to resume in {path}")
        config = resume_config(repo, store, run, reread=reread_config, listener=listener)
        # The agent of the configuration it resumes with (re-read or stored): one that cannot start, or is not logged
        # in (e.g. after a session's login failure was answered), stops the resume before any session.
        runner = runner or check_agent(repo, config)
        check_login(repo, config, runner)
    except BaseException:
        store.close()
        raise
    store.set_run_status(run.id, RunStatus.RUNNING)
    listener.emit("run.resumed", f"run {run.id} resumed ({run.plan_id})")
    rc = _context(repo, store, config, run.id, listener, channel, runner)
    rc.env_baseline = load_baseline(store, run.id)
    refresh_baseline(rc)
    return rc
