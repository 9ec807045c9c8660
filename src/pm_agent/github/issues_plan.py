"""`pm-agent plan|run github:owner/name?label=ready`: the open issues with that label, read as a plan.

The issues are rendered to a markdown plan (`plan.github_source.render_plan`) and read by the plan parser like any
plan file. `run` keeps that file as `.pm-agent/plans/<plan-id>.md`, so resume and the plan watch read it as they read
any plan; `plan` writes nothing (a temporary file). The API URL and the token's variable come from the repository's
pm-agent.yaml `github:` section (defaults: api.github.com, GITHUB_TOKEN); the repository from the source itself.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from pm_agent.config import load_config
from pm_agent.errors import PlanError
from pm_agent.github.api import Issue
from pm_agent.github.client import GitHubClient
from pm_agent.plan import Plan, load_plan
from pm_agent.plan.github_source import GitHubSource, parse_source, render_plan
from pm_agent.statefile import STATE_DIR

__all__ = ["PLANS_DIR", "IssueSource", "fetch_plan", "load_issue_plan", "write_issue_plan"]

PLANS_DIR = "plans"
"""Under the state folder: the plans rendered from issues that runs read."""


class IssueSource(Protocol):
    """The two reads a plan from issues needs (GitHubClient has both)."""

    def issues(self, *, labels: tuple[str, ...] = (), state: str = "all") -> list[Issue]:
        """Every issue carrying all of `labels`."""
        ...

    def label_exists(self, name: str) -> bool:
        """Whether the repository has the label."""
        ...


def fetch_plan(source: GitHubSource, api: IssueSource) -> str:
    """The markdown plan of the open issues with the source's label; PlanError for an unknown label, no issue, or
    a dependency on an issue outside the set."""
    issues = api.issues(labels=(source.label,), state="open")
    if not issues and not api.label_exists(source.label):
        raise PlanError(f"{source.text}: {source.repo} has no label {source.label!r}")
    return render_plan(source, issues)


def _client(source: GitHubSource, repo: Path, env: Mapping[str, str] | None) -> GitHubClient:
    config = load_config(repo).github.model_copy(update={"repo": source.repo})
    return GitHubClient.from_config(config, os.environ if env is None else env)


def write_issue_plan(
    text: str | Path, repo: Path, *, env: Mapping[str, str] | None = None, api: IssueSource | None = None
) -> Path:
    """Fetch the issues and keep their plan as `.pm-agent/plans/<plan-id>.md` (rewritten only when it changed)."""
    source = parse_source(text)
    rendered = fetch_plan(source, api if api is not None else _client(source, repo, env))
    path = repo / STATE_DIR / PLANS_DIR / f"{source.plan_id}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != rendered:
        path.write_text(rendered, encoding="utf-8")
    return path


def load_issue_plan(
    text: str | Path,
    design: Path | None,
    repo: Path | None,
    *,
    env: Mapping[str, str] | None = None,
    api: IssueSource | None = None,
) -> Plan:
    """The plan of the issues, as `load_plan` reads a file, writing nothing; its `path` is the source."""
    source = parse_source(text)
    if api is None and repo is None:
        raise PlanError(f"{source.text}: a plan from GitHub needs the repository (for pm-agent.yaml's github section)")
    rendered = fetch_plan(source, api if api is not None else _client(source, repo or Path(), env))
    with tempfile.TemporaryDirectory(prefix="pm-agent-issues-") as tmp:
        path = Path(tmp) / f"{source.plan_id}.md"
        path.write_text(rendered, encoding="utf-8")
        plan = load_plan(path, design, repo)
    return plan.model_copy(update={"path": source.text})
