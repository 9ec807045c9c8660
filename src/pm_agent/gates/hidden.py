"""Lint and type check under the baseline's configuration: the findings a task's configuration hides.

When a change touches a linter's or type checker's configuration, pm-agent runs the lint and typecheck
commands twice: in the task's worktree (the task's configuration) and in a scratch worktree holding the
task's files with the configuration files restored from the base commit. A finding the base
configuration reports and the task's does not is hidden by the task's configuration change. The
findings are compared with the ratchet (`gates/findings`); output no parser understands is judged by
exit status (clean under the task's configuration, failing under the base's: something is hidden).
The scratch worktree lives in a temporary directory outside the repository and is removed afterwards;
the worktree's `.venv`, `venv` and `node_modules` (ignored, so not in the tree) are linked into it.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pm_agent.gates.environment import KEEP_OUTPUT_BYTES, relative_output
from pm_agent.gates.findings import Finding, ratchet, render_findings
from pm_agent.gates.unrunnable import cannot_run_reason
from pm_agent.gates.ward import CommandResult, run_command
from pm_agent.vcs import Git, GitCommandError

# Untracked tool environments in the worktree that lint and typecheck commands may run from.
TOOL_DIRS = (".venv", "venv", "node_modules")


@dataclass
class Hidden:
    """What the base configuration reports that the task's does not, per command."""

    commands: list[str] = field(default_factory=list)  # the commands compared
    findings: dict[str, list[Finding]] = field(default_factory=dict)  # command -> hidden findings
    unparsed: dict[str, str] = field(default_factory=dict)  # command -> why it counts as hiding (exit status)
    notes: list[str] = field(default_factory=list)

    @property
    def any(self) -> bool:
        """Whether anything is hidden."""
        return any(self.findings.values()) or bool(self.unparsed)

    def lines(self) -> list[str]:
        """Evidence lines: each command's hidden findings."""
        out: list[str] = []
        for command, found in self.findings.items():
            if found:
                out.append(f"  `{command}` with the base configuration reports {len(found)} finding(s) it now hides:")
                out += [f"    {line}" for line in render_findings(found, limit=20)]
        out += [f"  `{command}`: {why}" for command, why in self.unparsed.items()]
        out += [f"  ({note})" for note in self.notes]
        return out


@contextlib.contextmanager
def base_config_copy(worktree: Path, base: str, configs: Sequence[str]) -> Iterator[Path]:
    """A scratch worktree with the task's files and `configs` as they are on `base` (absent if absent there)."""
    git = Git(worktree)
    tree = git.worktree_tree()
    tmp = Path(tempfile.mkdtemp(prefix="pm-agent-base-config-"))
    path = tmp / worktree.name
    scratch: Git | None = None
    links: list[Path] = []
    try:
        scratch = git.worktree_add_detached(path, base)
        scratch.run("read-tree", "-u", "--reset", tree)
        for config in configs:
            try:
                scratch.run("checkout", base, "--", config)
            except GitCommandError:  # the task created it: the base has no such file
                (path / config).unlink(missing_ok=True)
        for name in TOOL_DIRS:  # ignored, so not in the tree: the tools installed there must still run
            if (worktree / name).is_dir() and not (path / name).exists():
                (path / name).symlink_to((worktree / name).resolve(), target_is_directory=True)
                links.append(path / name)
        yield path
    finally:
        for link in links:  # unlinked first: removing the scratch copy must never reach into the real ones
            link.unlink(missing_ok=True)
        if scratch is not None:
            with contextlib.suppress(GitCommandError):
                git.worktree_remove(path, force=True)
        shutil.rmtree(tmp, ignore_errors=True)
        git.worktree_prune()


def _run(command: str, cwd: Path, timeout_s: float, env: Mapping[str, str] | None) -> CommandResult:
    return run_command(command, cwd, timeout_s, env, keep_output_bytes=KEEP_OUTPUT_BYTES)


def compare_runs(
    command: str, task_run: CommandResult, base_run: CommandResult, timeout_s: float, hidden: Hidden
) -> None:
    """Record in `hidden` what `base_run` (base configuration) reports beyond `task_run` (the task's)."""
    hidden.commands.append(command)
    for label, run in (("the task's", task_run), ("the base", base_run)):
        why = cannot_run_reason(run, timeout_s)
        if why is not None:
            hidden.notes.append(f"`{command}` cannot run with {label} configuration ({why}): not compared")
            return
    verdict = ratchet(
        command, relative_output(task_run), task_run.exit_code, relative_output(base_run), base_run.exit_code
    )
    if verdict.rule == "exit-status" and not verdict.passed:
        hidden.unparsed[command] = (
            f"exit {task_run.exit_code} with the task's configuration, exit {base_run.exit_code} with the base "
            "configuration (output not parsed): the configuration change hides what makes it fail"
        )
    elif verdict.new:
        hidden.findings[command] = list(verdict.new)


def hidden_findings(
    worktree: Path,
    base: str,
    configs: Sequence[str],
    commands: Sequence[str],
    *,
    timeout_s: float,
    env: Mapping[str, str] | None = None,
) -> Hidden:
    """Run `commands` with the task's and with the base's `configs`; what only the base's reports is hidden."""
    hidden = Hidden()
    if not configs or not commands:
        return hidden
    task_runs = {cmd: _run(cmd, worktree, timeout_s, env) for cmd in commands}
    with base_config_copy(worktree, base, configs) as scratch:
        base_runs = {cmd: _run(cmd, scratch, timeout_s, env) for cmd in commands}
    for cmd in commands:
        compare_runs(cmd, task_runs[cmd], base_runs[cmd], timeout_s, hidden)
    return hidden


__all__ = ["TOOL_DIRS", "Hidden", "base_config_copy", "compare_runs", "hidden_findings"]
