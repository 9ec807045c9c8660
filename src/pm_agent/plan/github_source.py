"""Labelled GitHub issues as a plan: `github:owner/name?label=ready`, rendered to a markdown plan and read with the
plan parser, so an issue body's fields take the same forms as a markdown plan's.

Mapping: issue #12 becomes `## Task 12: <issue title>` (task id = issue number), and its task's `source` is
`github:owner/name#12`, which is how the bridge knows the task already has its issue (`issue_number(task)`).
In the body, `Depends on #12` (also `Depends on: #3, #4`, bold or not) becomes `Depends on: Task 12`; `Files`,
`Acceptance criteria`, `Tier` and the other fields are read as in any plan; a `tier:<tier>` label stands for a
`Tier:` line the body does not have. Headings in the body are moved below the task heading so that they stay
inside the task.

    source = parse_source("github:acme/app?label=ready")
    text = render_plan(source, issues)        # PlanError: no issues, a dependency outside the set
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qs

from pm_agent.errors import PlanError
from pm_agent.plan.fields import plan_id_from_path, task_heading
from pm_agent.plan.models import Task

if TYPE_CHECKING:  # only named in annotations: every plan load imports this module, few read GitHub issues
    from pm_agent.github.api import Issue

__all__ = ["PREFIX", "GitHubSource", "is_github_source", "issue_number", "mark_tasks", "parse_source", "render_plan"]

PREFIX = "github:"
_MARKER = re.compile(r"^<!-- pm-agent plan source: (github:\S+) -->$")
_SOURCE = re.compile(r"^github:(?P<repo>[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+)(?:\?(?P<query>.*))?$")
_DEPENDS = re.compile(r"^(?P<lead>\s*(?:[-*+]\s+)?)\**depends on\**\s*:?\s*\**\s*:?\s*(?P<rest>.*)$", re.IGNORECASE)
_HAS_TIER = re.compile(r"^\s*(?:[-*+]\s+)?\**tier\**\s*:", re.IGNORECASE | re.MULTILINE)
_ISSUE_REF = re.compile(r"(?<![\w/])#(\d+)\b")
_HEADING = re.compile(r"^(#{1,6})(\s+)(.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_TASK_REF = re.compile(r"\btask[- ]?(\d+)\b", re.IGNORECASE)
_LIST_ITEM = re.compile(r"^\s*[-*+]\s+")
TIERS = ("critical", "normal", "low")


@dataclass(frozen=True)
class GitHubSource:
    """`github:owner/name?label=ready`: the repository and the label its plan's issues carry."""

    repo: str
    label: str

    @property
    def text(self) -> str:
        """The source as written on the command line."""
        return f"{PREFIX}{self.repo}?label={self.label}"

    @property
    def plan_id(self) -> str:
        """`github-acme-app-ready`: also the plan file's stem and so the working branch's name."""
        return plan_id_from_path(f"github-{self.repo}-{self.label}")

    def ref(self, number: int) -> str:
        """`github:owner/name#12`: one issue, as errors and task sources name it."""
        return f"{PREFIX}{self.repo}#{number}"


def is_github_source(plan: str | Path) -> bool:
    """Whether a plan argument names GitHub issues rather than a file."""
    return str(plan).startswith(PREFIX)


def parse_source(text: str | Path) -> GitHubSource:
    """The repository and label of `github:owner/name?label=ready`; PlanError naming what is wrong."""
    raw = str(text)
    match = _SOURCE.match(raw)
    if match is None:
        raise PlanError(f"{raw!r} is not github:owner/name?label=LABEL")
    query = parse_qs(match["query"] or "", keep_blank_values=True)
    unknown = sorted(set(query) - {"label"})
    if unknown:
        raise PlanError(f"{raw}: unknown parameter {unknown[0]!r} (only label=)")
    labels = [v.strip() for v in query.get("label", []) if v.strip()]
    if len(labels) != 1:
        raise PlanError(f"{raw}: name one label, as github:{match['repo']}?label=ready")
    return GitHubSource(match["repo"], labels[0])


