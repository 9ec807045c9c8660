"""The run's environment baseline: the preflight before a run, its record, and its refresh on resume.

Every configured environment command runs on the baseline commit before any session (see preflight/);
the gates and the final release gate compare with what is recorded here (the ratchet).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pm_agent.config import CONFIG_FILE, PmConfig
from pm_agent.engine.events import Listener
from pm_agent.engine.runctx import RunContext
from pm_agent.errors import SetupError
from pm_agent.gates import ENVIRONMENT_COMMANDS, Baseline, BaselineCommand
from pm_agent.gates.ward import allowed_env, run_command
from pm_agent.preflight.baseline import SETUP_KEY, preflight
from pm_agent.store import Store, default_store_path
from pm_agent.vcs import Git


def environment_commands(config: PmConfig) -> dict[str, str | None]:
    """`{config key: command}` for every environment command, configured or not."""
    return {key: getattr(config.environment, key) for key, _ in ENVIRONMENT_COMMANDS}


# In a worktree's own git folder: the branch its setup ran for (a spare taken over by another task has lost what it
# installed, to `git clean -ffdx`; a worktree kept over a stopped run has not).
SETUP_MARK = "pm-agent-setup"


def setup_worktree(config: PmConfig, worktree: Git) -> None:
    """`environment.setup_command` in a new worktree, unless it ran there for the worktree's branch already;
    SetupError with the command's last lines when it fails."""
    env = config.environment
    if not env.setup_command:
        return
    mark, branch = worktree.git_path(SETUP_MARK), worktree.current_branch() or ""
    if mark.is_file() and mark.read_text(encoding="utf-8") == branch:
        return
    result = run_command(env.setup_command, worktree.path, env.gate_timeout_s, allowed_env(env.pass_env))
    if not result.ok:
        said = f"timed out after {env.gate_timeout_s:g}s" if result.timed_out else f"exit {result.exit_code}"
        last = "".join(f"\n    {line}" for line in result.output_tail.splitlines()[-8:])
        raise SetupError(f"environment.setup_command failed in {worktree.path}: {said}{last}")
    mark.write_text(branch, encoding="utf-8")


def run_preflight(repo: Path, git: Git, config: PmConfig, sha: str, listener: Listener) -> Baseline:
    """Every configured environment command on `sha`, before anything is dispatched (PreflightError: exit 2)."""
    env = config.environment
    return preflight(
        git,
        default_store_path(repo).parent,
        sha,
        environment_commands(config),
        timeout_s=env.gate_timeout_s,
        mode=env.baseline,
        config_path=repo / CONFIG_FILE,
        progress=lambda message: listener.emit("preflight", message),
        env=allowed_env(env.pass_env),
    )


def refresh_baseline(rc: RunContext) -> None:
    """After pm-agent.yaml changed: run the new or changed environment commands on the baseline commit too,
    so the gates compare like with like (a command that cannot run stops the resume, exit 2)."""
    old = rc.env_baseline
    if old is None:
        return
    env = rc.config.environment
    wanted = {key: cmd for key, cmd in environment_commands(rc.config).items() if cmd}
    kept = [c for c in old.commands if wanted.get(c.key) == c.command]
    changed = {key: cmd for key, cmd in wanted.items() if all(c.key != key for c in kept)}
    if not changed and len(kept) == len(old.commands) and old.mode == env.baseline:
        return
    setup = wanted.get(SETUP_KEY)
    if changed and setup is not None:  # what the changed commands need, in the clean checkout they run in
        changed = {SETUP_KEY: setup, **changed}
        kept = [c for c in kept if c.key != SETUP_KEY]
    fresh = preflight(
        rc.git,
        rc.state_dir,
        old.sha,
        changed,
        timeout_s=env.gate_timeout_s,
        mode=env.baseline,
        config_path=rc.repo / CONFIG_FILE,
        progress=lambda message: rc.emit("preflight", message),
        env=allowed_env(env.pass_env),
    )
    merged = Baseline(sha=old.sha, mode=env.baseline, commands=(*kept, *fresh.commands), leftovers=fresh.leftovers)
    rc.store.append_event(
        rc.run_id,
        "run.baseline",
        {"sha": old.sha, "refreshed": sorted(changed), "environment": merged.model_dump(mode="json")},
    )
    rc.env_baseline = merged
    rc.emit("run.baseline", f"baseline re-run for the changed command(s): {', '.join(sorted(changed)) or 'none'}")
    _warn_blind(rc, fresh.commands)


def record_baseline(rc: RunContext, sha: str, env_baseline: Baseline) -> None:
    """Seed 001 init step 2: git log, file tree and every environment command at the baseline, recorded once."""
    log = [f"{e.sha[:12]} {e.subject}" for e in rc.git.log(10, sha)]
    files = rc.git.file_tree(2000)
    tests = env_baseline.get("test_command")
    summary = "not configured" if tests is None else tests.summary()
    rc.store.append_event(
        rc.run_id,
        "run.baseline",
        {
            "sha": sha,
            "log": log,
            "files": len(files),
            "tests": summary,
            "environment": env_baseline.model_dump(mode="json"),
        },
    )
    rc.env_baseline = env_baseline
    failing = [f"{c.name} ({c.summary()})" for c in env_baseline.commands if not c.ok]
    rc.emit(
        "run.baseline",
        f"baseline {sha[:12]}: {len(files)} files, tests {summary}"
        + (f"; already failing, gates compare with it ({env_baseline.mode}): {', '.join(failing)}" if failing else ""),
    )
    _warn_blind(rc, env_baseline.commands)


def _warn_blind(rc: RunContext, commands: Iterable[BaselineCommand]) -> None:
    """Say which failing commands' gates can see only a change of exit status (ratchet mode)."""
    if rc.env_baseline is None or rc.env_baseline.mode != "ratchet":
        return
    for command in commands:
        if command.blind:
            note = f"baseline: {command.name}: `{command.command}` fails already; {command.ratchet_note()}"
            rc.emit("run.baseline", note)


def load_baseline(store: Store, run_id: str) -> Baseline | None:
    """The latest environment baseline recorded for a run (None for runs from before the preflight)."""
    found: Baseline | None = None
    for event in store.events(run_id):
        if event.kind == "run.baseline" and isinstance(event.payload.get("environment"), dict):
            found = Baseline.model_validate(event.payload["environment"])
    return found
