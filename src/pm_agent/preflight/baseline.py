"""The environment checked before any agent starts: every configured command run on the baseline commit.

A command that cannot run at all (not installed, exit 126/127, the interpreter's own `No module named X`,
a missing npm script or make target, a time-out) stops the run before anything is dispatched, with the
config key, the command, the error and the fix. A command that runs but already fails is the baseline the
gates compare with (the ratchet), unless `environment.baseline: strict` demands a clean tree.
"""

from __future__ import annotations

import contextlib
import re
import shutil
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Literal

from pm_agent.errors import InputError
from pm_agent.gates.environment import (
    ENVIRONMENT_COMMANDS,
    KEEP_OUTPUT_BYTES,
    Baseline,
    BaselineCommand,
    baseline_entry,
)
from pm_agent.gates.unrunnable import COREPACK, NOT_INSTALLED, RUSTUP_MISSING, program_named
from pm_agent.gates.ward import run_command
from pm_agent.listing import few
from pm_agent.statefile import mark_state_dir
from pm_agent.vcs import Git, GitCommandError

PREFLIGHT_DIR = "preflight"


class PreflightError(InputError):
    """An environment command that cannot run, or a strict baseline that already fails (exit 2)."""


# How each package manager fetches a project's dependencies ahead of an offline run.
_FETCHES = {
    "cargo": "`cargo fetch`",
    "go": "`go mod download`",
    "npm": "`npm install`",
    "npx": "`npm install`",
    "mvn": "`mvn dependency:go-offline`",
    "./mvnw": "`./mvnw dependency:go-offline`",
    "gradle": "`gradle test` once",
    "./gradlew": "`./gradlew test` once, which fetches the wrapper's gradle as well",
    "bundle": "`bundle install`",
    "composer": "`composer install`, which fills composer's cache",
}

# What installs a project's dependencies into a checkout of its own, from the package manager's cache or store.
_SETUPS = {
    "yarn": "yarn install --immutable",
    "pnpm": "pnpm install --frozen-lockfile --prefer-offline",
    "npm": "npm ci --prefer-offline",
    "npx": "npm ci --prefer-offline",
    "bun": "bun install --frozen-lockfile",
}

SETUP_KEY = "setup_command"  # run first; it must succeed, whatever environment.baseline says
SETUP_FIX = f"make it succeed there (every task's worktree runs it first), or set environment.{SETUP_KEY}: null"


def fix_hint(key: str, command: str, reason: str, timeout_s: float) -> str:
    """What the user can do about a command that cannot run."""
    unset = f"set environment.{key}: null"
    if reason.startswith("timed out"):
        return f"raise environment.gate_timeout_s (now {timeout_s:g}), make the command faster, or {unset}"
    if reason.startswith("package.json has no script"):
        return f"add the script to package.json, or set environment.{key} to the right command, or {unset}"
    if reason.startswith("the dependencies cannot be fetched"):
        fetch = _FETCHES.get(_tool_word(command), "`cargo fetch`, `go mod download`, `npm install`")
        return f"fetch them where their registry can be reached ({fetch}) or vendor them, or {unset}"
    if reason.startswith("the Makefile has no target"):
        return f"add the target to the Makefile, or set environment.{key} to the right command, or {unset}"
    if reason.startswith(NOT_INSTALLED):
        install = _SETUPS.get(_tool_word(command), "the package manager's install")
        return f"set environment.setup_command: {install} (it runs in every new worktree before the gates), or {unset}"
    if reason.startswith(RUSTUP_MISSING):
        component = re.search(r"\(`([^`]+)`\)$", reason)
        return f"run `{component.group(1) if component else 'rustup component add <component>'}`, or {unset}"
    if reason.startswith("the gradle build has no task"):
        return f"apply the plugin that adds the task, or set environment.{key} to the right command, or {unset}"
    if reason.startswith(COREPACK):
        word = _tool_word(command)
        manager = word if word in ("yarn", "pnpm") else "the one package.json's packageManager names"
        install = f"npm install -g {word}" if word in ("yarn", "pnpm") else "npm install -g <name>"
        return (
            "let corepack fetch the package manager where the registry can be reached (`corepack enable`, then"
            " `corepack install` in the repository; `npm install -g corepack@latest` when its signing keys are out of"
            f" date), or install {manager} globally (`{install}`) ahead of corepack's shim on PATH, or {unset}"
        )
    module = re.search(r"No module named ([\w.]+)", reason)
    program = program_named(reason)
    tool = module.group(1) if module else program or _tool_word(command)
    if reason.startswith("exit 126"):
        return f"make {tool} executable, or {unset}"
    installs = _INSTALLS.get(_tool_word(command))
    if program is not None and program != _tool_word(command) and installs is not None:
        # `npm test` runs `xo && ava`: the script's programs come with the project's dependencies, not with npm.
        return f"install the project's dependencies (`{installs}`: the script runs {program}), or {unset}"
    install = f" (`{_INSTALL_PROGRAM[tool]}`)" if tool in _INSTALL_PROGRAM else ""
    return f"install {tool}{install}, or {unset}"


