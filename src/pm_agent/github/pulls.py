"""Pull requests at release: push the working branch (never forced) and open one pull request into the default
branch; CRITICAL tasks that kept their own branch get one pull request each, into the working branch.

    done = publish_release(api, repo_dir, "origin", plan_id, summary=handoff_text, manifest=manifest_rel_path,
                           task_branches=kept_task_branches(plan_id, tasks))

Every pull request is looked up first (`find_pull`), so a rerun after a crash or an outage opens none twice.
pm-agent never merges: there is no merge call here or anywhere.

A kept task branch is merged into the working branch as soon as its task lands (staged integration), and GitHub
refuses a pull request whose head its base already contains. So each task branch is pushed and its pull request
opened before the working branch is pushed, against the working branch as the remote has it then; when the
remote's working branch already contains the task branch (or does not exist yet), no pull request is possible and
`Published.skipped` says why.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pm_agent.errors import VcsError
from pm_agent.github.api import GitHubApi, PullRequest
from pm_agent.plan.models import Task
from pm_agent.vcs import Git, task_branch, working_branch

__all__ = ["Published", "PushRejected", "kept_task_branches", "publish_release", "push_branch", "release_body"]


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


def push_branch(git: Git, remote: str, branch: str) -> None:
    """`git push <remote> refs/heads/B:refs/heads/B`, never forced; PushRejected with git's message."""
    proc = git.try_run("push", "--porcelain", remote, f"refs/heads/{branch}:refs/heads/{branch}")
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


def release_body(plan_id: str, summary: str, manifest: str | None, branch: str) -> str:
    """The release pull request's description: the handoff summary and where the manifest is."""
    parts = [f"Release of plan `{plan_id}` by pm-agent, from `{branch}`.", "", summary.strip()]
    if manifest:
        parts += ["", f"Release manifest: [`{manifest}`](../blob/{branch}/{manifest}) on `{branch}`."]
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
    """Push the working branch (and kept task branches) to `remote` and open the pull requests; see the module
    docstring. `branch` overrides the working branch's name (a configured `working_branch`)."""
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
