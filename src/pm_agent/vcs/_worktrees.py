"""Branches and worktrees: create a branch, add, list and remove worktrees; protected branches stay read only."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Self

from pm_agent.errors import VcsError
from pm_agent.vcs import _batch
from pm_agent.vcs._core import GitCore
from pm_agent.vcs.models import WorktreeInfo


class GitWorktrees(GitCore):
    """Creating branches and worktrees (idempotent), listing and removing worktrees."""

    def create_branch(self, name: str, start: str = "HEAD") -> str:
        """Create branch `name` at `start`; idempotent when it already points there. Returns its sha."""
        self.check_writable(name, "create")
        sha = self.rev_parse(start)
        with self.metadata_lock():
            if self.branch_exists(name):
                existing = self.rev_parse(f"refs/heads/{name}")
                if existing != sha:
                    raise VcsError(f"branch {name!r} already exists at {existing[:12]}, not at {sha[:12]}")
                return sha
            self.run("branch", "--no-track", name, sha)
        return sha

    def delete_branch(self, name: str) -> None:
        """Delete branch `name` whatever it holds (`branch -D`'s effect; it refuses a branch checked out).

        When no worktree has it checked out, `update-ref -d` (or its effect written in process, `_drop_branch`):
        it reads no worktree metadata, so it need not wait for the lock that `worktree add` and `remove` hold
        (tens of ms on a loaded machine)."""
        self.check_writable(name, "delete")
        if self.branch_holder(name) is None:
            if self._drop_branch(name):
                return
            proc = self.try_run("update-ref", "-d", f"refs/heads/{name}")
            if proc.returncode == 0:
                return
        with self.metadata_lock():
            self.run("branch", "-D", name)

    def worktree_add(self, path: Path | str, branch: str, start: str | None = None) -> Self:
        """Check `branch` out in a new worktree at `path`, creating it from `start` if it does not exist.

        Idempotent: a worktree already at `path` on `branch` is returned as is.
        """
        return self.ensure_worktree(path, branch, start)[0]

    def ensure_worktree(self, path: Path | str, branch: str, start: str | None = None) -> tuple[Self, bool]:
        """`worktree_add`, and whether `branch` was created just now from `start` (so it holds nothing else)."""
        self.check_writable(branch, "check out")
        target = Path(path).resolve()
        with self.metadata_lock():
            # A folder that is not there is no worktree yet: `worktree add` without listing them first, unless
            # git refuses because it still has one registered there (its folder deleted behind its back).
            if target.exists() and (known := self._registered(target, branch)) is not None:
                return known, False
            try:
                if self.branch_exists(branch):
                    self.run("worktree", "add", "--quiet", str(target), branch)
                    return self._at(target), False
                start_sha = self.rev_parse(start or "HEAD")
                self.run("worktree", "add", "--quiet", "--no-track", "-b", branch, str(target), start_sha)
            except VcsError:
                known = None if target.exists() else self._registered(target, branch)
                if known is None:
                    raise
                return known, False
        return self._at(target), True

    def _registered(self, target: Path, branch: str) -> Self | None:
        """The worktree git has at `target` if it is on `branch`; VcsError if on another; None if none."""
        for info in self.worktree_list():
            if Path(info.path).resolve() == target:
                if info.branch != branch:
                    raise VcsError(f"{target} is already a worktree on {info.branch or 'a detached HEAD'}")
                return self._at(target)
        return None

    def worktree_add_detached(self, path: Path | str, start: str) -> Self:
        """A worktree at `path` with a detached HEAD at `start`."""
        target = Path(path).resolve()
        sha = self.rev_parse(start)
        with self.metadata_lock():
            self.run("worktree", "add", "--quiet", "--detach", str(target), sha)
        return self._at(target)

    def worktree_remove(self, path: Path | str, force: bool = False) -> None:
        """Remove the worktree at `path` (its branch stays); `force` discards uncommitted changes in it."""
        args = ["worktree", "remove"] + (["--force"] if force else []) + [str(Path(path).resolve())]
        _batch.close_batch(Path(path).resolve())  # its batch process must not outlive the folder it runs in
        with self.metadata_lock():
            self.run(*args)  # removes the worktree's metadata too: no `worktree prune` needed after it

    def worktree_move(self, path: Path | str, target: Path | str) -> None:
        """Move the linked worktree at `path` to `target` (which must not exist), as `git worktree move` does.

        In process when the worktree is a plain one (absolute links both ways, not locked, no submodules): git's
        move is a rename of the folder and a rewrite of the worktree's `gitdir` file, and a git process for it
        cost ~5 ms twice a task in the pool. Anything else is left to git. Called under `metadata_lock`."""
        source, dest = Path(path).resolve(), Path(target).resolve()
        admin = _plain_admin(source)
        if admin is None or os.path.lexists(dest):
            self.run("worktree", "move", str(source), str(dest))
            return
        try:
            source.rename(dest)
        except OSError as exc:
            raise VcsError(f"cannot move the worktree {source} to {dest}: {exc}") from exc
        # Git writes the same line: the new folder's `.git`, by absolute path (a temp file renamed: never half one).
        temp = admin / "gitdir.pm-agent.tmp"
        try:
            temp.write_text(f"{dest / '.git'}\n", encoding="utf-8")
            temp.replace(admin / "gitdir")
        except OSError as exc:
            dest.rename(source)  # back where git still finds it
            raise VcsError(f"cannot move the worktree {source} to {dest}: {exc}") from exc

    def worktree_prune(self) -> None:
        """Forget worktrees whose folders are gone (best effort: a failure leaves only stale metadata)."""
        with self.metadata_lock():
            self.try_run("worktree", "prune")

    def branch_holder(self, branch: str) -> WorktreeInfo | None:
        """The worktree (not bare) that has `branch` checked out, None when none has: `worktree_list`'s answer.

        `worktree list` reads each worktree's HEAD file; so does this, without a git process, when every
        HEAD is a plain branch ref or sha naming another branch. Anything else asks `worktree list`.

        The files are read without the metadata lock: a worktree that `worktree add` or `remove` is writing
        at that moment has a HEAD that is missing, empty, or the null sha it starts with, all of which name
        no branch or send the question to `worktree list` (which takes the lock), so nothing half-written
        is trusted. Integrations no longer wait here for another slot's `worktree add`."""
        common = self.common_dir()
        try:
            heads = [common / "HEAD", *(p / "HEAD" for p in (common / "worktrees").iterdir())]
        except FileNotFoundError:
            heads = [common / "HEAD"]
        except OSError:
            heads = []
        if heads and all(_other_head(head, branch) for head in heads):
            return None
        return next((w for w in self.worktree_list() if w.branch == branch and not w.bare), None)

    def worktree_list(self) -> list[WorktreeInfo]:
        """Every worktree of the repository, the main one first."""
        with self.metadata_lock():
            out = self.run("worktree", "list", "--porcelain")
        infos: list[WorktreeInfo] = []
        for block in out.strip().split("\n\n"):
            fields: dict[str, str] = {}
            for line in block.splitlines():
                key, _, value = line.partition(" ")
                fields[key] = value
            if "worktree" not in fields:
                continue
            branch = fields.get("branch")
            infos.append(
                WorktreeInfo(
                    path=fields["worktree"],
                    head=fields.get("HEAD"),
                    branch=branch.removeprefix("refs/heads/") if branch else None,
                    detached="detached" in fields,
                    bare="bare" in fields,
                    locked="locked" in fields,
                    prunable="prunable" in fields,
                )
            )
        return infos


def _other_head(head_file: Path, branch: str) -> bool:
    """Whether the HEAD file surely names something other than `branch`: another branch or a detached sha."""
    try:
        text = head_file.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return False
    if text.startswith("ref: refs/heads/"):
        name = text.removeprefix("ref: refs/heads/")
        return name not in (branch, ".invalid")  # `.invalid`: a reftable repository's placeholder
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def _plain_admin(worktree: Path) -> Path | None:
    """The git directory of the linked worktree at `worktree` when moving it needs nothing but a rename and a new
    `gitdir` line: its `.git` file and that directory's `gitdir` both absolute and naming each other, not locked,
    no submodules checked out (git refuses to move those); None otherwise."""
    try:
        text = (worktree / ".git").read_text(encoding="utf-8")
        if not text.startswith("gitdir: "):
            return None
        admin = Path(text.removeprefix("gitdir: ").strip())
        back = (admin / "gitdir").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not admin.is_absolute() or Path(back) != worktree / ".git":  # git writes both by absolute real path
        return None
    if (admin / "locked").exists() or (admin / "modules").exists() or (worktree / ".gitmodules").exists():
        return None
    return admin
