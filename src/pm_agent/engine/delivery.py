"""Seed 001 phase 4: pm-agent (never the agent) commits a task, integrates it, tags it.

What is committed is what the gates checked: the tree recorded before the gate commands ran, plus
pm-agent's review artifact, on the commit HEAD was on then (`vcs.snapshot`). If the worktree no longer
matches that tree (a file written during the gates or by the reviewer session), nothing is committed
and the delivery is refused with the `checked-tree` integrity failure (the caller sends it to the
fixer). If the task branch itself moved since the gates (a commit nobody checked), pm-agent cannot
tell whose it is: `IntegrityError` stops the task with nothing committed, for a human to look at.

Idempotent at every step, keyed on the `Refs: task-<id>` trailer (DESIGN.md crash safety): a commit
already on the task branch is not made again, one already on the working branch is not integrated
again, and a tag already in place is left alone.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from pm_agent.engine.commit_message import commit_message
from pm_agent.engine.faults import fault_point
from pm_agent.errors import VcsError
from pm_agent.gates.common import is_ignored_path
from pm_agent.plan.models import Task, Tier
from pm_agent.vcs import (
    CheckedTree,
    FileChange,
    Git,
    IntegrationResult,
    KeptSnapshot,
    checkpoint_tag,
    commit_checked,
    drift,
    has_tree,
    integrate,
)

CHECKED_TREE = "checked-tree"  # the integrity check's name in gate results, events and escalations
_STATUS_WORDS = {"A": "new", "M": "modified", "D": "deleted", "T": "type changed"}


def is_high_blast_radius(task: Task) -> bool:
    """CRITICAL tasks that break contracts or change schema keep their feature branch (staged integration)."""
    return task.tier is Tier.CRITICAL and (task.io_contract.breaking_change or task.security_flags.touches_schema)


class IntegrityError(VcsError):
    """The task branch moved after the gates ran: pm-agent commits nothing on top of an unchecked commit."""


@dataclass(frozen=True)
class Refusal:
    """Why pm-agent did not commit: the worktree is not what the gates checked."""

    reason: str
    paths: tuple[str, ...] = ()

    def evidence(self) -> str:
        """The reason and one line per path, for the fixer and the escalation."""
        return "\n".join([f"[{CHECKED_TREE}] {self.reason}", *(f"  {p}" for p in self.paths)])


def describe_drift(changes: Sequence[FileChange], ignore: Collection[str] = ()) -> tuple[str, ...]:
    """`path (new|modified|deleted)` for each change that counts: caches and pm-agent's own files do not."""
    return tuple(
        f"{c.path} ({_STATUS_WORDS.get(c.status, c.status)})"
        for c in changes
        if not is_ignored_path(c.path) and c.path not in ignore
    )


def integrity_refusal(worktree: Git, checked: CheckedTree | None, ignore: Collection[str] = ()) -> Refusal | None:
    """None when the worktree is exactly the checked tree on the checked HEAD, else what differs.

    Raises `IntegrityError` when HEAD is no longer the commit the gates ran on."""
    refusal = _refusal_before_drift(worktree, checked)
    if refusal is not None or checked is None:
        return refusal
    return _drift_refusal(worktree, checked, worktree.worktree_tree(), ignore)


def _refusal_before_drift(worktree: Git, checked: CheckedTree | None) -> Refusal | None:
    """`integrity_refusal`'s checks that need no snapshot of the worktree: a checked tree, still there, same HEAD."""
    if checked is None:
        return Refusal("no gate run recorded the tree it checked: nothing is committed before the gates run")
    if not has_tree(worktree, checked.tree):
        return Refusal(f"the checked tree {checked.tree[:12]} is gone from the repository: the gates run again")
    head = worktree.head_sha()
    if head != checked.head:
        raise IntegrityError(
            f"{CHECKED_TREE}: HEAD of {worktree.path} moved after the gates ran, from {checked.head[:12]} to"
            f" {head[:12]}: a commit nobody checked; nothing is committed on top of it (reset the task branch"
            f" to {checked.head[:12]} to let pm-agent deliver)"
        )
    return None


