"""The test runner's configuration is part of the tests: what it leaves out, and how many tests ran.

- Runner configuration: pytest settings (pyproject `[tool.pytest.ini_options]`, pytest.ini, setup.cfg
  `[tool:pytest]`, tox.ini `[pytest]`) that leave tests out (`addopts` with `-k`, `-m`, `--deselect`,
  `--ignore`; narrowed `testpaths`; new `norecursedirs`; changed `python_files`), and hooks in a
  conftest.py that deselect, skip, leave files out or rewrite outcomes (`pytest_collection_modifyitems`,
  `pytest_ignore_collect`, `pytest_runtest_makereport`, ..., `collect_ignore`), added or changed.
- Counts: the tests the test command ran, against the baseline's run of the same command and against
  the task's previous gate run. Fewer than before is a drop; the contract explains a drop only by
  deleting test files (up to the tests they held) or by saying in its text that tests are removed.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pm_agent.gates.common import is_ignored_path, is_test_path, norm_path
from pm_agent.gates.config_rules import RUNNER, file_weakenings
from pm_agent.gates.configs import config_format
from pm_agent.gates.justify import Weakening
from pm_agent.gates.ward import TestCounts
from pm_agent.plan.models import Task
from pm_agent.vcs import ChangeSet, Git, GitCommandError

# Hooks (and conftest variables) that decide which tests run or what their outcome is.
RUNNER_HOOKS: dict[str, str] = {
    "pytest_collection_modifyitems": "can deselect or drop collected tests",
    "pytest_ignore_collect": "can leave test files out of collection",
    "pytest_deselected": "reports tests as deselected",
    "pytest_collection": "can replace collection",
    "pytest_collect_file": "decides which files are collected",
    "pytest_pycollect_makeitem": "decides which functions are collected",
    "pytest_runtest_setup": "can skip tests",
    "pytest_runtest_call": "can skip or replace a test's call",
    "pytest_runtest_protocol": "can replace a test's run",
    "pytest_runtest_makereport": "can rewrite a test's outcome",
    "pytest_report_teststatus": "can rewrite a test's reported status",
    "collect_ignore": "leaves files out of collection",
    "collect_ignore_glob": "leaves files out of collection",
}
_REMOVES_TESTS = re.compile(r"\b(?:remov|delet|drop|retir)\w*\b(?:\W+\w+){0,5}?\W+tests?\b", re.IGNORECASE)
_NEGATED = re.compile(r"\b(?:not|never|no|without)\b|n't\b", re.IGNORECASE)


def _definitions(text: str | None) -> dict[str, ast.stmt]:
    """Module-level hook functions and `collect_ignore*` assignments of a Python file, by name."""
    if text is None:
        return {}
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    found: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in RUNNER_HOOKS:
            found[node.name] = node
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id in RUNNER_HOOKS:
                    found[target.id] = node
    return found


def hook_weakenings(path: str, old_text: str | None, new_text: str) -> list[Weakening]:
    """Runner hooks a test-side Python file (conftest.py above all) adds or changes."""
    old, new = _definitions(old_text), _definitions(new_text)
    lines = new_text.splitlines()
    found: list[Weakening] = []
    for name, node in new.items():
        before = old.get(name)
        if before is not None and ast.dump(before) == ast.dump(node):
            continue
        verb = "changed" if before is not None else "added"
        text = lines[node.lineno - 1].strip() if 0 < node.lineno <= len(lines) else name
        what = f"{name} {verb} ({RUNNER_HOOKS[name]})"
        found.append(Weakening(RUNNER, path, node.lineno, text, what, (name,)))
    return found


def _show(git: Git, ref: str, path: str) -> str | None:
    try:
        return git.show_file(ref, path)
    except GitCommandError:
        return None


def runner_weakenings(root: Path, base: str, changes: ChangeSet) -> tuple[list[Weakening], list[str]]:
    """Test runner configuration and hooks the change weakens; notes for files that could not be read."""
    git = Git(root)
    found: list[Weakening] = []
    notes: list[str] = []
    for path in changes.names():
        if is_ignored_path(path):
            continue
        file = root / path
        new_text = file.read_text(encoding="utf-8", errors="replace") if file.is_file() else None
        added = changes.added.get(path, [])
        if config_format(path) is not None:
            try:
                found += file_weakenings(path, _show(git, base, path), new_text, added, RUNNER)
            except ValueError as exc:
                notes.append(str(exc))
        if path.endswith(".py") and is_test_path(path) and new_text is not None:
            found += hook_weakenings(path, _show(git, base, path), new_text)
    return found, notes


def ran(counts: TestCounts) -> int:
    """Tests that ran: passed, failed, errored, xfailed and xpassed."""
    return counts.passed + counts.failed + counts.errors + counts.xfailed + counts.xpassed


def _count_tests(text: str) -> int:
    """Test functions of a Python test file; a literal `parametrize` list counts each case."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return 0
    total = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
            cases = 1
            for deco in node.decorator_list:
                parametrize = isinstance(deco, ast.Call) and getattr(deco.func, "attr", "") == "parametrize"
                values = deco.args[1] if isinstance(deco, ast.Call) and parametrize and len(deco.args) > 1 else None
                if isinstance(values, ast.List | ast.Tuple):
                    cases *= max(len(values.elts), 1)
            total += cases
    return total


