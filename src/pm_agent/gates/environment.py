"""Environment-contract commands against their baseline: what ran there, and whether a run is worse.

The baseline is every configured command run once on the run's baseline commit (see preflight/). A gate
in ratchet mode fails only on what a task made worse: new findings, or, where the output cannot be
parsed, an exit status worse than the baseline's. The verdict always says which rule decided it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from pm_agent.gates.findings import parse_findings, ratchet, render_findings
from pm_agent.gates.unrunnable import baseline_cannot_run, cannot_run_reason
from pm_agent.gates.ward import CommandResult

# (config key, name used in gates, reports and the final gate), in the order they run.
ENVIRONMENT_COMMANDS: tuple[tuple[str, str], ...] = (
    ("setup_command", "setup"),  # first: the others may need what it installs
    ("test_command", "tests"),
    ("lint_command", "lint"),
    ("typecheck_command", "typecheck"),
    ("format_command", "format"),
    ("build_command", "build"),
    ("migration_dry_run_command", "migration dry-run"),
    ("migration_rollback_command", "migration rollback"),
)
KEEP_OUTPUT_BYTES = 512 * 1024  # enough for the findings of any sane lint run; more falls back to exit status



class BaselineCommand(BaseModel):
    """One environment command as it ran on the baseline commit."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str
    name: str
    command: str
    cwd: str = ""  # where it ran; stripped from paths in the output so another worktree compares equal
    exit_code: int
    duration_ms: int
    timed_out: bool = False
    output_tail: str = ""
    output: str = ""  # the whole output up to KEEP_OUTPUT_BYTES, for comparing findings
    output_complete: bool = True
    parser: str | None = None
    findings: int = 0
    cannot_run: str | None = None  # why the command cannot run at all; None when it ran

    @property
    def ok(self) -> bool:
        """Exit 0 and not timed out."""
        return self.exit_code == 0 and not self.timed_out

    @property
    def blind(self) -> bool:
        """It fails on the baseline and pm-agent reads no findings in its output (no known tool's, or too much of it):
        the ratchet can tell only a change of its exit status, not a new failure inside it."""
        return not self.ok and self.cannot_run is None and (self.parser is None or not self.output_complete)

    def ratchet_note(self) -> str:
        """What the gates can see of this command, failing on the baseline, in ratchet mode."""
        if self.blind:
            return (
                "pm-agent reads no findings in its output, so its gate sees only a change of exit status, not a new "
                "failure inside it (make it pass on the baseline for that)"
            )
        return "gates will fail only on new findings"

    def summary(self) -> str:
        """`exit 1, 12 findings (ruff)` or `exit 0`."""
        if self.cannot_run:
            return f"cannot run: {self.cannot_run}"
        found = f", {self.findings} finding(s) ({self.parser})" if self.parser and not self.ok else ""
        return f"exit {self.exit_code}{found}"


class Baseline(BaseModel):
    """The results of every configured environment command on the baseline commit."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sha: str
    mode: Literal["ratchet", "strict"] = "ratchet"
    commands: tuple[BaselineCommand, ...] = ()
    # Files the commands created or changed that git would stage (not ignored, not pm-agent's GENERATED_EXCLUDES):
    # each task's gate run would find them in its change.
    leftovers: tuple[str, ...] = ()

    def get(self, key: str) -> BaselineCommand | None:
        """The baseline run of a config key (`lint_command`), if it was configured."""
        return next((c for c in self.commands if c.key == key), None)

    def for_command(self, command: str) -> BaselineCommand | None:
        """The baseline run of exactly this command line."""
        return next((c for c in self.commands if c.command == command), None)


def relative_output(result: CommandResult) -> str:
    """The command's output with its working directory's absolute path removed from the paths in it."""
    output = result.output if result.output is not None else result.output_tail
    return output.replace(result.cwd.rstrip("/") + "/", "") if result.cwd else output


def baseline_entry(key: str, name: str, result: CommandResult, timeout_s: float) -> BaselineCommand:
    """A command's baseline record: exit status, output, and the findings pm-agent could parse."""
    output = relative_output(result)
    found = parse_findings(result.cmd, output, result.exit_code)
    return BaselineCommand(
        key=key,
        name=name,
        command=result.cmd,
        cwd=result.cwd,
        exit_code=result.exit_code,
        duration_ms=result.duration_ms,
        timed_out=result.timed_out,
        output_tail=result.output_tail,
        output=output[:KEEP_OUTPUT_BYTES],
        output_complete=result.output_complete,
        parser=found.parser,
        findings=len(found.findings),
        cannot_run=baseline_cannot_run(result, timeout_s),
    )


class Verdict(BaseModel):
    """How one command's run in a task compares with the baseline; `rule` says what decided it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    passed: bool
    rule: Literal["clean", "findings", "exit-status", "strict", "environment"]
    lines: tuple[str, ...] = ()
    new: int = 0
    preexisting: int = 0
    fixed: int = 0
    environment_failure: str | None = None  # the command could not run: a human's problem, not the fixer's


def judge(
    result: CommandResult,
    baseline: BaselineCommand | None,
    *,
    mode: Literal["ratchet", "strict"],
    timeout_s: float,
) -> Verdict:
    """Ratchet: fail only on what is worse than the baseline. Strict, or no baseline: exit 0 or fail."""
    failure = cannot_run_reason(result, timeout_s)
    if failure is not None:
        return Verdict(
            passed=False,
            rule="environment",
            lines=(f"ENVIRONMENT: `{result.cmd}` cannot run: {failure} (not the task's doing: escalated)",),
            environment_failure=failure,
        )
    ran_before = baseline is not None and baseline.cannot_run is None and not baseline.ok
    if result.ok:
        fixed = f"; fixed {baseline.findings} pre-existing finding(s)" if ran_before and baseline else ""
        return Verdict(passed=True, rule="clean", lines=(f"`{result.cmd}`: exit 0 (rule: clean){fixed}",))
    if baseline is None or mode == "strict" or not ran_before:
        why = "environment.baseline is strict" if mode == "strict" else "it passed on the baseline"
        if baseline is None:
            why = "no baseline run to compare with"
        return Verdict(passed=False, rule="strict", lines=(f"`{result.cmd}`: exit {result.exit_code} ({why})",))
    current = relative_output(result)
    if not (baseline.output_complete and result.output_complete):
        same = result.exit_code == baseline.exit_code  # a crash's exit 2 after the baseline's 1 is worse, as in ratchet
        return Verdict(
            passed=same,
            rule="exit-status",
            lines=(
                f"`{result.cmd}`: exit {result.exit_code}, baseline exit {baseline.exit_code} (rule: exit-status: "
                f"the output was too large to compare findings; {'no worse' if same else 'worse'} than the baseline)",
            ),
        )
    verdict = ratchet(result.cmd, baseline.output, baseline.exit_code, current, result.exit_code)
    lines = [f"`{result.cmd}`: exit {result.exit_code} (rule: {verdict.rule}) {verdict.explanation}"]
    if verdict.new:
        lines.append(f"NEW findings ({len(verdict.new)}), made by this change:")
        lines += [f"  {line}" for line in render_findings(verdict.new)]
    if verdict.preexisting:
        lines.append(f"pre-existing findings ({len(verdict.preexisting)}), on the baseline already (not this task's):")
        lines += [f"  {line}" for line in render_findings(verdict.preexisting, limit=10)]
    return Verdict(
        passed=verdict.passed,
        rule=verdict.rule,
        lines=tuple(lines),
        new=len(verdict.new),
        preexisting=len(verdict.preexisting),
        fixed=len(verdict.fixed),
    )
