"""The tester's tests against the tree it left: real git repositories, real snapshots of the worktree."""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.engine.tester_guard import TESTER_TESTS, check_tester_tests, restore_outside_tests
from pm_agent.plan.models import Task
from pm_agent.testing.repo import init_repo
from pm_agent.vcs import Git, snapshot

ADD = "def add(a, b):\n    return a + b\n"
DEV_TEST = "from add import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
EDGE = "from add import add\n\n\ndef test_negative():\n    assert add(-1, -2) == -3\n    assert add(-1, 1) == 0\n"
TASK = Task(id="1", title="Addition")


@pytest.fixture
def worktree(tmp_path: Path) -> tuple[Path, str]:
    """A repository with the developer's uncommitted change and the tester's test on top: (root, tester tree)."""
    root = init_repo(tmp_path / "repo", files={"README.md": "# calc\n"})
    (root / "add.py").write_text(ADD, encoding="utf-8")
    (root / "tests").mkdir()
    (root / "tests" / "test_add.py").write_text(DEV_TEST, encoding="utf-8")
    (root / "tests" / "test_add_edges.py").write_text(EDGE, encoding="utf-8")
    return root, snapshot(Git(root)).tree


def check(root: Path, tester: str) -> tuple[bool, str]:
    result = check_tester_tests(TASK, root, tester, snapshot(Git(root)).tree)
    assert result.gate == TESTER_TESTS
    return result.passed, result.evidence


def test_the_tree_the_tester_left_passes(worktree: tuple[Path, str]) -> None:
    root, tester = worktree
    assert check(root, tester) == (True, f"the tester's tests (tree {tester[:12]}) are all still there and unweakened")


def test_a_code_fix_and_a_test_added_pass(worktree: tuple[Path, str]) -> None:
    root, tester = worktree
    (root / "add.py").write_text("def add(a, b):\n    return int(a) + int(b)\n", encoding="utf-8")
    (root / "tests" / "test_add_edges.py").write_text(EDGE + "    assert add(0, 0) == 0\n", encoding="utf-8")
    assert check(root, tester)[0]


def test_deleting_the_testers_file_fails(worktree: tuple[Path, str]) -> None:
    root, tester = worktree
    (root / "tests" / "test_add_edges.py").unlink()
    passed, evidence = check(root, tester)
    assert not passed
    assert "test file deleted: tests/test_add_edges.py" in evidence
    assert evidence.startswith(f"the tester's edge-case tests (tree {tester[:12]}) were weakened")


def test_stripping_an_assertion_fails(worktree: tuple[Path, str]) -> None:
    root, tester = worktree
    (root / "tests" / "test_add_edges.py").write_text(EDGE.replace("    assert add(-1, 1) == 0\n", ""), "utf-8")
    passed, evidence = check(root, tester)
    assert not passed
    assert "assertions removed: tests/test_add_edges.py (-1 +0 assert lines)" in evidence


def test_a_skip_marker_fails(worktree: tuple[Path, str]) -> None:
    root, tester = worktree
    skipped = EDGE.replace("def test_negative", "import pytest\n\n\n@pytest.mark.skip\ndef test_negative")
    (root / "tests" / "test_add_edges.py").write_text(skipped, encoding="utf-8")
    passed, evidence = check(root, tester)
    assert not passed
    assert "skip/xfail marker added: tests/test_add_edges.py" in evidence


def test_the_developers_test_is_protected_from_then_on_too(worktree: tuple[Path, str]) -> None:
    root, tester = worktree
    (root / "tests" / "test_add.py").unlink()  # new against the base as well: only this check sees it go
    passed, evidence = check(root, tester)
    assert not passed
    assert "test file deleted: tests/test_add.py" in evidence


def test_the_testers_changes_outside_tests_are_put_back(tmp_path: Path) -> None:
    """Before its round: the developer's change. The tester edits the code, adds a module, deletes a file and adds a
    test; only the test stays."""
    root = init_repo(tmp_path / "repo", files={"README.md": "# calc\n", "notes.txt": "keep\n"})
    (root / "add.py").write_text(ADD, encoding="utf-8")
    (root / "tests").mkdir()
    (root / "tests" / "test_add.py").write_text(DEV_TEST, encoding="utf-8")
    before = snapshot(Git(root)).tree
    (root / "add.py").write_text("def add(a, b):\n    return 0\n", encoding="utf-8")
    (root / "helper.py").write_text("X = 1\n", encoding="utf-8")
    (root / "notes.txt").unlink()
    (root / "tests" / "test_add_edges.py").write_text(EDGE, encoding="utf-8")

    restored = restore_outside_tests(root, before)

    assert sorted(restored) == ["add.py", "helper.py", "notes.txt"]
    assert (root / "add.py").read_text(encoding="utf-8") == ADD
    assert not (root / "helper.py").exists()
    assert (root / "notes.txt").read_text(encoding="utf-8") == "keep\n"
    assert (root / "tests" / "test_add_edges.py").read_text(encoding="utf-8") == EDGE
    assert Git(root).changes(before).names() == ["tests/test_add_edges.py"]


def test_a_tester_that_only_adds_tests_has_nothing_put_back(worktree: tuple[Path, str]) -> None:
    root, tester = worktree
    (root / "tests" / "test_more.py").write_text("def test_x():\n    assert True\n", encoding="utf-8")
    assert restore_outside_tests(root, tester) == []
    assert (root / "tests" / "test_more.py").exists()
