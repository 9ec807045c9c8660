"""Diffs of a commit against another commit or against the working tree as it is, untracked files included.

The working tree is snapshotted into a tree object through a temporary index (`GIT_INDEX_FILE`), so
neither the agent's index nor HEAD changes.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import weakref
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from pm_agent.vcs._core import GENERATED_EXCLUDES, GitCore
from pm_agent.vcs.diff import DiffLines, parse_unified_diff
from pm_agent.vcs.models import ChangeSet, FileChange


class GitDiffs(GitCore):
    """Changed paths, stats, texts and added/removed lines between `base` and a commit or the working tree."""

    @contextmanager
    def _temp_index(self) -> Iterator[dict[str, str]]:
        """An env pointing GIT_INDEX_FILE at a copy of this worktree's index."""
        with tempfile.TemporaryDirectory(prefix="pm-agent-index-") as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self._copy_index(env)
            yield env

    def _copy_index(self, env: Mapping[str, str]) -> tuple[int, ...] | None:
        """Fill the index `env` names from this worktree's index (from HEAD when it has none); returns the
        real index's stat when it was copied and did not change meanwhile, else None."""
        index = Path(env["GIT_INDEX_FILE"])
        real = self.git_path("index")
        before = _stamp(real)
        if before is not None:
            # copy2 keeps the index's mtime: git re-reads the entries not older than it ("racily clean"),
            # and a fresh mtime would hide a same-size edit made in the tick of the last index write.
            shutil.copy2(real, index)
            return before if _stamp(real) == before else None
        if self.try_run("rev-parse", "--verify", "--quiet", "HEAD").returncode == 0:
            self.run("read-tree", "HEAD", env=env)
        return None

    def kept_snapshot(self) -> KeptSnapshot:
        """`worktree_tree`, its temporary index kept until `KeptSnapshot.close`: `still_matches` can then tell
        in one git process, not two, that the worktree still has that tree."""
        tmp = Path(tempfile.mkdtemp(prefix="pm-agent-index-", dir=self._scratch_home()))
        since_ns = time.time_ns() - 1_000_000_000  # a second's margin for the file system's coarser clock
        try:
            env = {"GIT_INDEX_FILE": str(tmp / "index")}
            stamp = self._copy_index(env)
            self.run("add", "-A", "--", ".", *GENERATED_EXCLUDES, env=env)
            tree = self.run("write-tree", env=env).strip()
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return KeptSnapshot(tree, env, stamp, since_ns, tmp)

    def _scratch_home(self) -> Path | None:
        """Where a kept index lives: in a linked worktree's own git folder, which `git worktree remove` deletes with
        it, so one left by a killed pm-agent goes with its worktree; elsewhere (a main checkout) the temporary
        directory, as any temporary file."""
        admin = self.git_path("index").parent
        return admin if admin.parent == self.common_dir() / "worktrees" else None

    def still_matches(self, kept: KeptSnapshot) -> bool:
        """True when the worktree surely still has `kept.tree`, False when it may not (ask `worktree_tree`).

        `worktree_tree` is `add -A` on a copy of the worktree's index, then `write-tree`. While that index
        has not changed, the kept index is such a copy with `add -A` already done, so `add -A` would now
        change it exactly where the worktree no longer has `kept.tree`: a dry run listing nothing says so."""
        if kept.stamp is None or kept.closed or _stamp(self.git_path("index")) != kept.stamp:
            return False
        # git trusts an entry whose file stat is unchanged, unless the file's mtime is not older than the index
        # file's ("racily clean": then it compares content). Dated back to just before the snapshot began, the
        # kept index makes git compare every file written since (during the snapshot too, where a same-size
        # write in the same second would leave the stat as recorded); older files kept their stat or changed.
        os.utime(kept.env["GIT_INDEX_FILE"], ns=(kept.since_ns, kept.since_ns))
        proc = self.try_run("add", "-A", "--dry-run", "--", ".", *GENERATED_EXCLUDES, env=kept.env)
        return proc.returncode == 0 and not proc.stdout.strip()

    def worktree_tree(self) -> str:
        """A tree object of the working tree as it is (tracked, untracked, deletions); changes nothing."""
        with self.worktree_snapshot() as (tree, _):
            return tree

    @contextmanager
    def worktree_snapshot(self) -> Iterator[tuple[str, dict[str, str]]]:
        """`worktree_tree`, and the env of the temporary index that holds exactly that tree, kept while open
        (so a tree built on it need not read the tree into an index again)."""
        with self._temp_index() as env:
            self.run("add", "-A", "--", ".", *GENERATED_EXCLUDES, env=env)
            yield self.run("write-tree", env=env).strip(), env

    def _target(self, head: str | None) -> str:
        return head if head is not None else self.worktree_tree()

    def _diff(self, *args: str) -> str:
        return self.run(
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--no-renames",
            "--no-relative",
            "--src-prefix=a/",
            "--dst-prefix=b/",
            *args,
        )

    def diff_name_status(self, base: str, head: str | None = None) -> list[FileChange]:
        """Changed paths and status letters between `base` and `head` (default: the working tree)."""
        out = self._diff("--name-status", "-z", base, self._target(head), "--")
        parts = [p for p in out.split("\0") if p]
        return [FileChange(status=parts[i][0], path=parts[i + 1]) for i in range(0, len(parts) - 1, 2)]

    def diff_names(self, base: str, head: str | None = None) -> list[str]:
        """Changed paths between `base` and `head` (default: the working tree, untracked files included)."""
        return [change.path for change in self.diff_name_status(base, head)]

    def diff_stat(self, base: str, head: str | None = None) -> str:
        """`git diff --stat` between `base` and `head` (default: the working tree)."""
        return self._diff("--stat", base, self._target(head), "--")

    def diff_text(self, base: str, paths: Sequence[str] | None = None, head: str | None = None) -> str:
        """The unified diff between `base` and `head` (default: the working tree), optionally for `paths`."""
        return self._diff(base, self._target(head), "--", *(paths or ()))

    def diff_lines(self, base: str, head: str | None = None) -> DiffLines:
        """Added and removed lines with line numbers (from a `-U0` diff)."""
        return parse_unified_diff(self._diff("-U0", base, self._target(head), "--"))

    def added_lines(self, base: str, head: str | None = None) -> dict[str, list[tuple[int, str]]]:
        """Per path, the lines the change adds, as (line number in the new file, text)."""
        return self.diff_lines(base, head).added

    def changes(self, base: str, head: str | None = None) -> ChangeSet:
        """Changed files plus added and removed lines, all from one snapshot of the target."""
        target = self._target(head)
        lines = self.diff_lines(base, target)
        return ChangeSet(
            base=base,
            target=target,
            files=self.diff_name_status(base, target),
            added=lines.added,
            removed=lines.removed,
        )

    def changes_and_text(self, base: str, head: str | None = None) -> tuple[ChangeSet, str]:
        """`changes` and `diff_text` of one snapshot in one git call: the added and removed lines are read from
        the full diff (context lines do not change which lines a diff adds or removes)."""
        target = self._target(head)
        # One process: `--raw -z` lists each path with its status letter (what `--name-status` says) before
        # the patch, which is byte for byte the plain diff's.
        files, text = _raw_and_patch(self._diff("--raw", "-z", "-p", base, target, "--"))
        lines = parse_unified_diff(text)
        return ChangeSet(base=base, target=target, files=files, added=lines.added, removed=lines.removed), text


