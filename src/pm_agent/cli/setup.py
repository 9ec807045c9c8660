"""`pm-agent init`: write pm-agent.yaml from what the repository has, then show what a run will find."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from pm_agent.cli.app import RepoOption, fail, out, repo_root

if TYPE_CHECKING:
    from pm_agent.config import PmConfig
    from pm_agent.preflight.detect import Detection


def init_cmd(
    repo: RepoOption = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing pm-agent.yaml.")] = False,
) -> None:
    """Write pm-agent.yaml with the lint, typecheck, test and build commands detected in the repository."""
    from pm_agent.config import CONFIG_FILE, PmConfig, render_config
    from pm_agent.preflight.detect import detect_environment

    root = repo_root(repo)
    target = root / CONFIG_FILE
    if target.exists() and not force:
        raise fail(f"{target} exists; use --force to overwrite")
    detection = detect_environment(root)
    target.write_text(render_config(PmConfig(environment=detection.environment)), encoding="utf-8")
    out.print(f"wrote {target}", highlight=False)
    _print_detection(detection)
    _print_agent(root, PmConfig(environment=detection.environment))
    _print_preflight(root, PmConfig(environment=detection.environment))


def _print_agent(root: Path, config: PmConfig) -> None:
    """What `pm-agent run` will find of the agent CLI: one that cannot start or is not logged in."""
    from pm_agent.engine.startup import check_agent, login_fix
    from pm_agent.errors import ConfigError

    try:
        problem = check_agent(root, config).login_problem()
    except ConfigError as exc:
        out.print(f"agent: NOT READY: {exc.message}", markup=False, highlight=False)
        return
    if problem is not None:
        out.print(f"agent: NOT READY: {problem}\n    fix: {login_fix(config)}", markup=False, highlight=False)


def _print_preflight(root: Path, config: PmConfig) -> None:
    """What `pm-agent run` will find: each command run once on HEAD, as the run's preflight does."""
    from pm_agent.engine.baseline import environment_commands
    from pm_agent.errors import VcsError
    from pm_agent.preflight.baseline import (
        LEFTOVERS_FIX,
        SETUP_FIX,
        SETUP_KEY,
        PreflightError,
        fix_hint,
        leftovers_problem,
        preflight,
    )
    from pm_agent.store import default_store_path
    from pm_agent.vcs import Git

    env = config.environment
    commands = environment_commands(config)
    if not any(commands.values()):
        return
    git = Git(root)
    try:
        sha = git.head_sha()
    except VcsError:
        out.print("preflight: skipped (the repository has no commit yet)", highlight=False)
        return
    out.print(f"preflight on {sha[:12]} (what `pm-agent run` checks before any agent starts):", highlight=False)
    try:
        baseline = preflight(
            git,
            default_store_path(root).parent,
            sha,
            commands,
            timeout_s=env.gate_timeout_s,
            mode=env.baseline,
            check=False,
            progress=None,
        )
    except PreflightError as exc:
        out.print(f"  NOT READY: {exc.message}", markup=False, highlight=False)
        return
    for entry in baseline.commands:
        if entry.cannot_run:
            fix = fix_hint(entry.key, entry.command, entry.cannot_run, env.gate_timeout_s)
            out.print(f"  {entry.name}: CANNOT RUN: {entry.cannot_run}\n      fix: {fix}", markup=False)
        elif entry.ok:
            out.print(f"  {entry.name}: passes ({entry.duration_ms / 1000:.1f}s)", markup=False)
        elif entry.key == SETUP_KEY:  # not a baseline to ratchet: the run stops on it, and nothing else ran
            out.print(f"  {entry.name}: NOT READY: {entry.summary()}\n      fix: {SETUP_FIX}", markup=False)
        else:
            out.print(
                f"  {entry.name}: {entry.summary()}: already failing; {entry.ratchet_note()} "
                "(environment.baseline: ratchet)",
                markup=False,
            )
    if baseline.leftovers:
        problem = leftovers_problem(baseline)
        out.print(f"  NOT READY: {problem}\n      fix: {LEFTOVERS_FIX}", markup=False)


def _print_detection(detection: Detection) -> None:
    """Each gate slot's chosen command and why, then the candidates not chosen."""
    from pm_agent.preflight.detect import Slot

    for slot in Slot:
        chosen = detection.chosen.get(slot)
        if chosen is None:
            out.print(f"  {slot.value}: none", highlight=False)
            continue
        out.print(f"  {slot.value}: {chosen.command}", markup=False, highlight=False)
        out.print(f"      why: {chosen.reason}", markup=False, highlight=False)
        if chosen.problem:
            out.print(f"      NOT READY: {chosen.problem}", markup=False, highlight=False)
    if detection.rejected:
        out.print("not chosen:", highlight=False)
    for rejected in detection.rejected:
        out.print(f"  {rejected.command}: {rejected.why}", markup=False, highlight=False)
