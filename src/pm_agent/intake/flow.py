"""A request's intake, stage by stage: requirements, lock, plan, approval, commits, hand-off.

    phase = await drive_intake(ic)   # DONE: the plan is approved and committed; WAITING; FAILED

Each stage starts by reading what the store says is done, so a restart (`pm-agent resume`, also
after a `kill -9`) continues at the stage it stopped in. The requirements are locked by their
hash (`requirements.locked`); a later change to the file is a `requirements.changed` event and a
new lock, never a silent drift.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from pm_agent.intake.agents import Phase, agent_phase, instructions, render_request_prompt
from pm_agent.intake.approval import approval
from pm_agent.intake.context import PLAN, REQUIREMENTS, IntakeCtx
from pm_agent.intake.docs import PlanCheck, check_plan, requirements_hash, requirements_problems, scenario_ids
from pm_agent.lifecycle import IssueState
from pm_agent.plan.models import TaskStatus
from pm_agent.vcs import Git
from pm_agent.vcs.git import NO_HOOKS_ARGS

__all__ = ["COMMITTED", "LOCKED", "check_lock", "commit_docs", "drive_intake", "locked_hash"]

S = IssueState
LOCKED = "requirements.locked"
CHANGED = "requirements.changed"
COMMITTED = "intake.committed"
MAX_USER_DESIGN = 20_000  # characters of `--design DOC` put in the analyst's prompt


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.is_file() else ""


def locked_hash(ic: IntakeCtx) -> str | None:
    """The hash the requirements were last locked with, or None before the lock."""
    locks = ic.events(LOCKED, REQUIREMENTS)
    return str(locks[-1].payload["sha256"]) if locks else None


def check_lock(ic: IntakeCtx, why: str) -> str:
    """The requirements' text; a change since the lock is recorded (`requirements.changed`) and re-locked."""
    text = _read(ic.info.design_file)
    old, new = locked_hash(ic), requirements_hash(text)
    if old is not None and old != new:
        ic.record(CHANGED, {"from": old, "to": new, "when": why, "path": ic.info.design_rel}, REQUIREMENTS)
        ic.emit(
            "requirements.changed", f"the requirements changed since they were locked ({why}): {old[:12]} → {new[:12]}"
        )
        ic.record(LOCKED, {"sha256": new, "path": ic.info.design_rel, "scenarios": scenario_ids(text)}, REQUIREMENTS)
    return text


def _analyst_prompt(ic: IntakeCtx) -> str:
    given = ic.info.user_design[:MAX_USER_DESIGN]
    feedback = (
        f"The user gave this design doc as input; the requirements must agree with it:\n\n{given}" if given else ""
    )
    values = {
        "request": ic.info.request,
        "design_path": ic.info.design_rel,
        "feedback": feedback,
        "signal_instructions": instructions("analyst", REQUIREMENTS),
    }
    return render_request_prompt("analyst", values)


def _planner_prompt(ic: IntakeCtx) -> str:
    scenarios = scenario_ids(_read(ic.info.design_file))
    values = {
        "design_path": ic.info.design_rel,
        "plan_path": ic.info.plan_rel,
        "scenarios": ", ".join(scenarios) or "none found",
        "feedback": "",
        "signal_instructions": instructions("planner", PLAN),
    }
    return render_request_prompt("planner", values)


def recheck_plan(ic: IntakeCtx, why: str) -> PlanCheck:
    """Read the requirements (minding the lock) and parse the plan with pm-agent's own parser."""
    text = check_lock(ic, why)
    return check_plan(ic.info.plan_file, ic.info.design_file, ic.workdir, scenario_ids(text))


async def drive_intake(ic: IntakeCtx) -> Phase:
    """Take the request as far as it can go now."""
    if locked_hash(ic) is None:
        phase = await agent_phase(
            ic,
            REQUIREMENTS,
            "analyst",
            S.ANALYZING_REQUIREMENTS,
            S.WAITING_FOR_REQUIREMENTS_CLARIFICATION,
            lambda: _analyst_prompt(ic),
            lambda: requirements_problems(_read(ic.info.design_file)),
        )
        if phase is not Phase.DONE:
            return phase
        text = _read(ic.info.design_file)
        digest = requirements_hash(text)
        ic.record(LOCKED, {"sha256": digest, "path": ic.info.design_rel, "scenarios": scenario_ids(text)}, REQUIREMENTS)
        ic.move(REQUIREMENTS, S.COMPLETED, f"requirements locked (sha256 {digest[:12]})", TaskStatus.COMPLETED)
        ic.emit("requirements.locked", f"requirements locked: {ic.info.design_rel} sha256 {digest[:12]}")
    if not ic.events("intake.planned", PLAN):
        phase = await agent_phase(
            ic,
            PLAN,
            "planner",
            S.PLANNING_APPROACH,
            S.WAITING_FOR_HUMAN_INPUT,
            lambda: _planner_prompt(ic),
            lambda: recheck_plan(ic, "planning").problems,
        )
        if phase is not Phase.DONE:
            return phase
        ic.record("intake.planned", {"path": ic.info.plan_rel}, PLAN)
    phase = await approval(ic, lambda: recheck_plan(ic, "approval"))
    if phase is not Phase.DONE:
        return phase
    await asyncio.to_thread(commit_docs, ic)
    ic.move(PLAN, S.COMPLETED, "plan approved and committed", TaskStatus.COMPLETED)
    return Phase.DONE


def commit_docs(ic: IntakeCtx) -> dict[str, str]:
    """Commit the requirements, then the plan, on the working branch (the intake worktree), each its own
    commit; a document already committed (before a restart) is not committed again. {doc: sha}."""
    wt = Git(ic.workdir)
    stray = [e.path for e in wt.status_porcelain() if e.path not in (ic.info.design_rel, ic.info.plan_rel)]
    if stray and not ic.events("intake.stray_files"):  # the sessions were told to write only their document
        ic.record("intake.stray_files", {"paths": stray})
        ic.emit(
            "intake.stray_files",
            "not committed (the analyst and planner write only their documents): " + ", ".join(stray),
        )
    done = {str(e.payload["doc"]): str(e.payload["sha"]) for e in ic.events(COMMITTED)}
    title = ic.info.request.strip().splitlines()[0][:72]
    digest = locked_hash(ic) or ""
    for doc, rel, subject in (
        ("requirements", ic.info.design_rel, f"Requirements: {title}"),
        ("plan", ic.info.plan_rel, f"Plan: {title}"),
    ):
        if doc in done:
            continue
        wt.run("add", "--", rel)
        if wt.try_run("diff", "--cached", "--quiet", "--", rel).returncode != 0:
            lock = f"Locked requirements, sha256 {digest}.\n\n" if doc == "requirements" else ""
            message = f"{subject}\n\n{lock}Written by the {'analyst' if doc == 'requirements' else 'planner'} for "
            message += f"`pm-agent new`, approved by the human.\n\nPm-Intake: {ic.run_id}\n"
            wt.run(*NO_HOOKS_ARGS, *wt.identity_args(), "commit", "--quiet", "-F", "-", "--", rel, stdin_text=message)
        sha = wt.head_sha()
        ic.record(COMMITTED, {"doc": doc, "sha": sha, "path": rel})
        ic.emit("intake.committed", f"{doc} committed on {ic.info.branch}: {sha[:12]} ({rel})")
        done[doc] = sha
    return done
