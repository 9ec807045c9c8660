"""Helpers shared by the gates: the change set, path classification, command evidence."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from pm_agent.gates.ward import CommandResult
from pm_agent.vcs import ChangeSet, Git

# Paths no gate holds against the agent: pm-agent's own review artifacts and generated files.
IGNORED_PREFIXES: tuple[str, ...] = ("docs/reviews/",)
IGNORED_PARTS: frozenset[str] = frozenset(
    {
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".hypothesis",
        ".tox",
        ".nox",
        "node_modules",
    }
)
IGNORED_SUFFIXES: tuple[str, ...] = (".pyc", ".pyo", ".egg-info")

_TEST_NAME = re.compile(
    r"^(test_.*\.py|.*_test\.py|conftest\.py|.*\.(test|spec)\.[cm]?[jt]sx?|.*_test\.go"
    # JUnit's, Kotest's, Spock's and xUnit's naming (CartTest.java, CartIT.java, CartSpec.kt, CartTests.cs), RSpec.
    r"|[A-Z]\w*(Tests?|IT|Spec)\.(java|kt|kts|groovy|scala|cs)|.*_spec\.rb)$"
)
_TEST_DIRS = frozenset({"tests", "test", "__tests__", "spec", "specs"})
# Gradle's and Android's test source sets (src/androidTest, src/jvmTest, src/integrationTest), .NET test projects.
_TEST_SOURCE_SET = re.compile(r"^[a-z][A-Za-z]*Tests?$|^[A-Z][\w.]*\.(Unit|Integration)?Tests?$")


def changes_for(worktree: Path | str, base: str, changes: ChangeSet | None) -> ChangeSet:
    """`changes` if given, else the worktree's changes against `base` (untracked files included)."""
    return changes if changes is not None else Git(worktree).changes(base)


def is_ignored_path(path: str) -> bool:
    """pm-agent's review artifacts and generated files (caches, bytecode, egg-info)."""
    if path.startswith(IGNORED_PREFIXES):
        return True
    parts = PurePosixPath(path).parts
    return any(p in IGNORED_PARTS or p.endswith(IGNORED_SUFFIXES) for p in parts)


def is_test_path(path: str) -> bool:
    """Test files: test_*.py, *_test.py, conftest.py, *.test.ts, *.spec.js, *_test.go, CartTest.java, CartSpec.kt,
    files under tests/, spec/, a test source set (src/androidTest/) or a .NET test project (Shop.Tests/)."""
    pure = PurePosixPath(path)
    folders = pure.parts[:-1]
    return (
        bool(_TEST_NAME.match(pure.name))
        or any(p in _TEST_DIRS for p in folders)
        or any(_TEST_SOURCE_SET.match(p) for p in folders)
    )


def norm_path(worktree: Path | str, raw: str) -> str:
    """A path as the agent wrote it ("./src/a.py", an absolute path in the worktree) made repo-relative."""
    text = raw.strip().replace("\\", "/")
    root = Path(worktree).resolve().as_posix().rstrip("/") + "/"
    if text.startswith(root):
        text = text[len(root) :]
    while text.startswith("./"):
        text = text[2:]
    return text


def describe(result: CommandResult) -> str:
    """One line: command, verdict, exit code, counts and duration."""
    verdict = "PASSED" if result.ok else ("TIMED OUT" if result.timed_out else "FAILED")
    counts = ""
    if result.test_counts is not None:
        tc = result.test_counts
        items = [f"{n} {k}" for k, n in tc.model_dump().items() if n]
        counts = f" ({', '.join(items) or 'no tests ran'})"
    return f"`{result.cmd}` {verdict}: exit {result.exit_code}{counts} in {result.duration_ms / 1000:.1f}s"


def command_evidence(results: Sequence[CommandResult], tail_lines: int = 15) -> list[str]:
    """Evidence lines: one summary line per command, the output tail of each that failed."""
    lines: list[str] = []
    for result in results:
        lines.append(describe(result))
        if not result.ok and result.output_tail.strip():
            lines.extend(f"    {line}" for line in result.tail(tail_lines).splitlines())
    return lines


__all__ = [
    "IGNORED_PARTS",
    "IGNORED_PREFIXES",
    "IGNORED_SUFFIXES",
    "changes_for",
    "command_evidence",
    "describe",
    "is_ignored_path",
    "is_test_path",
    "norm_path",
]
