"""Pull requests: one per kept CRITICAL task branch into the working branch, as the task lands; one from the
working branch into the default branch at release. pm-agent never merges: there is no merge call here or anywhere.

A high-blast-radius CRITICAL task keeps its branch and lands on the working branch as one merge commit (staged
integration, engine/delivery.py), and GitHub refuses a pull request whose base already contains its head. So as
soon as such a task lands (the `task.staged` event, outbox row `task-pull:<run>:<task>`), `open_task_pull` pushes
the working branch as it was just before that merge (the merge's first parent; never forced), pushes the task
branch, and opens the pull request head = task branch, base = working branch:

    done = open_task_pull(api, repo_dir, "origin", head=task_branch_name, work=working_branch_name,
                          title=..., body=task_pull_body(...))   # done.pull, or done.skipped says why

When the remote's working branch is already past that point (or has diverged), nothing is pushed and no pull
request is opened: `TaskPull.skipped` says why (no error, no retry loop). Later pushes of the working branch (the
release) are fast-forwards that contain the merge, and GitHub then shows the task's pull request as merged.

    done = publish_release(api, repo_dir, "origin", plan_id, summary=handoff_text, manifest=manifest_rel_path,
                           task_branches=kept_task_branches(plan_id, tasks))

pushes a kept task branch again only when the remote lacks its tip, reports the task pull requests found open,
pushes the working branch and opens the release pull request. Every pull request is looked up first
(`find_pull`), so a rerun after a crash or an outage opens none twice.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pm_agent.errors import VcsError
from pm_agent.github.api import GitHubApi, PullRequest
from pm_agent.plan.models import Task
from pm_agent.vcs import Git, task_branch, working_branch

__all__ = [
    "Published",
    "PushRejected",
    "TaskPull",
    "kept_task_branches",
    "merge_of",
    "open_task_pull",
    "publish_release",
    "push_branch",
    "release_body",
    "task_pull_body",
]


class PushRejected(VcsError):
    """git push failed (rejected as not a fast-forward, no access, no such remote); carries git's message."""


@dataclass
class Published:
    """What `publish_release` pushed and opened (or found open already)."""

    release: PullRequest
    pushed: list[str] = field(default_factory=list)
    task_pulls: dict[str, PullRequest] = field(default_factory=dict)
    """Kept task branch -> its pull request into the working branch."""
    skipped: dict[str, str] = field(default_factory=dict)
    """Kept task branch -> why it has no pull request."""


def kept_task_branches(plan_id: str, tasks: Iterable[Task]) -> list[str]:
    """The branches of high-blast-radius CRITICAL tasks, which delivery keeps after landing (engine/delivery.py)."""
    from pm_agent.engine.delivery import is_high_blast_radius

    return [task_branch(plan_id, t.id, t.title) for t in tasks if is_high_blast_radius(t)]


def push_branch(git: Git, remote: str, branch: str, source: str | None = None) -> None:
    """`git push <remote> <source>:refs/heads/B` (source: the local branch B), never forced; PushRejected with
    git's message."""
    proc = git.try_run("push", "--porcelain", remote, f"{source or 'refs/heads/' + branch}:refs/heads/{branch}")
    if proc.returncode != 0:
        message = (proc.stderr.strip() or proc.stdout.strip()).replace("\n", " | ")
        raise PushRejected(f"git push {remote} {branch} was refused: {message}")


def remote_sha(git: Git, remote: str, branch: str) -> str | None:
    """The commit `branch` points at on `remote`, None when the remote has no such branch."""
    proc = git.try_run("ls-remote", "--heads", remote, f"refs/heads/{branch}")
    if proc.returncode != 0:
        raise PushRejected(f"git ls-remote {remote} failed: {proc.stderr.strip()}")
    line = proc.stdout.strip().splitlines()
    return line[0].split()[0] if line else None


def _contains(git: Git, sha: str, branch: str) -> bool:
    """Whether commit `sha` contains `branch`'s tip (False when `sha` is not known here: GitHub then decides)."""
    try:
        return git.is_ancestor(git.rev_parse(branch), sha)
    except VcsError:
        return False


@dataclass(frozen=True)
class TaskPull:
    """What `open_task_pull` did: the pull request (opened now or found open), or why there is none."""

    pull: PullRequest | None
    skipped: str | None = None


def merge_of(git: Git, work: str, head: str) -> str | None:
    """The commit that brought `head` into `work`: the oldest on work's first-parent line that contains it."""
    proc = git.try_run("rev-list", "--first-parent", "--ancestry-path", f"refs/heads/{head}..refs/heads/{work}")
    found = proc.stdout.split() if proc.returncode == 0 else []
    return found[-1] if found else None


def _before_merge(git: Git, work: str, head: str) -> str | TaskPull:
    """The working branch just before `head` was merged into it (the merge's first parent), or why not."""
    merge = merge_of(git, work, head)
    if merge is None:
        return TaskPull(None, f"{work} does not contain it here")
    parents = git.run("rev-list", "--parents", "-n", "1", merge).split()[1:]
    if len(parents) < 2 or git.is_ancestor(git.rev_parse(head), parents[0]):
        return TaskPull(None, f"it reached {work} without a merge commit of its own")
    return parents[0]


