"""Gates 2-4: commands pm-agent runs itself in the worktree. The agent's claims are recorded, not used.

Gate 2 (tests added): every `tests_to_add` file exists, is part of the change, and passes when
pm-agent runs the test runner on those files. Gate 3 (tests run): the environment's `test_command`
and the contract's `tests_to_run` pass. Gate 4: `lint_command`, `typecheck_command` and
`format_command` exit 0.
With a baseline (the environment commands run on the run's baseline commit) and `environment.baseline:
ratchet`, the environment's own commands in gates 3 and 4 fail only on what the task made worse (see
environment.py); the evidence says which rule decided. A command that cannot run at all is an
environment failure (`details["environment_failure"]`): a human's problem, never the fixer's.
A contract that asks for tests pm-agent cannot run (no `test_command`) fails the gate: the evidence
says what is missing, so the escalation can ask for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pm_agent.gates.common import changes_for, command_evidence, describe, norm_path
from pm_agent.gates.environment import KEEP_OUTPUT_BYTES, Baseline, Verdict, judge
from pm_agent.gates.models import AgentReport, GateId, GateResult, Payload
from pm_agent.gates.narrow import command_for_test_files
from pm_agent.gates.ward import CommandResult, run_command
from pm_agent.plan.models import EnvironmentContract, Task
from pm_agent.vcs import ChangeSet

DEFAULT_TIMEOUT_S = 900.0


def _run(cmd: str, worktree: Path, timeout_s: float, env: Mapping[str, str] | None) -> CommandResult:
    return run_command(cmd, worktree, timeout_s, env, keep_output_bytes=KEEP_OUTPUT_BYTES)


def _judged(
    results: list[CommandResult], baseline: Baseline | None, timeout_s: float, ratchet_commands: set[str]
) -> list[Verdict]:
    """A verdict per result: the environment's own commands against the baseline, the rest strictly."""
    mode = baseline.mode if baseline is not None else "strict"
    return [
        judge(
            r,
            baseline.for_command(r.cmd) if baseline is not None and r.cmd in ratchet_commands else None,
            mode=mode,
            timeout_s=timeout_s,
        )
        for r in results
    ]


def _verdict_evidence(results: list[CommandResult], verdicts: list[Verdict], baseline: Baseline | None) -> list[str]:
    """A summary line per command, each verdict's lines (rule, new and pre-existing findings), then the output
    tail of each command whose verdict failed (a baseline failure that is no worse shows no tail)."""
    if baseline is None:
        return command_evidence(results)
    lines: list[str] = []
    for result, verdict in zip(results, verdicts, strict=True):
        if result.ok:
            lines.append(describe(result))  # "`cmd` PASSED: ...", as without a baseline
        lines += verdict.lines  # a non-zero exit the ratchet accepted is not called FAILED
        if not verdict.passed:
            lines += command_evidence([result])
    return lines


def _verdict_details(verdicts: list[Verdict]) -> dict[str, Any]:
    failure = next((v.environment_failure for v in verdicts if v.environment_failure), None)
    return {
        "rules": [v.rule for v in verdicts],
        "new_findings": sum(v.new for v in verdicts),
        "preexisting_findings": sum(v.preexisting for v in verdicts),
        "environment_failure": failure,
    }


def _dump(results: list[CommandResult]) -> list[dict[str, Any]]:
    return [r.model_dump(mode="json") for r in results]


def gate_tests_added(
    task: Task,
    worktree: Path | str,
    base: str,
    *,
    environment: EnvironmentContract | None = None,
    changes: ChangeSet | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    env: Mapping[str, str] | None = None,
) -> GateResult:
    """Gate 2: `tests_to_add` written (present, in the change) and passing when pm-agent runs them."""
    root = Path(worktree)
    files = [norm_path(root, f) for f in task.tests_to_add]
    if not files:
        return GateResult(gate=GateId.TESTS_ADDED, passed=True, evidence="the contract lists no tests_to_add")
    changed = set(changes_for(root, base, changes).present())
    on_disk = [f.split("::", 1)[0] for f in files]
    missing = [f for f, p in zip(files, on_disk, strict=True) if not (root / p).exists()]
    unchanged = [f for f, p in zip(files, on_disk, strict=True) if f not in missing and p not in changed]
    lines = [f"tests_to_add: {', '.join(files)}"]
    lines += [f"  MISSING: {f} does not exist in the worktree" for f in missing]
    lines += [f"  NOT IN CHANGE: {f} was not added or modified by this task" for f in unchanged]
    test_command = (environment or task.environment).test_command
    results: list[CommandResult] = []
    if not test_command:
        lines.append("  CANNOT RUN: no test_command in the environment contract")
    elif not missing:
        results.append(_run(command_for_test_files(test_command, files, root), root, timeout_s, env))
        lines += command_evidence(results)
    passed = bool(test_command) and not missing and not unchanged and all(r.ok for r in results)
    return GateResult(
        gate=GateId.TESTS_ADDED,
        passed=passed,
        evidence="\n".join(lines),
        details={"files": files, "missing": missing, "not_in_change": unchanged, "commands": _dump(results)},
    )


