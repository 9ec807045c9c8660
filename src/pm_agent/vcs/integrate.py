"""Integrate a task branch into the plan's working branch, one task at a time, never by force.

Order of attempts: nothing to do (already contained) → fast-forward → cherry-pick the task's commits
(a merge commit when the task branch itself holds merges). The work happens in a temporary detached
worktree, so a conflict is aborted there and the working branch is left exactly as it was; the
conflicting paths come back as evidence. Only a finished result moves the working branch: by
`git merge --ff-only` in the worktree that has it checked out, or by a compare-and-swap `update-ref`.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from pm_agent.errors import VcsError
from pm_agent.vcs.git import NO_HOOKS_ARGS, Git, GitCommandError

IntegrationStatus = Literal["up-to-date", "fast-forward", "cherry-picked", "merged", "conflict"]


class IntegrationResult(BaseModel):
    """What `integrate` did; on `conflict` the working branch is unchanged and `conflicts` lists paths."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    status: IntegrationStatus
    task_branch: str
    into_branch: str
    before: str  # working branch sha before
    after: str  # working branch sha after (== before on conflict)
    commits: list[str] = Field(default_factory=list)  # task commits integrated (shas on the task branch)
    conflicts: list[str] = Field(default_factory=list)
    message: str = ""

    @property
    def ok(self) -> bool:
        """True unless the integration stopped on a conflict."""
        return self.status != "conflict"


def _unmerged(wt: Git) -> list[str]:
    out = wt.run("diff", "--name-only", "-z", "--diff-filter=U")
    return sorted({p for p in out.split("\0") if p})


def _cherry_pick(wt: Git, commits: list[str]) -> tuple[list[str], str]:
    """Cherry-pick `commits` in order; return (conflicting paths, the commit that conflicted) or ([], "")."""
    ident = wt.identity_args()
    for sha in commits:
        proc = wt.try_run(*NO_HOOKS_ARGS, *ident, "cherry-pick", "--allow-empty", sha)
        if proc.returncode == 0:
            continue
        conflicts = _unmerged(wt)
        if conflicts:
            wt.try_run("cherry-pick", "--abort")
            return conflicts, sha
        if wt.try_run("diff", "--cached", "--quiet").returncode == 0:
            wt.run(*NO_HOOKS_ARGS, *ident, "cherry-pick", "--skip")  # already applied: nothing to add
            continue
        wt.try_run("cherry-pick", "--abort")
        raise GitCommandError(["cherry-pick", sha], proc.returncode, proc.stderr or proc.stdout, cwd=wt.path)
    return [], ""


def _merge(wt: Git, task_sha: str, message: str) -> list[str]:
    """Merge `task_sha` with a merge commit; return conflicting paths (merge aborted) or []."""
    proc = wt.try_run(*NO_HOOKS_ARGS, *wt.identity_args(), "merge", "--no-ff", "--no-edit", "-m", message, task_sha)
    if proc.returncode == 0:
        return []
    conflicts = _unmerged(wt)
    wt.try_run("merge", "--abort")
    if conflicts:
        return conflicts
    raise GitCommandError(["merge", task_sha], proc.returncode, proc.stderr or proc.stdout, cwd=wt.path)


def _sides(git: Git, before: str, task_sha: str) -> tuple[list[str], bool, bool]:
    """In one `rev-list`: the task's commits not in `before` (oldest first), whether `before` has commits the
    task lacks (no fast-forward), and whether the task's own commits include a merge."""
    out = git.run("rev-list", "--left-right", "--parents", "--reverse", "--topo-order", f"{before}...{task_sha}", "--")
    commits: list[str] = []
    behind = merges = False
    for line in out.splitlines():
        side, shas = line[:1], line[1:].split()
        if side == "<":
            behind = True
        elif side == ">" and shas:
            commits.append(shas[0])
            merges = merges or len(shas) > 2
    return commits, behind, merges


def _pick_in_memory(git: Git, onto: str, commit: str) -> str | None:
    """`commit` (one parent, reachable from `onto`) cherry-picked onto `onto`, built without a worktree.

    A three-way merge of `onto` and `commit` whose base is `commit`'s parent is exactly the cherry-pick;
    `git merge-tree --write-tree` (git 2.38+) makes its tree, `commit-tree` the commit, with the original
    author and message. None when git cannot, on a conflict, or when the change is already contained:
    the worktree path then decides and names the conflicting paths. A checkout of a large repository
    costs seconds, and integration runs under the run's one integration lock."""
    proc = git.try_run("merge-tree", "--write-tree", "--no-messages", onto, commit)
    if proc.returncode != 0:
        return None
    tree = proc.stdout.split("\n", 1)[0].strip()
    if tree == git.rev_parse_tree(onto):
        return None
    header, _, message = _commit_text(git, commit).partition("\n\n")
    author = next((line[len("author ") :] for line in header.splitlines() if line.startswith("author ")), "")
    name, _, rest = author.partition(" <")
    email, _, date = rest.partition("> ")
    if not (name and email and date):
        return None
    return git.commit_tree(
        tree, onto, message, author_env={"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_AUTHOR_DATE": date}
    )