def _known_ancestor(git: Git, old: str, new: str) -> bool:
    """Whether `new` descends from `old` (False when `old` is not known here)."""
    try:
        return git.is_ancestor(old, new)
    except VcsError:
        return False


def open_task_pull(
    api: GitHubApi, repo_dir: Path, remote: str, *, head: str, work: str, title: str, body: str
) -> TaskPull:
    """Open the pull request of kept task branch `head` into `work` before the remote's `work` contains it; see
    the module docstring. Idempotent: an open pull request is found again, a push already made is a no-op."""
    found = api.find_pull(head, work)
    if found is not None:
        return TaskPull(found)
    git = Git(repo_dir)
    if not git.branch_exists(head):
        return TaskPull(None, "no such branch here")
    before = _before_merge(git, work, head)
    if isinstance(before, TaskPull):
        return before
    remote_work = remote_sha(git, remote, work)
    if remote_work is not None and remote_work != before:
        if _contains(git, remote_work, head):
            return TaskPull(None, f"{work} on {remote} already contains it")
        if not _known_ancestor(git, remote_work, before):
            return TaskPull(None, f"{work} on {remote} ({remote_work[:12]}) has diverged from {work} here")
    try:
        if remote_work != before:
            push_branch(git, remote, work, source=before)
        push_branch(git, remote, head)
    except PushRejected as exc:  # someone pushed in between: report it, never force
        return TaskPull(None, str(exc))
    return TaskPull(api.create_pull(head, work, title, body))


def task_pull_body(task_ref: str, title: str, tier_reason: str, review_artifact: str | None, work: str) -> str:
    """A kept task branch's pull request: the task, why it is CRITICAL, its review artifact."""
    parts = [f"{task_ref}: {title}, a high-blast-radius CRITICAL task kept on its own branch for review.", ""]
    parts.append(f"Tier reason: {tier_reason or '(none given)'}")
    if review_artifact:
        parts.append(f"Review artifact: `{review_artifact}`")
    parts += ["", f"pm-agent merged it into `{work}` as one merge commit (staged integration); the next push of"
              f" `{work}` contains it. pm-agent never merges pull requests."]  # fmt: skip
    return "\n".join(parts)


def release_body(plan_id: str, summary: str, manifest: str | None, branch: str) -> str:
    """The release pull request's description: the handoff summary and where the manifest is."""
    parts = [f"Release of plan `{plan_id}` by pm-agent, from `{branch}`.", "", summary.strip()]
    if manifest:
        parts += ["", f"Release manifest: `{manifest}` on branch `{branch}`."]
    parts += ["", "pm-agent does not merge: review and merge this pull request yourself."]
    return "\n".join(parts)


def publish_release(
    api: GitHubApi,
    repo_dir: Path,
    remote: str,
    plan_id: str,
    *,
    summary: str,
    manifest: str | None = None,
    title: str | None = None,
    task_branches: Sequence[str] = (),
    branch: str | None = None,
) -> Published:
    """Push the working branch to `remote` and open (or find) the release pull request; kept task branches are
    pushed only when the remote lacks their tip, their pull requests reported (opened here only in the rare case
    the remote's working branch does not contain them yet). See the module docstring. `branch` overrides the
    working branch's name (a configured `working_branch`)."""
    git = Git(repo_dir)
    work = branch or working_branch(plan_id)
    if not git.branch_exists(work):
        raise VcsError(f"no branch {work} in {repo_dir}: nothing to publish")
    base = api.default_branch()
    pushed: list[str] = []
    task_pulls: dict[str, PullRequest] = {}
    skipped: dict[str, str] = {}
    remote_work = remote_sha(git, remote, work)
    for head in task_branches:
        if not git.branch_exists(head):
            skipped[head] = "no such branch here"
            continue
        if remote_sha(git, remote, head) != git.rev_parse(head):  # pushed already when its task landed
            push_branch(git, remote, head)
            pushed.append(head)
        pull = api.find_pull(head, work)
        if pull is not None:
            task_pulls[head] = pull
        elif remote_work is None:
            skipped[head] = f"{work} is not on {remote} yet"
        elif _contains(git, remote_work, head):
            skipped[head] = f"{work} on {remote} already contains it"
        else:
            body = f"A high-blast-radius CRITICAL task of plan `{plan_id}`, kept on its own branch for review."
            task_pulls[head] = api.create_pull(head, work, f"{head} into {work}", body)
    push_branch(git, remote, work)
    pushed.append(work)
    release = api.find_pull(work, base) or api.create_pull(
        work, base, title or f"pm-agent release: {plan_id}", release_body(plan_id, summary, manifest, work)
    )
    return Published(release, pushed, task_pulls, skipped)