def gate_tests_run(
    task: Task,
    worktree: Path | str,
    report: Payload,
    *,
    environment: EnvironmentContract | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    env: Mapping[str, str] | None = None,
    baseline: Baseline | None = None,
) -> GateResult:
    """Gate 3: pm-agent runs `test_command` and `tests_to_run`; all must pass (or, for `test_command` under
    the ratchet, fail no test that passed on the baseline), whatever the agent says."""
    root = Path(worktree)
    agent = AgentReport.from_payload(report)
    test_command = (environment or task.environment).test_command
    commands = [test_command] if test_command else []
    commands += [t for t in task.tests_to_run if " " in t.strip()]  # entries that are whole commands
    paths = [norm_path(root, t) for t in task.tests_to_run if " " not in t.strip()]
    lines: list[str] = []
    cannot_run = bool(paths) and not test_command
    if cannot_run:
        lines.append(f"CANNOT RUN tests_to_run {', '.join(paths)}: no test_command in the environment contract")
    elif paths and test_command:
        narrowed = command_for_test_files(test_command, paths, root)
        if narrowed != test_command:  # a runner that cannot be pointed at files: its whole suite already runs
            commands.append(narrowed)
    if not commands and not cannot_run:
        return GateResult(
            gate=GateId.TESTS_RUN,
            passed=True,
            evidence="not configured: no test_command and no tests_to_run",
            details={"configured": False, "agent_claimed_pass": agent.tests_claimed_passing},
        )
    results = [_run(cmd, root, timeout_s, env) for cmd in commands]
    verdicts = _judged(results, baseline, timeout_s, {test_command} if test_command else set())
    passed = not cannot_run and all(v.passed for v in verdicts)
    claim = agent.tests_claimed_passing
    claim_text = {True: "tests pass", False: "tests fail", None: "no claim"}[claim]
    mismatch = claim is True and not passed
    lines = [
        f"agent claimed: {claim_text}; pm-agent ran {len(results)} command(s): {'all passed' if passed else 'FAILED'}",
        *lines,
    ]
    if mismatch:
        lines.insert(0, "agent claimed pass but tests failed")
    lines += _verdict_evidence(results, verdicts, baseline)
    if agent.test_evidence:
        lines.append("agent's evidence (not trusted): " + " | ".join(agent.test_evidence[:5]))
    return GateResult(
        gate=GateId.TESTS_RUN,
        passed=passed,
        evidence="\n".join(lines),
        details={
            "configured": True,
            "agent_claimed_pass": claim,
            "claim_mismatch": mismatch,
            "cannot_run": paths if cannot_run else [],
            "commands": _dump(results),
            **_verdict_details(verdicts),
        },
    )


def gate_lint_typecheck(
    task: Task,
    worktree: Path | str,
    *,
    environment: EnvironmentContract | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    env: Mapping[str, str] | None = None,
    baseline: Baseline | None = None,
) -> GateResult:
    """Gate 4: the contract's lint, typecheck and format-check commands exit 0, or under the ratchet add no finding
    to the baseline's (each skipped when not configured)."""
    root = Path(worktree)
    contract = environment or task.environment
    named = [
        ("lint", contract.lint_command),
        ("typecheck", contract.typecheck_command),
        ("format", contract.format_command),
    ]
    configured = [(name, cmd) for name, cmd in named if cmd]
    if not configured:
        return GateResult(
            gate=GateId.LINT_TYPECHECK,
            passed=True,
            evidence="not configured: no lint or typecheck command",
            details={"configured": False},
        )
    results = [_run(cmd, root, timeout_s, env) for _, cmd in configured]
    verdicts = _judged(results, baseline, timeout_s, {cmd for _, cmd in configured})
    # A format check is optional (many projects have none): its absence is not worth a line on every gate run.
    lines = [f"{name}: not configured" for name, cmd in named if not cmd and name != "format"]
    lines += _verdict_evidence(results, verdicts, baseline)
    return GateResult(
        gate=GateId.LINT_TYPECHECK,
        passed=all(v.passed for v in verdicts),
        evidence="\n".join(lines),
        details={
            "configured": True,
            "commands": _dump(results),
            "kinds": [name for name, _ in configured],
            **_verdict_details(verdicts),
        },
    )


__all__ = ["DEFAULT_TIMEOUT_S", "gate_lint_typecheck", "gate_tests_added", "gate_tests_run"]
