"""Seed 001 phase 4: pm-agent (never the agent) commits a task, integrates it, tags it.

Idempotent at every step, keyed on the `Refs: task-<id>` trailer (DESIGN.md crash safety): a commit
already on the task branch is not made again, one already on the working branch is not integrated
again, and a tag already in place is left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pm_agent.engine.faults import fault_point
from pm_agent.plan.models import Task, Tier
from pm_agent.vcs import Git, IntegrationResult, checkpoint_tag, slugify

_TYPE_WORDS = (
    ("docs", re.compile(r"\b(docs?|documentation|readme|guide|changelog)\b", re.I)),
    ("test", re.compile(r"\b(tests?|coverage)\b", re.I)),
    ("refactor", re.compile(r"\b(refactor\w*|clean ?up|rename)\b", re.I)),
    ("fix", re.compile(r"\b(fix\w*|bug)\b", re.I)),
    ("chore", re.compile(r"\b(config\w*|tooling|ci|lint\w*)\b", re.I)),
)


def commit_type(task: Task) -> str:
    """A conventional-commit type for the task."""
    for kind, pattern in _TYPE_WORDS:
        if pattern.search(task.title):
            return kind
    return "feat"


def commit_scope(task: Task) -> str:
    """The ownership area, else the first directory the task touches below src/."""
    if task.ownership.strip():
        return slugify(task.ownership, max_len=24) or "core"
    for path in task.expected_files.all_paths():
        parts = [p for p in Path(path).parts if p not in {"src", "tests", "lib"}]
        if len(parts) > 1:
            return slugify(parts[0], max_len=24) or "core"
        if parts:
            return slugify(Path(parts[0]).stem, max_len=24) or "core"
    return "core"


# Names written capitalised whatever their place in a sentence; a subject keeps them as they are.
_PROPER_NAMES = frozenset(
    {
        "android",
        "angular",
        "ansible",
        "aws",
        "azure",
        "bash",
        "celery",
        "chrome",
        "claude",
        "debian",
        "django",
        "docker",
        "firefox",
        "flask",
        "gitlab",
        "google",
        "grafana",
        "graphql",
        "helm",
        "homebrew",
        "ios",
        "java",
        "kafka",
        "kotlin",
        "kubernetes",
        "linux",
        "markdown",
        "mongo",
        "mysql",
        "nginx",
        "openai",
        "pandas",
        "postgres",
        "prometheus",
        "pydantic",
        "python",
        "rails",
        "react",
        "redis",
        "ruby",
        "rust",
        "sentry",
        "slack",
        "sqlite",
        "stripe",
        "swift",
        "terraform",
        "typer",
        "ubuntu",
        "unix",
        "vue",
        "windows",
    }
)


def subject_description(title: str) -> str:
    """A task title as a conventional-commit description: lower-case first word, unless a name.

    `CSV exporter` stays `CSV exporter`, `OAuth login` and `Docker image` keep their capitals;
    `Add parser` becomes `add parser`.
    """
    title = title.strip().rstrip(".")
    first = title.split(maxsplit=1)[0] if title else ""
    word = first.strip("`'\"()[]{},:;!?")
    if not word or any(c.isupper() for c in word[1:]) or any(c.isdigit() for c in word):
        return title  # an acronym (CSV, I/O), a mixed-case name (OAuth, GitHub) or a version (S3, Py3)
    if word.casefold() in _PROPER_NAMES:
        return title
    return title[:1].lower() + title[1:]


def commit_message(task: Task, review_artifact: str) -> str:
    """`type(scope): short description` then the Refs and Review trailers (details live in the artifact)."""
    description = subject_description(task.title)
    subject = f"{commit_type(task)}({commit_scope(task)}): {description}"
    if len(subject) > 72:
        subject = subject[:71].rstrip() + "…"
    return f"{subject}\n\nRefs: {task.ref}\nReview: {review_artifact}\n"


def is_high_blast_radius(task: Task) -> bool:
    """CRITICAL tasks that break contracts or change schema keep their feature branch (staged integration)."""
    return task.tier is Tier.CRITICAL and (task.io_contract.breaking_change or task.security_flags.touches_schema)


@dataclass(frozen=True)
class Delivery:
    """What delivering a task did."""

    integration: IntegrationResult | None
    commit_sha: str | None  # the task's commit as it stands on the working branch
    task_commit: str | None  # the commit on the task branch
    tag: str | None = None
    already_done: bool = False

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
) -> Delivery:
    """Write the review artifact, commit the worktree, integrate into the working branch, tag."""
    landed = repo.find_commit_by_trailer(task.ref, working_branch)
    if landed is not None:
        tag = _tag(repo, plan_id, task, landed) if tag_checkpoint else None
        return Delivery(integration=None, commit_sha=landed, task_commit=landed, tag=tag, already_done=True)
    task_commit = worktree.find_commit_by_trailer(task.ref, "HEAD")
    if task_commit is None:
        target = worktree.path / artifact_path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(artifact_text, encoding="utf-8")
        task_commit = worktree.commit_all(commit_message(task, artifact_path))
        fault_point("after-task-commit")
    # High-blast-radius CRITICAL tasks keep their branch and land as one merge commit (staged integration).
    integration = repo.integrate(task_branch, working_branch, merge_commit=is_high_blast_radius(task))
    if not integration.ok:
        return Delivery(integration=integration, commit_sha=None, task_commit=task_commit)
    fault_point("after-integrate")
    landed = repo.find_commit_by_trailer(task.ref, working_branch) or integration.after
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
