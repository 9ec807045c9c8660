"""The message pm-agent commits a task with: `type(scope): short description`, then the Refs and Review trailers.

The `Refs: task-<id>` trailer is what delivery's idempotency and the start-of-run takeover look for
(engine/delivery.py, engine/startup.py); the subject is what the takeover compares with a task's title.
"""

from __future__ import annotations

import re
from pathlib import Path

from pm_agent.plan.models import Task
from pm_agent.vcs import slugify

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