def _drift_refusal(worktree: Git, checked: CheckedTree, current: str, ignore: Collection[str]) -> Refusal | None:
    """The refusal when the worktree's tree `current` differs from the checked tree in a path that counts."""
    paths = describe_drift(drift(worktree, checked, current), ignore)
    if paths:
        return Refusal("the worktree changed after the gates checked it; these changes were never checked:", paths)
    return None


@dataclass(frozen=True)
class Delivery:
    """What delivering a task did."""

    integration: IntegrationResult | None
    commit_sha: str | None  # the task's commit as it stands on the working branch
    task_commit: str | None  # the commit on the task branch
    tag: str | None = None
    already_done: bool = False
    refused: Refusal | None = None  # the worktree was not what the gates checked: nothing committed

    @property
    def conflict(self) -> bool:
        """The working branch had moved in a way the task's change conflicts with."""
        return self.integration is not None and not self.integration.ok


def deliver(
    repo: Git,
    worktree: Git,
    *,
    task: Task,
    plan_id: str,
    task_branch: str,
    working_branch: str,
    artifact_path: str,
    artifact_text: str,
    tag_checkpoint: bool,
    checked: CheckedTree | None,
    since: str | None = None,
) -> Delivery:
    """Commit the checked tree with the review artifact, integrate into the working branch, tag.

    Refused (nothing committed) when the worktree differs from `checked`, the tree the gates passed.
    `since`: the run's baseline (see `commit_task`)."""
    made = commit_task(
        repo,
        worktree,
        task=task,
        working_branch=working_branch,
        artifact_path=artifact_path,
        artifact_text=artifact_text,
        checked=checked,
        since=since,
    )
    if isinstance(made, Delivery):
        return made
    return land(
        repo,
        made,
        task=task,
        plan_id=plan_id,
        task_branch=task_branch,
        working_branch=working_branch,
        tag_checkpoint=tag_checkpoint,
    )


@dataclass(frozen=True)
class TaskCommit:
    """The task's commit on its own branch, or already on the working branch (`landed`)."""

    sha: str
    landed: bool = False
    parent: str | None = None  # set when made just now: its only parent, the commit the gates ran on
    message: str | None = None  # set when made just now: its message


def commit_task(
    repo: Git,
    worktree: Git,
    *,
    task: Task,
    working_branch: str,
    artifact_path: str,
    artifact_text: str,
    checked: CheckedTree | None,
    kept: KeptSnapshot | None = None,
    since: str | None = None,
    search: bool = True,
) -> TaskCommit | Delivery:
    """Delivery's first half: the task's commit on its own branch (made now unless it exists), or the refusal.

    `kept`: the gate run's kept snapshot (`vcs.kept_snapshot`), which can tell in one git process that the
    worktree is still the checked tree; it is written to (the caller closes it after). `since`: the run's
    baseline; a `Refs: task-<id>` commit it already holds is an earlier plan's task of the same id, not this one.
    `search` False: the caller knows no commit of the task can exist yet (its first delivery): none is looked for.

    It reads the working branch and writes only the task's branch and worktree, so slots run it side by
    side; `land`, which moves the working branch, runs under the run's integration lock."""
    # One look at both branches first: on a first delivery neither has the commit (one git log, not two).
    landed = task_commit = None
    if search and worktree.find_commit_on_any(task.ref, [working_branch, "HEAD"], since=since) is not None:
        landed = repo.find_commit_by_trailer(task.ref, working_branch, since=since)
        if landed is not None:
            return TaskCommit(landed, landed=True)
        task_commit = worktree.find_commit_by_trailer(task.ref, "HEAD", since=since)
    if task_commit is None:
        refusal = _refusal_before_drift(worktree, checked)
        if refusal is not None or checked is None:
            return Delivery(integration=None, commit_sha=None, task_commit=None, refused=refusal)
        message = commit_message(task, artifact_path)
        files = {artifact_path: artifact_text}
        if kept is not None and kept.tree == checked.tree and worktree.still_matches(kept):
            # The gates' own snapshot index, unchanged and still the worktree: the commit's tree is built on it.
            task_commit = commit_checked(
                worktree, checked, message=message, files=files, index_env=kept.env, sync_index=False
            )
        else:
            with worktree.worktree_snapshot() as (current, index_env):
                refusal = _drift_refusal(worktree, checked, current, {artifact_path})
                if refusal is not None:
                    return Delivery(integration=None, commit_sha=None, task_commit=None, refused=refusal)
                # When nothing at all changed since the gates, the snapshot's index holds the checked tree: the
                # commit's tree is built on it (no second index); an uncounted change (a cache, the agent's copy
                # of the artifact) is in that index, so a fresh one is read from the checked tree instead.
                same = index_env if current == checked.tree else None
                task_commit = commit_checked(
                    worktree, checked, message=message, files=files, index_env=same, sync_index=False
                )
        fault_point("after-task-commit")
        return TaskCommit(task_commit, parent=checked.head, message=message)
    return TaskCommit(task_commit)


