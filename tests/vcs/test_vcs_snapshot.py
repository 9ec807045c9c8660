"""The tree the gates checked, and a commit of exactly it (vcs.snapshot)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pm_agent.errors import VcsError
from pm_agent.vcs import CheckedTree, Git, commit_checked, drift, has_tree, snapshot, tree_with_files

Write = Callable[[Path, str, str], Path]
ARTIFACT = {"docs/reviews/task-1-review.md": "# review of task-1\n"}


@pytest.fixture
def wt(repo: Git, tmp_path: Path) -> Git:
    """A task worktree on feat/demo/task-1, started from the working branch."""
    return repo.worktree_add(tmp_path / "wt", "feat/demo/task-1", "pm/demo/work")


def files_at(git: Git, ref: str) -> dict[str, str]:
    names = git.run("ls-tree", "-r", "--name-only", ref).split("\n")
    return {name: git.show_file(ref, name) for name in names if name}


def test_commit_checked_commits_the_snapshot_not_what_was_written_after_it(wt: Git, write: Write) -> None:
    base = wt.head_sha()
    write(wt.path, "app.py", "def greet(name):\n    return f'hello {name}'\n")
    write(wt.path, "new.py", "NEW = 1\n")
    (wt.path / "README.md").unlink()
    checked = snapshot(wt)
    write(wt.path, "late.py", "written after the gates\n")
    write(wt.path, "app.py", "changed after the gates\n")

    sha = commit_checked(wt, checked, message="feat: x\n\nRefs: task-1\n", files=ARTIFACT)

    assert wt.rev_parse("feat/demo/task-1") == sha
    assert wt.run("rev-parse", f"{sha}^").strip() == base
    committed = files_at(wt, sha)
    assert committed == {
        "app.py": "def greet(name):\n    return f'hello {name}'\n",
        "new.py": "NEW = 1\n",
        "docs/reviews/task-1-review.md": "# review of task-1\n",
    }
    assert "Refs: task-1" in wt.run("log", "-1", "--format=%B", sha)
    # The index is the commit's and the artifact is on disk: only the late writes show as changes.
    status = {entry.path: entry.code for entry in wt.status_porcelain()}
    assert status == {"app.py": " M", "late.py": "??"}
    assert (wt.path / "docs/reviews/task-1-review.md").read_text() == "# review of task-1\n"


def test_drift_names_new_modified_and_deleted_paths_but_not_caches(wt: Git, write: Write) -> None:
    write(wt.path, "app.py", "v1\n")
    checked = snapshot(wt)
    assert drift(wt, checked) == []
    for cache in (
        "__pycache__/app.cpython-311.pyc",
        ".pytest_cache/v/cache/lastfailed",
        "node_modules/.cache/babel/x.json",
        ".coverage",
        "pkg/.hypothesis/examples/a",
    ):
        write(wt.path, cache, "generated\n")
    assert drift(wt, checked) == [], "files running tests leaves behind are not changes"

    write(wt.path, "app.py", "v2\n")
    write(wt.path, "extra.py", "x\n")
    (wt.path / "README.md").unlink()
    assert [(c.path, c.status) for c in drift(wt, checked)] == [
        ("README.md", "D"),
        ("app.py", "M"),
        ("extra.py", "A"),
    ]


def test_commit_checked_refuses_when_the_branch_moved_since_the_snapshot(wt: Git, write: Write) -> None:
    write(wt.path, "app.py", "checked\n")
    checked = snapshot(wt)
    wt.run("-c", "user.name=A", "-c", "user.email=a@x", "commit", "-qam", "an agent's own commit")
    moved = wt.head_sha()

    with pytest.raises(VcsError, match="update-ref"):
        commit_checked(wt, checked, message="feat: x\n\nRefs: task-1\n", files=ARTIFACT)
    assert wt.head_sha() == moved, "the branch is left where it was"


def test_commit_checked_refuses_detached_heads_and_protected_branches(repo: Git, tmp_path: Path) -> None:
    detached = repo.worktree_add_detached(tmp_path / "detached", "main")
    with pytest.raises(VcsError, match="detached HEAD"):
        commit_checked(detached, snapshot(detached), message="m\n", files={})
    with pytest.raises(VcsError, match="protected branch 'main'"):
        commit_checked(repo, snapshot(repo), message="m\n", files={})
    assert repo.log(5, "main")[0].subject == "initial"


def test_tree_with_files_adds_and_replaces_without_touching_the_worktree(wt: Git) -> None:
    tree = wt.run("rev-parse", "HEAD^{tree}").strip()
    new = tree_with_files(wt, tree, {"README.md": "# replaced\n", "docs/a.md": "a\n"})
    assert new != tree
    assert wt.run("show", f"{new}:README.md") == "# replaced\n"
    assert wt.run("show", f"{new}:docs/a.md") == "a\n"
    assert wt.run("show", f"{new}:app.py").startswith("def greet")
    assert (wt.path / "README.md").read_text() == "# demo\n"
    assert wt.is_clean()


def test_checked_tree_round_trips_and_rejects_payloads_without_one(wt: Git) -> None:
    checked = snapshot(wt)
    assert CheckedTree.from_payload({"attempt": 2, **checked.as_payload()}) == checked
    assert CheckedTree.from_payload({"tree": checked.tree}) is None
    assert CheckedTree.from_payload({"tree": 3, "head": checked.head}) is None
    assert has_tree(wt, checked.tree)
    assert not has_tree(wt, "0" * 40)
    assert not has_tree(wt, checked.head), "a commit is not a tree"


def test_a_same_size_edit_in_the_index_timestamp_tick_is_in_the_snapshot(wt: Git) -> None:
    """Racy git: a file rewritten with the same size within the timestamp tick of the index write looks
    unchanged by its stat data; git re-reads such entries only while the index file is not newer than them.
    The snapshot's temporary index must keep the real index's time, or the edit is left out of the checked tree."""
    wt.run("config", "core.trustctime", "false")  # ctime may differ or not within one tick: take it out
    app = wt.path / "app.py"
    hour_ago = time.time_ns() - 3600 * 10**9
    os.utime(app, ns=(hour_ago, hour_ago))  # older than the index write below: git does not smudge the entry
    wt.run("add", "app.py")  # the index entry records app.py's stat data
    before = app.stat()
    app.write_text(app.read_text(encoding="utf-8").replace("hi", "yo"), encoding="utf-8")  # same size
    os.utime(app, ns=(before.st_atime_ns, before.st_mtime_ns))  # the same tick as the index entry
    index = wt.git_path("index")
    os.utime(index, ns=(before.st_atime_ns, before.st_mtime_ns))  # ... and as the index write
    assert app.stat().st_size == before.st_size
    assert "yo {name}" in wt.run("diff")  # git itself sees the edit (the entry is racily clean)
    checked = snapshot(wt)
    assert "yo {name}" in wt.run("show", f"{checked.tree}:app.py")


def test_a_tree_built_on_the_snapshots_index_is_the_one_a_fresh_index_builds(wt: Git, write: Write) -> None:
    # Delivery builds the commit's tree on the index its last snapshot wrote, instead of reading the checked
    # tree into a new one: the tree (and so the commit) must be the same object either way.
    write(wt.path, "app.py", "changed\n")
    write(wt.path, "new/deep/file.py", "NEW = 1\n")
    write(wt.path, "docs/reviews/task-1-review.md", "the agent's own version\n")
    write(wt.path, "intent.py", "added with -N\n")
    wt.run("add", "-N", "intent.py")
    (wt.path / "README.md").unlink()
    checked = snapshot(wt)
    with wt.worktree_snapshot() as (tree, env):
        assert tree == checked.tree
        on_snapshot = tree_with_files(wt, checked.tree, ARTIFACT, index_env=env)
    fresh = tree_with_files(wt, checked.tree, ARTIFACT)
    assert on_snapshot == fresh
    assert files_at(wt, fresh)["docs/reviews/task-1-review.md"] == "# review of task-1\n"

    with wt.worktree_snapshot() as (tree, env):
        sha = commit_checked(wt, checked, message="feat: x\n\nRefs: task-1\n", files=ARTIFACT, index_env=env)
    assert wt.rev_parse_tree(sha) == fresh
    assert wt.status_porcelain() == []
