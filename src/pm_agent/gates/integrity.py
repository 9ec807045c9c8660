"""Integrity checks beyond the six gates: scope, weakened tests, version-control tampering.

- scope: every changed path is an expected file (create/modify/delete/test, tests_to_add), under the
  task's ownership directory, or ignored (docs/reviews/, caches, bytecode).
- tests-weakened: test files deleted (unless the contract deletes them), skip/xfail markers added to
  tests (pytest, unittest, the JavaScript runners, JUnit, TestNG, go, Rust, PHPUnit, RSpec, minitest), or
  assertions removed from tests (more assert lines removed than added in a file).
- vcs-tampering: the agent committed, moved HEAD, switched branch or rewrote history.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from pathlib import Path

from pm_agent.gates.common import changes_for, is_ignored_path, is_test_path, norm_path
from pm_agent.gates.models import GateId, GateResult
from pm_agent.plan.models import Task
from pm_agent.vcs import ChangeSet, SessionBaseline, detect_agent_vcs_tampering

SKIP_MARKER = re.compile(
    r"pytest\.mark\.(?:skip|skipif|xfail)\b"
    r"|\bpytest\.(?:skip|xfail)\s*\("
    r"|\bunittest\.(?:skip|skipIf|skipUnless|expectedFailure)\b"
    r"|@(?:skip|skipIf|skipUnless|expectedFailure)\b"
    r"|\.skipTest\s*\("
    r"|\b(?:it|test|describe|context)\.(?:skip|only|todo)\s*\("
    r"|\bx(?:it|test|describe)\s*\("
    # JUnit 4 and 5 (Java, Kotlin), TestNG, go's testing.T, Rust.
    r"|@(?:Ignore|Disabled\w*)\b"
    r"|@Test\s*\([^)]*\benabled\s*=\s*false\b"
    r"|\.Skip(?:f|Now)?\s*\("
    r"|#\[ignore\b"
    # PHPUnit; RSpec and minitest, whose calls often go without parentheses.
    r"|\bmarkTest(?:Skipped|Incomplete)\s*\("
    r"|^\s*x(?:it|describe|context|specify)\b(?:\s*[(\"']|\s+[A-Z])"
    r"|^\s*(?:skip|pending)(?:\s*\(|\s+[\"']|\s*$)"
)
ASSERTION = re.compile(
    r"^\s*(?:assert\b|self\.assert\w*\s*\(|self\.fail\s*\(|expect\s*\(|assert_\w+\s*\("
    # JUnit's and AssertJ's assertEquals/assertThat, testify and node's assert.x/require.x, go's t.Error/t.Fatal,
    # Rust's assert!/assert_eq!.
    r"|(?:\w+\.)*assert[A-Z]\w*\s*\(|(?:assert|require)\.\w+\s*\(|t\.(?:Error|Fatal)f?\s*\(|(?:debug_)?assert(?:_\w+)?!\s*\("
    # PHPUnit's $this->assertSame(...) and self::assertTrue(...); minitest's assert_equal 3, x (no parentheses).
    r"|(?:\$this->|self::|static::)assert\w*\s*\(|(?:assert|refute)_\w+\s+[^=\s])"
)
_RANGE_SUFFIX = re.compile(r":\d+(?:-\d+)?$")


def _allowed(task: Task, worktree: Path, extra_allowed: Sequence[str]) -> list[str]:
    entries = [*task.expected_files.all_paths(), *task.tests_to_add, *extra_allowed]
    allowed = [_RANGE_SUFFIX.sub("", norm_path(worktree, e)) for e in entries if e.strip()]
    owner = task.ownership.strip()
    if owner and ("/" in owner or (worktree / owner).is_dir()):
        allowed.append(norm_path(worktree, owner).rstrip("/") + "/")
    return allowed


def in_scope(path: str, allowed: Sequence[str], worktree: Path | None = None) -> bool:
    """Whether `path` is one of `allowed`: an exact path, a directory ("dir/" or existing), or a glob."""
    for entry in allowed:
        if path == entry.rstrip("/") and not entry.endswith("/"):
            return True
        directory = entry if entry.endswith("/") else entry + "/"
        is_dir = entry.endswith("/") or (worktree is not None and (worktree / entry).is_dir())
        if is_dir and path.startswith(directory):
            return True
        if any(c in entry for c in "*?[") and fnmatch.fnmatchcase(path, entry):
            return True
    return False


def check_scope(
    task: Task,
    worktree: Path | str,
    base: str,
    *,
    changes: ChangeSet | None = None,
    extra_allowed: Sequence[str] = (),
) -> GateResult:
    """Files changed outside the contract's expected files and ownership area."""
    root = Path(worktree)
    change = changes_for(root, base, changes)
    allowed = _allowed(task, root, extra_allowed)
    considered = [p for p in change.names() if not is_ignored_path(p)]
    if not _allowed(task, root, ()):  # `extra_allowed` alone (e.g. docs/reviews/) defines no scope
        return GateResult(
            gate=GateId.SCOPE,
            passed=True,
            evidence="the contract names no expected files or ownership directory; scope not checked",
            details={"checked": False, "changed": considered},
        )
    outside = [p for p in considered if not in_scope(p, allowed, root)]
    expected = [*task.expected_files.create, *task.expected_files.modify, *task.expected_files.delete]
    untouched = [p for p in expected if not any(in_scope(c, [norm_path(root, p)], root) for c in change.names())]
    if outside:
        lines = [f"{len(outside)} file(s) changed outside the task's scope:"]
        lines += [f"  {p} ({change.status_of(p)})" for p in outside]
        lines.append(f"  allowed: {', '.join(allowed)}")
    else:
        lines = [f"all {len(considered)} changed file(s) are within scope"]
    if untouched:
        lines.append(f"  (expected but untouched: {', '.join(untouched)})")
    return GateResult(
        gate=GateId.SCOPE,
        passed=not outside,
        evidence="\n".join(lines),
        details={"checked": True, "outside": outside, "allowed": allowed, "untouched": untouched},
    )


