"""The checks cannot be weakened from inside the task's scope: `checks-weakened` and the deeper `tests-weakened`.

checks-weakened: inline suppressions and new ignore/exclude entries in lint or type-check configuration,
each failing unless the review note justifies it (`gates/justify.py`); when the configuration changed,
the lint and typecheck commands also run with the base's configuration and the findings the task's
configuration hides are listed (and fail the gate unless every configuration entry is justified).

tests-weakened: the diff checks of `integrity.check_tests_weakened` (deleted tests, skip markers,
assertions removed), plus the test runner's configuration and conftest hooks (justified like
suppressions), the number of tests run against the baseline and the previous gate run
(`gates/collection.py`), and vacuous tests (`gates/vacuous.py`). Lines pm-agent cannot judge are
returned in `details["suspicious"]`: the gate passes and the task's review goes to a reviewer agent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

from pm_agent.gates.collection import count_problems, explained_drop, runner_weakenings
from pm_agent.gates.common import changes_for, is_ignored_path
from pm_agent.gates.config_rules import LINT, file_weakenings
from pm_agent.gates.configs import ESLINT_FLAT, Settings, is_lint_config, read_settings
from pm_agent.gates.hidden import Hidden, hidden_findings
from pm_agent.gates.integrity import check_tests_weakened
from pm_agent.gates.justify import JUSTIFY_HINT, Judgement, Weakening, judge_weakenings
from pm_agent.gates.models import AgentReport, GateId, GateResult
from pm_agent.gates.suppressions import added_suppressions
from pm_agent.gates.vacuous import VacuousReport, is_python_test, judge_file
from pm_agent.gates.ward import TestCounts
from pm_agent.plan.models import Task
from pm_agent.vcs import ChangeSet, Git, GitCommandError


def _show(git: Git, ref: str, path: str) -> str | None:
    try:
        return git.show_file(ref, path)
    except GitCommandError:
        return None


def _read(root: Path, path: str) -> str | None:
    file = root / path
    return file.read_text(encoding="utf-8", errors="replace") if file.is_file() else None


def lint_config_weakenings(root: Path, base: str, change: ChangeSet) -> tuple[list[Weakening], list[str], list[str]]:
    """(weakenings, configuration files whose lint/type-check settings changed, notes) of the change."""
    git = Git(root)
    found: list[Weakening] = []
    changed: list[str] = []
    notes: list[str] = []
    for path in change.names():
        if is_ignored_path(path) or not is_lint_config(path):
            continue
        old, new = _show(git, base, path), _read(root, path)
        try:
            found += file_weakenings(path, old, new, change.added.get(path, []), LINT)
            relevant = lint_settings_differ(path, old, new)
        except ValueError as exc:
            notes.append(str(exc))
            relevant = True
        if relevant:
            changed.append(path)
    return found, changed, notes


def lint_settings_differ(path: str, old: str | None, new: str | None) -> bool:
    """Whether a configuration file's change touches a linter's or type checker's settings (a new dependency
    in pyproject.toml does not); a file pm-agent cannot parse (eslint.config.js) always counts."""
    if ESLINT_FLAT.match(PurePosixPath(path).name):
        return True

    def lint_only(text: str | None) -> Settings:
        return {k: v for k, v in read_settings(path, text).items() if k[0] != "pytest"}

    return lint_only(old) != lint_only(new)


def _judgement_lines(title: str, judgement: Judgement) -> list[str]:
    total = len(judgement.justified) + len(judgement.unjustified)
    if not total:
        return []
    return [f"{title}: {total} added, {len(judgement.unjustified)} unjustified", *judgement.lines()]


def gate_checks_weakened(
    task: Task,
    worktree: Path | str,
    base: str,
    report: AgentReport,
    *,
    changes: ChangeSet | None = None,
    commands: Sequence[str] = (),
    timeout_s: float = 900.0,
    env: Mapping[str, str] | None = None,
) -> GateResult:
    """Suppressions and lint/type-check configuration weakened without a justification, and hidden findings."""
    root = Path(worktree)
    change = changes_for(root, base, changes)
    inline = added_suppressions(root, change)
    config, configs, notes = lint_config_weakenings(root, base, change)
    hidden = hidden_findings(root, base, configs, commands, timeout_s=timeout_s, env=env) if configs else Hidden()
    if hidden.any:
        # Findings hidden by a change pm-agent's rules do not name (`line-length = 200`): the file itself answers.
        named = {w.path for w in config}
        config += [
            Weakening(LINT, p, None, "(configuration change)", "configuration change hides findings", (p,))
            for p in configs
            if p not in named
        ]
    judgement = judge_weakenings([*inline, *config], report)
    lines = _judgement_lines("suppressions and lint/type-check ignore entries", judgement)
    if hidden.commands:
        lines.append("lint and typecheck re-run with the base commit's configuration (" + ", ".join(configs) + "):")
        lines += hidden.lines() if hidden.any else ["  nothing hidden: the same findings either way"]
    elif configs and not commands:
        lines.append(f"configuration changed ({', '.join(configs)}); no lint or typecheck command to re-run")
    lines += [f"  (not read: {note})" for note in notes]
    if judgement.unjustified:
        lines.append(JUSTIFY_HINT)
    if not lines:
        lines = ["no suppression or lint/type-check ignore entry added"]
    return GateResult(
        gate=GateId.CHECKS_WEAKENED,
        passed=not judgement.unjustified,
        evidence="\n".join(lines),
        details={
            "unjustified": [w.quote() for w in judgement.unjustified],
            "justified": [w.quote() for w, _ in judgement.justified],
            "configs": configs,
            "hidden": {cmd: [f.key for f in found] for cmd, found in hidden.findings.items()},
            "hidden_unparsed": hidden.unparsed,
        },
    )


def vacuous_tests(root: Path, base: str, change: ChangeSet) -> VacuousReport:
    """Judge the tests of each Python test file the change adds or modifies."""
    git = Git(root)
    report = VacuousReport()
    for path in change.present():
        if not is_python_test(path) or path not in change.added:
            continue
        text = _read(root, path)
        if text is not None:
            judge_file(path, _show(git, base, path), text, report)
    return report


def gate_tests_weakened(
    task: Task,
    worktree: Path | str,
    base: str,
    report: AgentReport,
    *,
    changes: ChangeSet | None = None,
    counts: TestCounts | None = None,
    references: Sequence[tuple[str, TestCounts | None]] = (),
) -> GateResult:
    """`check_tests_weakened` plus runner configuration, conftest hooks, test counts and vacuous tests."""
    root = Path(worktree)
    change = changes_for(root, base, changes)
    classic = check_tests_weakened(task, root, base, changes=change)
    runner, notes = runner_weakenings(root, base, change)
    judgement = judge_weakenings(runner, report)
    count_fail: list[str] = []
    count_lines: list[str] = []
    if references:
        count_fail, count_lines = count_problems(counts, references, explained_drop(task, root, base))
    vacuous = vacuous_tests(root, base, change)
    problems = classic.evidence.splitlines() if not classic.passed else []
    problems += [f"vacuous test: {line}" for line in vacuous.failing]
    problems += count_fail
    lines = list(problems)
    lines += _judgement_lines("test runner configuration and conftest hooks", judgement)
    if judgement.unjustified:
        lines.append(JUSTIFY_HINT)
    if vacuous.suspicious:
        lines.append("pm-agent cannot tell whether these tests can fail (a reviewer will look):")
        lines += [f"  {line}" for line in vacuous.suspicious]
    lines += count_lines
    lines += [f"(not read: {note})" for note in [*notes, *vacuous.skipped]]
    passed = classic.passed and not vacuous.failing and not count_fail and not judgement.unjustified
    if passed and not judgement.justified and not vacuous.suspicious:
        lines.insert(0, classic.evidence + f"; {len(vacuous.checked)} changed test(s) can fail")
    return GateResult(
        gate=GateId.TESTS_WEAKENED,
        passed=passed,
        evidence="\n".join(lines),
        details={
            **classic.details,
            "vacuous": vacuous.failing,
            "suspicious": vacuous.suspicious,
            "tests_checked": vacuous.checked,
            "runner_unjustified": [w.quote() for w in judgement.unjustified],
            "runner_justified": [w.quote() for w, _ in judgement.justified],
            "count_problems": count_fail,
            "test_counts": counts.model_dump() if counts is not None else None,
        },
    )


__all__ = ["gate_checks_weakened", "gate_tests_weakened", "lint_config_weakenings", "vacuous_tests"]