@dataclass
class Explained:
    """How many fewer tests the contract allows, and why."""

    tests: int = 0
    reasons: list[str] = field(default_factory=list)
    unlimited: bool = False


def explained_drop(task: Task, root: Path, base: str) -> Explained:
    """Tests the contract removes: those of the test files it deletes, or any when its text says so."""
    explained = Explained()
    git = Git(root)
    for raw in task.expected_files.delete:
        path = norm_path(root, raw)
        if not is_test_path(path):
            continue
        text = _show(git, base, path)
        count = _count_tests(text) if text is not None else 0
        explained.tests += count
        explained.reasons.append(f"the contract deletes {path} ({count} test(s))")
    text = "\n".join([task.title, task.description, *task.steps, *task.acceptance_criteria, task.body])
    said = next(
        (m for m in _REMOVES_TESTS.finditer(text) if not _NEGATED.search(text[max(0, m.start() - 24) : m.start()])),
        None,
    )
    if said:
        explained.unlimited = True
        explained.reasons.append(f"the contract says {said.group(0)!r}")
    return explained


def count_problems(
    current: TestCounts | None,
    references: Sequence[tuple[str, TestCounts | None]],
    explained: Explained,
) -> tuple[list[str], list[str]]:
    """(problems, evidence lines): each reference run (baseline, previous gate run) with more tests run."""
    if current is None:
        return [], ["test counts: not compared (the test command printed no pytest summary)"]
    if current.failed or current.errors:
        # A failing run may have stopped early (-x, a collection error): its count means little, and gate 3 fails.
        return [], [f"test counts: not compared ({current.failed} failed, {current.errors} errors: gate 3 reports it)"]
    lines = [f"test counts: {ran(current)} ran now ({current.skipped} skipped, {current.deselected} deselected)"]
    problems: list[str] = []
    for label, counts in references:
        if counts is None:
            lines.append(f"  {label}: no counts to compare with")
            continue
        drop = ran(counts) - ran(current)
        lines.append(f"  {label}: {ran(counts)} ran ({counts.skipped} skipped, {counts.deselected} deselected)")
        if drop <= 0:
            continue
        if explained.unlimited or drop <= explained.tests:
            lines.append(f"    {drop} fewer, explained: {'; '.join(explained.reasons)}")
            continue
        why = f" (the contract explains {explained.tests}: {'; '.join(explained.reasons)})" if explained.reasons else ""
        problems.append(f"{drop} fewer test(s) ran than in the {label}: {ran(counts)} -> {ran(current)}{why}")
    return problems, lines


__all__ = [
    "RUNNER_HOOKS",
    "Explained",
    "count_problems",
    "explained_drop",
    "hook_weakenings",
    "ran",
    "runner_weakenings",
]
