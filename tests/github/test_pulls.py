"""Publishing a release: the working branch pushed to a local bare repository (never forced), one pull request
into the default branch on the fake GitHub, one per kept CRITICAL task branch, found again on a rerun, no merge."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pm_agent.github.client import GitHubClient
from pm_agent.github.pulls import PushRejected, kept_task_branches, publish_release
from pm_agent.plan.models import SecurityFlags, Task, Tier
from pm_agent.testing.fake_github import FakeGitHub
from pm_agent.testing.repo import commit_all, git, init_repo

TOKEN = "ghp_pullsToken"
WORK = "pm/invoices/work"
TASK = "feat/invoices/task-2-schema"


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    return bare


@pytest.fixture
def repo(tmp_path: Path, remote: Path) -> Path:
    path = init_repo(tmp_path / "repo")
    git(path, "remote", "add", "origin", str(remote))
    git(path, "push", "-q", "origin", "main")
    git(path, "checkout", "-q", "-b", WORK)
    (path / "a.py").write_text("A = 1\n")
    commit_all(path, "feat: a\n\nRefs: task-1")
    git(path, "checkout", "-q", "main")
    return path


@pytest.fixture
def gh(remote: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub("acme/app", token=TOKEN, git_dir=remote) as fake:
        yield fake


@pytest.fixture
def api(gh: FakeGitHub) -> GitHubClient:
    return GitHubClient("acme/app", gh.url, TOKEN)


def test_release_pushes_and_opens_one_pull(repo: Path, remote: Path, gh: FakeGitHub, api: GitHubClient) -> None:
    done = publish_release(
        api, repo, "origin", "invoices", summary="3 tasks done.", manifest="docs/releases/invoices-release.yaml"
    )
    assert done.pushed == [WORK]
    assert git(remote, "rev-parse", WORK) == git(repo, "rev-parse", WORK)
    assert (done.release.head, done.release.base) == (WORK, "main")
    body = gh.calls("POST", "/pulls")[0].body
    assert body["title"] == "pm-agent release: invoices"
    assert "3 tasks done." in body["body"]
    assert "docs/releases/invoices-release.yaml" in body["body"]
    again = publish_release(api, repo, "origin", "invoices", summary="3 tasks done.")
    assert again.release == done.release
    assert len(gh.calls("POST", "/pulls")) == 1, "the rerun found the open pull request"
    assert [r for r in gh.requests if r.method == "PUT" or r.path.endswith("/merge")] == []


def test_rejected_push_is_an_error_with_gits_message(
    tmp_path: Path, repo: Path, remote: Path, gh: FakeGitHub, api: GitHubClient
) -> None:
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(remote), str(other))
    git(other, "config", "user.email", "o@example.com")
    git(other, "config", "user.name", "O")
    git(other, "checkout", "-q", "-b", WORK)
    (other / "b.py").write_text("B = 2\n")
    commit_all(other, "someone else's work")
    git(other, "push", "-q", "origin", WORK)
    theirs = git(remote, "rev-parse", WORK)
    with pytest.raises(PushRejected, match=r"git push origin pm/invoices/work was refused: .*rejected"):
        publish_release(api, repo, "origin", "invoices", summary="s")
    assert git(remote, "rev-parse", WORK) == theirs, "never forced"
    assert gh.calls("POST", "/pulls") == []


def test_kept_critical_branch_gets_its_own_pull(repo: Path, remote: Path, gh: FakeGitHub, api: GitHubClient) -> None:
    git(repo, "push", "-q", "origin", WORK)  # the working branch as it was before the task landed
    git(repo, "checkout", "-q", "-b", TASK, WORK)
    (repo / "schema.sql").write_text("create table invoices (id int);\n")
    commit_all(repo, "feat(db): schema\n\nRefs: task-2")
    git(repo, "checkout", "-q", WORK)
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge task-2", TASK)
    done = publish_release(api, repo, "origin", "invoices", summary="s", task_branches=[TASK, "feat/invoices/task-9-x"])
    assert done.pushed == [TASK, WORK]
    pull = done.task_pulls[TASK]
    assert (pull.head, pull.base) == (TASK, WORK)
    assert done.skipped == {"feat/invoices/task-9-x": "no such branch here"}
    assert [(p.head, p.base) for p in (pull, done.release)] == [(TASK, WORK), (WORK, "main")]
    again = publish_release(api, repo, "origin", "invoices", summary="s", task_branches=[TASK])
    assert again.task_pulls == {TASK: pull}
    assert len(gh.calls("POST", "/pulls")) == 2
    assert gh.calls("PUT") == []


def test_kept_branch_already_in_the_remote_working_branch(repo: Path, gh: FakeGitHub, api: GitHubClient) -> None:
    git(repo, "checkout", "-q", "-b", TASK, WORK)
    commit_all(repo, "feat(db): schema\n\nRefs: task-2")
    git(repo, "checkout", "-q", WORK)
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge task-2", TASK)
    git(repo, "push", "-q", "origin", WORK)
    done = publish_release(api, repo, "origin", "invoices", summary="s", task_branches=[TASK])
    assert done.task_pulls == {}
    assert done.skipped == {TASK: f"{WORK} on origin already contains it"}


def test_kept_task_branches_are_the_high_blast_radius_ones() -> None:
    schema = Task(id="2", title="Schema", tier=Tier.CRITICAL, security_flags=SecurityFlags(touches_schema=True))
    auth = Task(id="3", title="Auth", tier=Tier.CRITICAL, security_flags=SecurityFlags(touches_auth=True))
    plain = Task(id="4", title="Docs", tier=Tier.NORMAL, security_flags=SecurityFlags(touches_schema=True))
    assert kept_task_branches("invoices", [schema, auth, plain]) == ["feat/invoices/task-2-schema"]