def _commit_text(git: Git, commit: str) -> str:
    """`git cat-file commit <commit>`'s output, read by the batch process when it can (one git process less)."""
    try:
        found = git.object_contents(commit)
    except OSError:
        found = None
    if found is None or found[0] != "commit":
        return git.run("cat-file", "commit", commit)
    # As git.run decodes what git prints.
    return found[1].decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")


def _advance(git: Git, into_branch: str, before: str, new: str, reason: str) -> None:
    """Move `into_branch` from `before` to its descendant `new` without force."""
    holder = git.branch_holder(into_branch)
    if holder is None:
        git.move_branch(into_branch, new, before, reason, hooks=True)
        return
    wt = Git(holder.path, timeout_s=git.timeout_s, protected_branches=git.protected_branches)
    if wt.head_sha() != before:
        raise VcsError(f"{into_branch!r} moved while integrating (now {wt.head_sha()[:12]})")
    wt.run(*NO_HOOKS_ARGS, "merge", "--ff-only", "--quiet", new)


def _told_sides(
    one_commit: tuple[str, str] | None, ancestor: Callable[[str, str], bool] | None, before: str, task_sha: str
) -> tuple[list[str], bool, bool] | None:
    """What `_sides` would answer, told by the caller (`integrate`'s `one_commit` and `ancestor`), or None."""
    if one_commit is None or ancestor is None or one_commit[0] != task_sha:
        return None
    parent = one_commit[1]
    if (parent != before and not ancestor(parent, before)) or ancestor(task_sha, before) or task_sha == before:
        return None
    # The one commit on the right; on the left whatever `before` has past the parent.
    return [task_sha], parent != before, False


def integrate(
    git: Git,
    task_branch: str,
    into_branch: str,
    *,
    merge_commit: bool = False,
    one_commit: tuple[str, str] | None = None,
    ancestor: Callable[[str, str], bool] | None = None,
) -> IntegrationResult:
    """Bring `task_branch` into `into_branch`: fast-forward, else cherry-pick (or merge), never force.

    `merge_commit`: always record a `--no-ff` merge of the branch (staged integration of a held branch).
    `one_commit`: (commit, its only parent) when the caller made the task branch's one commit itself, and
    `ancestor(a, b)`: True when commit `a` is surely an ancestor of commit `b` (what pm-agent saw of the
    working branch); with both, a task branch at that commit on an ancestor of the working branch needs no
    `rev-list` to tell its sides.
    """
    git.check_writable(into_branch, "integrate into")
    before = git.rev_parse(f"refs/heads/{into_branch}")
    task_sha = git.rev_parse(task_branch)
    commits, behind, merges = _told_sides(one_commit, ancestor, before, task_sha) or _sides(git, before, task_sha)
    base = {"task_branch": task_branch, "into_branch": into_branch, "before": before}
    if not commits:
        return IntegrationResult(status="up-to-date", after=before, message="already contained", **base)
    if not behind and not merge_commit:
        _advance(git, into_branch, before, task_sha, f"pm-agent: fast-forward {task_branch}")
        return IntegrationResult(status="fast-forward", after=task_sha, commits=commits, **base)

    has_merges = merge_commit or merges
    if not has_merges and len(commits) == 1:  # the usual task: one commit, picked without a worktree
        picked = _pick_in_memory(git, before, commits[0])
        if picked is not None:
            _advance(git, into_branch, before, picked, f"pm-agent: integrate {task_branch}")
            return IntegrationResult(status="cherry-picked", after=picked, commits=commits, **base)
    tmp = Path(tempfile.mkdtemp(prefix="pm-agent-integrate-"))
    wt_path = tmp / "wt"
    try:
        wt = git.worktree_add_detached(wt_path, before)
        if has_merges:
            conflicts, at = _merge(wt, task_sha, f"Merge {task_branch} into {into_branch}"), task_sha
        else:
            conflicts, at = _cherry_pick(wt, commits)
        if conflicts:
            return IntegrationResult(
                status="conflict",
                after=before,
                commits=commits,
                conflicts=conflicts,
                message=f"conflict applying {at[:12]}; {into_branch} left unchanged",
                **base,
            )
        new = wt.head_sha()
    finally:
        with git.metadata_lock():
            if wt_path.exists():
                git.try_run("worktree", "remove", "--force", str(wt_path))
            git.worktree_prune()
        shutil.rmtree(tmp, ignore_errors=True)
    if new == before:  # every commit was already applied (e.g. integrated before): nothing to move
        return IntegrationResult(status="up-to-date", after=before, message="changes already contained", **base)
    _advance(git, into_branch, before, new, f"pm-agent: integrate {task_branch}")
    status: IntegrationStatus = "merged" if has_merges else "cherry-picked"
    return IntegrationResult(status=status, after=new, commits=commits, **base)


__all__ = ["IntegrationResult", "IntegrationStatus", "integrate"]
