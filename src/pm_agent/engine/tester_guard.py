"""The tester's tests are protected like the base's: no later change may delete, skip or strip them.

The `tests-weakened` gate compares the change with the task's base commit, and the tester's tests are
not in it: they are new lines of the same uncommitted change, so a developer who rewrote one of them
(or deleted a test function from a file that is new anyway) would show nothing against the base. The
gate pass right after the tester's round records the tree it checked (`tester.tree`); every later gate
pass compares the tree it checks with that one by the same rules (`integrity.check_tests_weakened`):
a test file deleted, a skip/xfail marker added, assertion lines removed. Tests the contract plans to
delete stay allowed, as they are against the base.

The tester adds tests; it does not change the code. Before the gates check its round, whatever it
changed outside test files (`is_test_path`) is put back as the tree before its round had it, and the
paths are recorded (`tester.out_of_scope`): a tester that "fixes" the code to make its own test pass
would otherwise ship unreviewed code under the developer's name.
"""

from __future__ import annotations

from pathlib import Path

from pm_agent.engine.history import TaskHistory
from pm_agent.gates import GateResult, check_tests_weakened, is_ignored_path, is_test_path
from pm_agent.plan.models import Task
from pm_agent.vcs import Git

TESTER_TREE = "tester.tree"  # event: the tree the gates checked right after the tester's round
TESTER_TESTS = "tester-tests"  # the check's name in gate results
OUT_OF_SCOPE = "tester.out_of_scope"  # event: files outside the tests the tester changed, put back


def tester_tree(history: TaskHistory) -> str | None:
    """The tree the tester left (checked by the gates right after its round); None before the round."""
    found = history.events(TESTER_TREE)
    return str(found[-1]["tree"]) if found else None


def check_tester_tests(task: Task, worktree: Path, tester: str, tree: str) -> GateResult:
    """The tests in `tree` against the tree the tester left: none deleted, skipped or stripped of assertions."""
    changes = Git(worktree).changes(tester, tree)
    found = check_tests_weakened(task, worktree, tester, changes=changes)
    if found.passed:
        evidence = f"the tester's tests (tree {tester[:12]}) are all still there and unweakened"
    else:
        lines = [f"the tester's edge-case tests (tree {tester[:12]}) were weakened; restore them:"]
        lines += [f"  {line}" for line in found.evidence.splitlines()]
        lines.append("make the code pass them; a test you think is wrong goes to a human (needs-user-input)")
        evidence = "\n".join(lines)
    return GateResult(gate=TESTER_TESTS, passed=found.passed, evidence=evidence, details=found.details)


def restore_outside_tests(worktree: Path, before: str) -> list[str]:
    """Put back every file the tester changed that is not a test (as tree `before` has it); the paths put back."""
    git = Git(worktree)
    restored: list[str] = []
    for change in git.changes(before).files:
        if is_test_path(change.path) or is_ignored_path(change.path):
            continue
        if change.status == "A":
            (worktree / change.path).unlink(missing_ok=True)
        else:
            git.run("restore", f"--source={before}", "--worktree", "--", change.path)
        restored.append(change.path)
    return restored
