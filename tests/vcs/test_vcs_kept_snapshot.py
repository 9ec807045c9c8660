"""A kept snapshot tells in one `add -A --dry-run` that the worktree still has the checked tree, or defers to
a fresh snapshot: `drift` with it must name exactly what `drift` without it names."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pm_agent.vcs import CheckedTree, Git, KeptSnapshot, drift, kept_snapshot, snapshot

Write = Callable[[Path, str, str], Path]


@pytest.fixture
def wt(repo: Git, tmp_path: Path) -> Git:
    return repo.worktree_add(tmp_path / "wt", "feat/demo/task-1", "pm/demo/work")


@pytest.fixture
def kept(wt: Git, write: Write) -> Iterator[tuple[CheckedTree, KeptSnapshot]]:
    write(wt.path, "app.py", "the agent's edit\n")
    write(wt.path, "new.py", "NEW = 1\n")
    found = kept_snapshot(wt)
    yield found
    found[1].close()


def _both(wt: Git, checked: CheckedTree, kept: KeptSnapshot) -> list[tuple[str, str]]:
    with_kept = drift(wt, checked, kept=kept)
    assert with_kept == drift(wt, checked)
    return [(c.status, c.path) for c in with_kept]


def test_nothing_changed_is_told_in_one_dry_run(wt: Git, kept: tuple[CheckedTree, KeptSnapshot]) -> None:
    checked, index = kept
    assert checked == snapshot(wt)
    assert wt.still_matches(index)
    assert _both(wt, checked, index) == []
    (wt.path / "pkg" / "__pycache__").mkdir(parents=True)
    (wt.path / "pkg" / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"\0")
    assert wt.still_matches(index), "generated files are not changes"


def test_a_same_size_write_with_the_old_mtime_is_caught(wt: Git, kept: tuple[CheckedTree, KeptSnapshot]) -> None:
    checked, index = kept
    later = index.since_ns + 5_000_000_000  # as if the snapshot's index was written seconds after it read app.py
    os.utime(index.env["GIT_INDEX_FILE"], ns=(later, later))
    target = wt.path / "app.py"
    before = target.stat()
    target.write_text("the gate's edit!\n"[: before.st_size])
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))  # size and mtime as the snapshot saw them
    assert not wt.still_matches(index)
    assert _both(wt, checked, index) == [("M", "app.py")]


def test_new_and_deleted_files_are_caught(wt: Git, kept: tuple[CheckedTree, KeptSnapshot], write: Write) -> None:
    checked, index = kept
    write(wt.path, "late.py", "written by a test\n")
    (wt.path / "README.md").unlink()
    assert not wt.still_matches(index)
    assert _both(wt, checked, index) == [("D", "README.md"), ("A", "late.py")]


def test_a_changed_index_defers_to_a_fresh_snapshot(wt: Git, kept: tuple[CheckedTree, KeptSnapshot]) -> None:
    checked, index = kept
    wt.run("add", "new.py")  # the worktree's own index moved: the kept copy no longer stands for it
    assert not wt.still_matches(index)
    assert _both(wt, checked, index) == []
    index.close()
    assert not wt.still_matches(index)
    assert _both(wt, checked, index) == []


def test_the_kept_index_lives_in_the_worktrees_git_folder_and_goes_with_the_worktree(
    repo: Git, wt: Git, write: Write
) -> None:
    # One left open (pm-agent killed between a task's gates and its delivery) must not stay behind in /tmp.
    write(wt.path, "app.py", "the agent's edit\n")
    _, left_open = kept_snapshot(wt)
    index = Path(left_open.env["GIT_INDEX_FILE"])
    admin = wt.git_path("index").parent
    assert index.parent.parent == admin
    assert index.is_file()
    repo.worktree_remove(wt.path, force=True)
    assert not admin.exists()
    assert not index.exists()
    left_open.close()  # nothing left to remove: no error


def test_in_a_main_checkout_the_kept_index_is_a_temporary_file(repo: Git) -> None:
    _, kept = kept_snapshot(repo)
    try:
        assert not Path(kept.env["GIT_INDEX_FILE"]).is_relative_to(repo.path)
    finally:
        kept.close()