def _raw_and_patch(out: str) -> tuple[list[FileChange], str]:
    """A `diff --raw -z -p` output as `diff_name_status`'s changes and the plain patch text.

    Each raw entry is `:<modes> <shas> <status>` NUL `<path>` NUL (renames are off: one path); a NUL ends
    the list when a patch follows."""
    files: list[FileChange] = []
    pos = 0
    while out.startswith(":", pos):
        meta_end = out.index("\0", pos)
        path_end = out.index("\0", meta_end + 1)
        status = out[pos:meta_end].rsplit(" ", 1)[-1][:1]
        files.append(FileChange(status=status, path=out[meta_end + 1 : path_end]))
        pos = path_end + 1
    if out.startswith("\0", pos):
        pos += 1
    return files, out[pos:]


def _stamp(path: Path) -> tuple[int, ...] | None:
    """What tells a file changed (git replaces its index through a rename: a new inode and ctime); None if missing."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class KeptSnapshot:
    """A snapshot of the worktree (`tree`) with its temporary index (`env`) kept; `close` removes it.

    One left open (a task that stopped between its gates and its delivery) is removed when it is collected
    or at exit, silently: keeping it was only an optimisation."""

    def __init__(
        self, tree: str, env: dict[str, str], stamp: tuple[int, ...] | None, since_ns: int, tmp: Path
    ) -> None:
        self.tree = tree
        self.env = env
        self.stamp = stamp  # the worktree's real index when copied (None: it cannot be told unchanged)
        self.since_ns = since_ns  # before the snapshot began
        self._remove = weakref.finalize(self, shutil.rmtree, tmp, ignore_errors=True)

    @property
    def closed(self) -> bool:
        """Whether the temporary index is gone."""
        return not self._remove.alive

    def close(self) -> None:
        """Remove the temporary index."""
        self._remove()