# What installs a program whose name is not its package's, or that no system package manager ships.
_INSTALL_PROGRAM = {
    "bundle": "gem install bundler",
    "rake": "gem install rake",
    "yarn": "npm install -g yarn",
    "pnpm": "npm install -g pnpm",
    "poetry": "pipx install poetry",
    "pipenv": "pipx install pipenv",
    "hatch": "pipx install hatch",
    "uv": "pipx install uv",
}


# Package managers whose scripts run programs the project's dependencies install (node_modules/.bin).
_INSTALLS = {
    "npm": "npm install",
    "npx": "npm install",
    "pnpm": "pnpm install",
    "yarn": "yarn install",
    "bun": "bun install",
}


def _tool_word(command: str) -> str:
    """The program a shell command line starts (skipping `VAR=x` assignments)."""
    for word in command.split():
        if "=" not in word:
            return word
    return command


def _key_line(config_path: Path | None, key: str) -> int | None:
    if config_path is None or not config_path.exists():
        return None
    for number, line in enumerate(config_path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        if line.strip().startswith(f"{key}:"):
            return number
    return None


@contextlib.contextmanager
def scratch_worktree(git: Git, state_dir: Path, sha: str) -> Iterator[Path]:
    """A detached worktree of `sha` under `.pm-agent/preflight/`, removed afterwards (and stale ones first)."""
    remove_stale_preflight(git, state_dir)
    path = state_dir / PREFLIGHT_DIR / "baseline"
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        git.worktree_add_detached(path, sha)
    except GitCommandError as exc:
        # Seen on clones whose objects are missing (a partial clone offline, a damaged one): no command can run.
        said = next((line for line in exc.stderr.splitlines() if line.strip()), exc.stderr)
        raise PreflightError(
            f"cannot check out {sha[:12]} to run the environment commands on it: git says {said!r}"
            " (missing objects? `git fsck` names them; fetch them or clone again)"
        ) from None
    made = mark_state_dir(state_dir)  # `pm-agent init` leaves nothing behind: what it made here goes with the worktree
    try:
        yield path
    finally:
        remove_stale_preflight(git, state_dir)
        if made is not None:
            made.unlink(missing_ok=True)


def remove_stale_preflight(git: Git, state_dir: Path) -> None:
    """Remove preflight worktrees a killed pm-agent left behind."""
    root = state_dir / PREFLIGHT_DIR
    for info in git.worktree_list():
        if Path(info.path).resolve().is_relative_to(root.resolve()):
            with contextlib.suppress(Exception):
                git.worktree_remove(info.path, force=True)
    shutil.rmtree(root, ignore_errors=True)
    git.worktree_prune()


def run_baseline(
    git: Git,
    state_dir: Path,
    sha: str,
    commands: Mapping[str, str | None],
    *,
    timeout_s: float,
    mode: Literal["ratchet", "strict"] = "ratchet",
    progress: Callable[[str], None] | None = None,
    env: Mapping[str, str] | None = None,
) -> Baseline:
    """Run each configured command (`{config key: command}`) on `sha` in a clean worktree (`env`: as for gates)."""
    names = dict(ENVIRONMENT_COMMANDS)
    wanted = sorted(((key, cmd) for key, cmd in commands.items() if cmd), key=lambda item: item[0] != SETUP_KEY)
    entries: list[BaselineCommand] = []
    if wanted:
        with scratch_worktree(git, state_dir, sha) as path:
            for key, command in wanted:
                if progress is not None:
                    progress(f"baseline: {names.get(key, key)}: `{command}` ...")
                result = run_command(command, path, timeout_s, env, keep_output_bytes=KEEP_OUTPUT_BYTES)
                entry = baseline_entry(key, names.get(key, key), result, timeout_s)
                entries.append(entry)
                if progress is not None:
                    progress(f"baseline: {entry.name}: {entry.summary()} in {entry.duration_ms / 1000:.1f}s")
                if key == SETUP_KEY and not entry.ok:
                    break  # the others would fail for want of what it installs: its own failure says it
            # What the commands left in the clean checkout, as the gates' checked-tree and scope checks see a tree.
            leftovers = Git(path).diff_names(sha)
        return Baseline(sha=sha, mode=mode, commands=tuple(entries), leftovers=tuple(leftovers))
    return Baseline(sha=sha, mode=mode, commands=tuple(entries))


def check_baseline(baseline: Baseline, *, timeout_s: float, config_path: Path | None = None) -> None:
    """Raise PreflightError for every command that cannot run (and, in strict mode, every failing one)."""
    problems: list[str] = []
    first_line: int | None = None
    for entry in baseline.commands:
        if entry.cannot_run:
            problems += [
                f"environment.{entry.key} cannot run on the baseline commit {baseline.sha[:12]}:",
                f"  `{entry.command}` -> {entry.cannot_run}",
                f"  fix: {fix_hint(entry.key, entry.command, entry.cannot_run, timeout_s)}",
            ]
        elif entry.key == SETUP_KEY and not entry.ok:
            problems += [
                f"environment.{entry.key} fails in a clean checkout of the baseline commit {baseline.sha[:12]}:",
                f"  `{entry.command}` -> {entry.summary()}",
                *[f"    {line}" for line in entry.output_tail.splitlines()[-8:]],
                f"  fix: {SETUP_FIX}",
            ]
        elif baseline.mode == "strict" and not entry.ok:
            problems += [
                f"environment.{entry.key} already fails on the baseline commit {baseline.sha[:12]} "
                f"and environment.baseline is strict:",
                f"  `{entry.command}` -> {entry.summary()}",
                *[f"    {line}" for line in entry.output_tail.splitlines()[-8:]],
                "  fix: make it pass on the baseline first, or set environment.baseline: ratchet "
                "(gates then fail only on what a task makes worse)",
            ]
        else:
            continue
        first_line = first_line or _key_line(config_path, entry.key)
    if baseline.leftovers:
        problems += [
            leftovers_problem(baseline),
            f"  fix: {LEFTOVERS_FIX}",
        ]
    if problems:
        path = config_path if config_path is not None and config_path.exists() else None
        raise PreflightError("\n".join(problems), path=path, line=first_line)


LEFTOVERS_FIX = "add them to .gitignore (or commit them), so that a gate run leaves the tree as it found it"


def leftovers_problem(baseline: Baseline) -> str:
    """The sentence on the files the commands leave behind, which every gate run would take for the task's change."""
    return (
        f"the environment commands leave files git does not ignore on the baseline commit {baseline.sha[:12]}: "
        f"{few(baseline.leftovers, 8)}; each task's gates would find them in its change (checked-tree, scope)"
    )


def preflight(
    git: Git,
    state_dir: Path,
    sha: str,
    commands: Mapping[str, str | None],
    *,
    timeout_s: float,
    mode: Literal["ratchet", "strict"],
    config_path: Path | None = None,
    progress: Callable[[str], None] | None = None,
    check: bool = True,
    env: Mapping[str, str] | None = None,
) -> Baseline:
    """Run the baseline and (with `check`) refuse what cannot run; a `.pm-agent/` it had to create is removed
    again when it fails, or when it only looked (`check=False`, for `pm-agent init`)."""
    existed = state_dir.exists()
    try:
        baseline = run_baseline(
            git, state_dir, sha, commands, timeout_s=timeout_s, mode=mode, progress=progress, env=env
        )
        if check:
            check_baseline(baseline, timeout_s=timeout_s, config_path=config_path)
    except BaseException:
        if not existed:
            shutil.rmtree(state_dir, ignore_errors=True)
        raise
    if not check and not existed:
        shutil.rmtree(state_dir, ignore_errors=True)
    return baseline


__all__ = [
    "LEFTOVERS_FIX",
    "SETUP_FIX",
    "SETUP_KEY",
    "Baseline",
    "BaselineCommand",
    "PreflightError",
    "check_baseline",
    "fix_hint",
    "leftovers_problem",
    "preflight",
    "remove_stale_preflight",
    "run_baseline",
]