def render_plan(source: GitHubSource, issues: Sequence[Issue]) -> str:
    """A markdown plan with one task per issue, lowest number first; PlanError when there is no issue or an
    issue depends on one outside the set (naming `github:owner/name#N`)."""
    if not issues:
        raise PlanError(f"{source.text}: no open issue carries the label {source.label!r}")
    numbers = {i.number for i in issues}
    parts = [
        f"<!-- pm-agent plan source: {source.text} -->",
        f"# {source.repo}: issues labelled {source.label}",
        "",
    ]
    for issue in sorted(issues, key=lambda i: i.number):
        body, deps = _body(issue)
        for dep in deps:
            if dep not in numbers:
                raise PlanError(
                    f"{source.ref(issue.number)}: depends on #{dep}, which is not an open issue "
                    f"labelled {source.label!r}"
                )
        parts += [f"## Task {issue.number}: {_one_line(issue.title)}", "", f"Issue: {issue.html_url}", "", body, ""]
    return "\n".join(parts)


def mark_tasks(plan_path: Path, tasks: list[Task]) -> list[Task]:
    """Tasks of a plan rendered from issues with their source `github:owner/name#N`; others unchanged."""
    if not tasks or plan_path.is_dir():
        return tasks
    try:
        with plan_path.open(encoding="utf-8") as fh:
            first = fh.readline().strip()
    except (OSError, UnicodeDecodeError):
        return tasks
    match = _MARKER.match(first)
    if match is None:
        return tasks
    source = parse_source(match[1])
    return [t.model_copy(update={"source": source.ref(int(t.id))}) if t.id.isdigit() else t for t in tasks]


def issue_number(task: Task) -> int | None:
    """The number of the issue the task was read from (`source` github:owner/name#N), else None."""
    if not task.source.startswith(PREFIX):
        return None
    _, sep, number = task.source.rpartition("#")
    return int(number) if sep and number.isdigit() else None


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _body(issue: Issue) -> tuple[str, list[int]]:
    """The issue body as the inside of a task, and the issue numbers it depends on: headings two levels down,
    task-like headings made bold, `#N` on `Depends on` lines (and in the list under one) as `Task N`, and the
    tier label when the body names no tier."""
    out: list[str] = []
    deps: list[int] = []
    fenced = in_list = False
    for line in issue.body.replace("\r\n", "\n").split("\n"):
        if _FENCE.match(line):
            fenced, in_list = not fenced, False
        elif not fenced:
            depends = _DEPENDS.match(line)
            if depends:
                rest = depends["rest"].replace("**", "").strip()
                deps += [int(n) for n in _ISSUE_REF.findall(rest)] + [int(n) for n in _TASK_REF.findall(rest)]
                refs = _ISSUE_REF.sub(r"Task \1", rest)
                line = f"{depends['lead']}Depends on: {refs}"
                in_list = not rest
            elif in_list and _LIST_ITEM.match(line):
                deps += [int(n) for n in _ISSUE_REF.findall(line)] + [int(n) for n in _TASK_REF.findall(line)]
                line = _ISSUE_REF.sub(r"Task \1", line)
            else:
                in_list = in_list and not line.strip()
                line = _heading(line)
        out.append(line)
    body = "\n".join(out).strip()
    tier = next((lab.split(":", 1)[1] for lab in issue.labels if lab.lower().startswith("tier:")), "").strip().lower()
    if tier in TIERS and not _HAS_TIER.search(body):
        body = f"Tier: {tier}\n\n{body}"
    return body, deps


def _heading(line: str) -> str:
    heading = _HEADING.match(line)
    if heading is None:
        return line
    if task_heading(heading[3]) is not None:
        return f"**{heading[3].strip()}**"  # a heading that reads as a task would start another task
    return "#" * min(len(heading[1]) + 2, 6) + heading[2] + heading[3]