def check_tests_weakened(
    task: Task,
    worktree: Path | str,
    base: str,
    *,
    changes: ChangeSet | None = None,
) -> GateResult:
    """Deleted test files, skip/xfail markers added to tests, assertions removed from tests."""
    root = Path(worktree)
    change = changes_for(root, base, changes)
    planned = {norm_path(root, p) for p in task.expected_files.delete}
    deleted = [p for p in change.deleted() if is_test_path(p) and p not in planned]
    markers = [
        f"{path}:{number}: {text.strip()[:160]}"
        for path, lines in sorted(change.added.items())
        if is_test_path(path)
        for number, text in lines
        if SKIP_MARKER.search(text)
    ]
    removed_asserts: dict[str, dict[str, int]] = {}
    gone = set(change.deleted())
    for path, lines in sorted(change.removed.items()):
        if not is_test_path(path) or path in gone:  # a deleted file is reported (or planned) as such
            continue
        removed = sum(1 for _, text in lines if ASSERTION.match(text))
        added = sum(1 for _, text in change.added.get(path, []) if ASSERTION.match(text))
        if removed > added:
            removed_asserts[path] = {"removed": removed, "added": added}
    problems = [f"test file deleted: {p}" for p in deleted]
    problems += [f"skip/xfail marker added: {m}" for m in markers]
    problems += [
        f"assertions removed: {p} (-{n['removed']} +{n['added']} assert lines)" for p, n in removed_asserts.items()
    ]
    return GateResult(
        gate=GateId.TESTS_WEAKENED,
        passed=not problems,
        evidence="\n".join(problems) or "no test deleted, skipped or stripped of assertions",
        details={"deleted": deleted, "markers": markers, "removed_asserts": removed_asserts},
    )


def check_vcs_tampering(
    worktree: Path | str,
    baseline: SessionBaseline | None = None,
    *,
    expected_head: str | None = None,
) -> GateResult:
    """The agent must not commit, move HEAD, switch branch or rewrite history in its worktree."""
    if baseline is None and expected_head is None:
        raise ValueError("check_vcs_tampering needs a SessionBaseline or an expected_head")
    if baseline is not None:
        reason = detect_agent_vcs_tampering(
            worktree, baseline.head, baseline.branch, head_reflog_entries=baseline.head_reflog_entries
        )
        head = baseline.head
    else:
        assert expected_head is not None
        reason = detect_agent_vcs_tampering(worktree, expected_head)
        head = expected_head
    return GateResult(
        gate=GateId.VCS_TAMPERING,
        passed=reason is None,
        evidence=reason or f"HEAD and branch unchanged since the session started ({head[:12]})",
        details={"reason": reason, "expected_head": head},
    )


__all__ = [
    "ASSERTION",
    "SKIP_MARKER",
    "check_scope",
    "check_tests_weakened",
    "check_vcs_tampering",
    "in_scope",
]
