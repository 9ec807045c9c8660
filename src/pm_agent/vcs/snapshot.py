"""What the gates checked, kept as git objects, and a commit of exactly that.

Gates run in the task's worktree, and files can change there while they run (a background process the
agent left behind, a test that writes into the tree) or after they passed (the reviewer session). So
pm-agent snapshots the worktree into a tree object before any gate command runs (`snapshot`, through a
temporary index: neither the agent's index nor HEAD changes), and delivery commits that tree, plus
pm-agent's own files (the review artifact), with `commit-tree` on the recorded parent
(`commit_checked`), instead of staging whatever the worktree holds by then. `drift` names the paths
where the worktree no longer matches the checked tree.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pm_agent.errors import VcsError
from pm_agent.vcs import _objects
from pm_agent.vcs._diffs import KeptSnapshot
from pm_agent.vcs.git import Git
from pm_agent.vcs.models import FileChange

__all__ = [
    "CheckedTree",
    "KeptSnapshot",
    "commit_checked",
    "drift",
    "has_tree",
    "kept_snapshot",
    "snapshot",
    "tree_with_files",
]


@dataclass(frozen=True)
class CheckedTree:
    """The worktree as the gates saw it: its tree object and the commit HEAD was on (the parent)."""

    tree: str
    head: str

    def as_payload(self) -> dict[str, str]:
        """The JSON form stored with the gate run."""
        return {"tree": self.tree, "head": self.head}

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> CheckedTree | None:
        """Back from `as_payload`; None when the payload does not hold one."""
        tree, head = payload.get("tree"), payload.get("head")
        if isinstance(tree, str) and isinstance(head, str) and tree and head:
            return cls(tree=tree, head=head)
        return None


def snapshot(worktree: Git) -> CheckedTree:
    """The worktree now (tracked, untracked and deleted files; generated files excluded) and its HEAD."""
    head = worktree.head_sha()
    return CheckedTree(tree=worktree.worktree_tree(), head=head)


def kept_snapshot(worktree: Git) -> tuple[CheckedTree, KeptSnapshot]:
    """`snapshot`, with its temporary index kept (`Git.still_matches`); the caller closes it."""
    head = worktree.head_sha()
    kept = worktree.kept_snapshot()
    return CheckedTree(tree=kept.tree, head=head), kept


def has_tree(git: Git, tree: str) -> bool:
    """Whether `tree` names a tree object in the repository (a commit is not one)."""
    return git.object_type(tree) == "tree"


def drift(
    worktree: Git, checked: CheckedTree, current: str | None = None, *, kept: KeptSnapshot | None = None
) -> list[FileChange]:
    """Paths whose content in the worktree differs from the checked tree (A: new since, D: gone since).

    `current`: the worktree's tree taken just now by the caller (`Git.worktree_snapshot`), else one is taken;
    `kept`: the checked tree's kept snapshot, which can tell in one git process that nothing changed."""
    if current is None and kept is not None and kept.tree == checked.tree and worktree.still_matches(kept):
        return []
    current = worktree.worktree_tree() if current is None else current
    if current == checked.tree:
        return []
    return worktree.diff_name_status(checked.tree, current)


def tree_with_files(
    git: Git, tree: str, files: Mapping[str, str], *, index_env: Mapping[str, str] | None = None
) -> str:
    """`tree` with `files` (path → text) written into it, as a new tree object; nothing else changes.

    `index_env`: a temporary index that holds exactly `tree` (`Git.worktree_snapshot`'s when its tree is
    `tree`), written to instead of reading `tree` into a new one. A tree object depends only on the index's
    entries, and an index whose `write-tree` is `tree` has `tree`'s entries: the result is the same tree.
    Usually the objects are written in-process (`vcs/_objects.py`: no git process); git makes the others."""
    if git.writes_own_objects():
        made = _objects.tree_with_texts(git.object_contents, git.common_dir(), tree, files)
        if made is not None:
            return made
    if index_env is not None:  # no temporary folder: each one is an inode made and removed per task
        return _written_tree(git, files, dict(index_env))
    with tempfile.TemporaryDirectory(prefix="pm-agent-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        git.run("read-tree", tree, env=env)
        return _written_tree(git, files, env)


def _written_tree(git: Git, files: Mapping[str, str], env: dict[str, str]) -> str:
    """`files` added to the index `env` names, and that index written as a tree."""
    for path, text in files.items():
        # --no-filters: pm-agent's own text goes in as written; no repository filter driver runs.
        blob = git.run("hash-object", "-w", "--no-filters", "--stdin", stdin_text=text).strip()
        git.run("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
    return git.run("write-tree", env=env).strip()


def commit_checked(
    worktree: Git,
    checked: CheckedTree,
    *,
    message: str,
    files: Mapping[str, str],
    index_env: Mapping[str, str] | None = None,
    sync_index: bool = True,
) -> str:
    """Commit the checked tree plus `files` on the worktree's branch, whose tip must still be `checked.head`.

    The branch moves by compare-and-set (`update-ref <new> <old>`), so a commit made behind pm-agent's
    back in the meantime makes this fail instead of being dropped. Afterwards `files` are written to disk
    and, with `sync_index`, the worktree's index is the commit's, so the worktree shows no change (without
    it the index stays as it was: for a worktree about to be removed). Returns the sha.
    `index_env`: a temporary index holding exactly `checked.tree` (see `tree_with_files`).
    """
    branch = worktree.current_branch()
    if branch is None:
        raise VcsError(f"refusing to commit on a detached HEAD in {worktree.path}")
    worktree.check_writable(branch, "commit to")
    tree = tree_with_files(worktree, checked.tree, files, index_env=index_env)
    sha = worktree.commit_tree(tree, checked.head, message)
    worktree.move_branch(branch, sha, checked.head, "pm-agent: commit the checked tree")
    if sync_index:
        worktree.run("read-tree", sha)
    for path, text in files.items():
        target = worktree.path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return sha