def land(
    repo: Git,
    made: TaskCommit,
    *,
    task: Task,
    plan_id: str,
    task_branch: str,
    working_branch: str,
    tag_checkpoint: bool,
    ancestor: Callable[[str, str], bool] | None = None,
) -> Delivery:
    """Delivery's second half, under the integration lock: integrate the task's commit, tag.

    `ancestor`: what pm-agent knows of the working branch's history (`vcs.integrate.integrate`)."""
    if made.landed:
        tag = _tag(repo, plan_id, task, made.sha) if tag_checkpoint else None
        return Delivery(integration=None, commit_sha=made.sha, task_commit=made.sha, tag=tag, already_done=True)
    task_commit = made.sha
    # High-blast-radius CRITICAL tasks keep their branch and land as one merge commit (staged integration).
    one = (made.sha, made.parent) if made.parent is not None else None
    integration = integrate(
        repo, task_branch, working_branch, merge_commit=is_high_blast_radius(task), one_commit=one, ancestor=ancestor
    )
    if not integration.ok:
        return Delivery(integration=integration, commit_sha=None, task_commit=task_commit)
    fault_point("after-integrate")
    fast = integration.status == "fast-forward" and integration.after == task_commit
    if fast or (integration.status == "cherry-picked" and integration.commits == [task_commit]):
        landed = integration.after  # the task's one commit is the new tip: no need to search for it
    else:
        landed = repo.find_commit_by_trailer(task.ref, working_branch, since=integration.before) or integration.after
    tag = _tag(repo, plan_id, task, landed) if tag_checkpoint else None
    return Delivery(integration=integration, commit_sha=landed, task_commit=task_commit, tag=tag)


def _tag(repo: Git, plan_id: str, task: Task, sha: str) -> str:
    name = checkpoint_tag(plan_id, task.id)
    repo.tag(name, sha, message=f"pm-agent checkpoint after {task.ref}: {task.title}")
    return name


def rebase_after_conflict(worktree: Git, task_commit: str | None, onto: str) -> list[str]:
    """Put the task's change back as uncommitted edits on top of `onto`, conflict markers and all.

    The fixer then resolves the conflict in the worktree; returns the conflicting paths.
    """
    if task_commit is not None and worktree.head_sha() == task_commit:
        # `commit_task` leaves the index as the agent left it (the worktree is usually removed next): the
        # commit's own index first, so the stash below holds the task's new files as staged, not untracked.
        worktree.run("read-tree", task_commit)
        worktree.run("reset", "--soft", "HEAD~1")
    worktree.run("stash", "push", "--include-untracked", "--quiet", "-m", "pm-agent: task change")
    worktree.run("reset", "--hard", "--quiet", onto)
    proc = worktree.try_run("stash", "pop", "--quiet")
    if proc.returncode == 0:
        return []
    out = worktree.run("diff", "--name-only", "--diff-filter=U")
    conflicts = [p for p in out.splitlines() if p]
    # Leave the markers as plain edits so diffs and gates read them; the stash entry stays as a backup.
    worktree.try_run("reset", "--quiet")
    return conflicts
