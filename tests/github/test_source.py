"""Labelled GitHub issues as a plan (`github:owner/name?label=ready`): rendered, parsed by the plan parser, each task
keeping its issue; read through the client from the fake GitHub, and from the command line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pm_agent.errors import PlanError
from pm_agent.github.api import Issue
from pm_agent.github.client import GitHubClient
from pm_agent.github.issues_plan import load_issue_plan, write_issue_plan
from pm_agent.plan import load_plan
from pm_agent.plan.github_source import GitHubSource, issue_number, parse_source, render_plan
from pm_agent.testing.fake_github import FakeGitHub
from pm_agent.testing.repo import init_repo

TOKEN = "ghp_planSourceToken0987654321"
SOURCE = GitHubSource("acme/app", "ready")

SCHEMA_BODY = """Add the invoices table.

Files:
- Create: `src/db/invoices.sql`

## Acceptance criteria
- the table exists
- it has a unique number column
"""

API_BODY = """The invoices endpoint.

**Depends on:** #1

**Files:**
- Create: `src/api/invoices.py`
- Test: `tests/test_invoices.py`

# Acceptance criteria
- GET /invoices lists them
"""

DOCS_BODY = """Document it.

Depends on
- #1
- #2

Tier: low
"""


def issue(number: int, title: str, body: str, labels: tuple[str, ...] = ("ready",)) -> Issue:
    return Issue(number, title, body, "open", labels, f"https://github.example/acme/app/issues/{number}")


def three() -> list[Issue]:
    return [
        issue(1, "Invoices schema", SCHEMA_BODY, ("ready", "tier:critical")),
        issue(2, "Invoices API", API_BODY),
        issue(4, "Docs", DOCS_BODY, ("ready", "tier:critical")),
    ]


def test_parse_source() -> None:
    assert parse_source("github:acme/app?label=ready") == SOURCE
    assert SOURCE.plan_id == "github-acme-app-ready"
    for bad, why in [
        ("github:acme?label=x", "not github:owner/name"),
        ("github:acme/app", "name one label"),
        ("github:acme/app?label=a&label=b", "name one label"),
        ("github:acme/app?label=a&state=all", "unknown parameter 'state'"),
    ]:
        with pytest.raises(PlanError, match=why):
            parse_source(bad)


def test_issues_become_tasks_with_their_fields(tmp_path: Path) -> None:
    path = tmp_path / "github-acme-app-ready.md"
    path.write_text(render_plan(SOURCE, three()))
    plan = load_plan(path)
    tasks = {t.id: t for t in plan.tasks}
    assert list(tasks) == ["1", "2", "4"], "task ids are the issue numbers"
    assert [t.title for t in plan.tasks] == ["Invoices schema", "Invoices API", "Docs"]
    assert {t.id: issue_number(t) for t in plan.tasks} == {"1": 1, "2": 2, "4": 4}
    assert tasks["2"].source == "github:acme/app#2"
    assert [(d.task_id, d.inferred) for d in tasks["2"].depends_on] == [("1", False)]
    assert sorted(d.task_id for d in tasks["4"].depends_on if not d.inferred) == ["1", "2"]
    assert tasks["1"].acceptance_criteria == ["the table exists", "it has a unique number column"]
    assert tasks["2"].acceptance_criteria == ["GET /invoices lists them"]
    assert tasks["2"].expected_files.create == ["src/api/invoices.py"]
    assert tasks["2"].expected_files.test == ["tests/test_invoices.py"]
    assert (tasks["1"].explicit_tier, tasks["2"].explicit_tier) == ("critical", None), "tier:critical label"
    assert tasks["4"].explicit_tier == "low", "the body's Tier wins over the label"
    assert plan.plan_id == "github-acme-app-ready"


def test_a_plain_plan_keeps_no_issue(tmp_path: Path) -> None:
    path = tmp_path / "plan.md"
    path.write_text("# P\n\n## Task 1: x\n\nDo it.\n")
    assert [issue_number(t) for t in load_plan(path).tasks] == [None]


def test_task_like_heading_in_a_body_stays_in_its_task(tmp_path: Path) -> None:
    body = "Intro.\n\n## Task 7: not a task\n\nmore\n\n```md\n# Depends on #99\n```\n"
    path = tmp_path / "p.md"
    path.write_text(render_plan(SOURCE, [issue(3, "Only", body)]))
    plan = load_plan(path)
    assert [t.id for t in plan.tasks] == ["3"]
    assert "not a task" in plan.tasks[0].body
    assert "# Depends on #99" in plan.tasks[0].body, "fenced code is left as written"


def test_dependency_outside_the_set_names_the_issue() -> None:
    with pytest.raises(PlanError, match=r"github:acme/app#2: depends on #1, which is not an open issue labelled"):
        render_plan(SOURCE, [issue(2, "API", API_BODY)])


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub("acme/app", token=TOKEN) as fake:
        yield fake


@pytest.fixture
def repo(tmp_path: Path, gh: FakeGitHub) -> Path:
    config = f"github:\n  api_url: {gh.url}\n  token_env: PM_TEST_GH_TOKEN\n"
    return init_repo(tmp_path / "repo", files={"README.md": "# app\n", "pm-agent.yaml": config})


def seed(gh: FakeGitHub) -> None:
    gh.add_issue("Invoices schema", SCHEMA_BODY, ("ready", "tier:critical"))
    gh.add_issue("Invoices API", API_BODY, ("ready",))
    gh.add_issue("Not ready", "later", ("backlog",))
    gh.add_issue("Docs", DOCS_BODY, ("ready",))
    gh.issues[3].state = "closed"


def test_plan_from_the_fake_github(gh: FakeGitHub, repo: Path) -> None:
    seed(gh)
    env = {"PM_TEST_GH_TOKEN": TOKEN}
    plan = load_issue_plan("github:acme/app?label=ready", None, repo, env=env)
    assert [(t.id, t.source) for t in plan.tasks] == [
        ("1", "github:acme/app#1"),
        ("2", "github:acme/app#2"),
        ("4", "github:acme/app#4"),
    ]
    assert plan.path == "github:acme/app?label=ready"
    assert not (repo / ".pm-agent").exists(), "plan writes nothing"
    kept = write_issue_plan("github:acme/app?label=ready", repo, env=env)
    assert kept == repo / ".pm-agent" / "plans" / "github-acme-app-ready.md"
    again = load_plan(kept, None, repo)
    assert [(t.id, t.source, t.title) for t in again.tasks] == [(t.id, t.source, t.title) for t in plan.tasks]
    listed = gh.calls("GET", "/repos/acme/app/issues")
    assert listed
    assert all(r.query.get("labels") == "ready" and r.query.get("state") == "open" for r in listed)


def test_unknown_label_and_no_issues(gh: FakeGitHub, repo: Path) -> None:
    env = {"PM_TEST_GH_TOKEN": TOKEN}
    with pytest.raises(PlanError, match="acme/app has no label 'ready'"):
        load_issue_plan("github:acme/app?label=ready", None, repo, env=env)
    gh.add_label("ready")
    with pytest.raises(PlanError, match="no open issue carries the label 'ready'"):
        load_issue_plan("github:acme/app?label=ready", None, repo, env=env)


def test_client_reads_labels(gh: FakeGitHub) -> None:
    client = GitHubClient("acme/app", gh.url, TOKEN)
    gh.add_label("ready to go")
    assert (client.label_exists("ready to go"), client.label_exists("nope")) == (True, False)


def pm(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("pm-agent", path=str(Path(sys.executable).parent)) or "pm-agent"
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=120, check=False, env=env)


def test_pm_agent_plan_github_source(gh: FakeGitHub, repo: Path) -> None:
    seed(gh)
    env = {**os.environ, "PM_TEST_GH_TOKEN": TOKEN}
    done = pm("plan", "github:acme/app?label=ready", "-C", str(repo), "--json", env=env)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [t["id"] for t in data["tasks"]] == ["1", "2", "4"]
    assert [t["source"] for t in data["tasks"]] == ["github:acme/app#1", "github:acme/app#2", "github:acme/app#4"]
    assert data["plan_doc"] == "github:acme/app?label=ready"
    assert TOKEN not in done.stdout + done.stderr
    bad = pm("plan", "github:acme/app?label=nope", "-C", str(repo), env=env)
    assert bad.returncode == 2
    assert "has no label 'nope'" in bad.stderr + bad.stdout
    no_token = pm("plan", "github:acme/app?label=ready", "-C", str(repo), env={**os.environ, "PM_TEST_GH_TOKEN": ""})
    assert no_token.returncode == 2
    assert "PM_TEST_GH_TOKEN is not set" in no_token.stderr + no_token.stdout
