"""Kept CRITICAL task branches: their pull request into the working branch is opened as the task lands (the
working branch pushed as it was just before the merge), never twice, skipped with the reason when the remote is
already past it, and the release after it is a fast-forward; a real repository, a bare remote, the fake GitHub."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pm_agent.github.api import GitHubError
from pm_agent.github.client import GitHubClient
from pm_agent.github.outbox import Backoff, ReleaseTarget, Sender
from pm_agent.github.pulls import open_task_pull, publish_release
from pm_agent.github.rows import TASK_PULL, outbox_rows, task_pull_key
from pm_agent.plan.models import Plan, SecurityFlags, Task, Tier
from pm_agent.store import SqliteStore, open_store
from pm_agent.store.outbox import register_hook, unregister_hook
from pm_agent.testing.fake_github import FakeGitHub
from pm_agent.testing.repo import commit_all, git, init_repo

TOKEN = "ghp_taskPulls"
WORK = "pm/invoices/work"
TASK = "feat/invoices/task-2-schema"
FAST = Backoff(base_s=0.01, cap_s=0.05)


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    return bare


@pytest.fixture
def repo(tmp_path: Path, remote: Path) -> Path:
    """main on the remote; the working branch with task-1, then task-2's kept branch merged into it (--no-ff)."""
    path = init_repo(tmp_path / "repo")
    git(path, "remote", "add", "origin", str(remote))
    git(path, "push", "-q", "origin", "main")
    git(path, "checkout", "-q", "-b", WORK)
    (path / "a.py").write_text("A = 1\n")
    commit_all(path, "feat: a\n\nRefs: task-1")
    git(path, "checkout", "-q", "-b", TASK)
    (path / "schema.sql").write_text("create table invoices (id int);\n")
    commit_all(path, "feat(db): schema\n\nRefs: task-2")
    git(path, "checkout", "-q", WORK)
    git(path, "merge", "-q", "--no-ff", "-m", f"Merge {TASK} into {WORK}", TASK)
    git(path, "checkout", "-q", "main")
    return path


@pytest.fixture
def gh(remote: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub("acme/app", token=TOKEN, git_dir=remote) as fake:
        yield fake


@pytest.fixture
def api(gh: FakeGitHub) -> GitHubClient:
    return GitHubClient("acme/app", gh.url, TOKEN)


def _no_merge_call(gh: FakeGitHub) -> bool:
    return [r for r in gh.requests if r.method == "PUT" or r.path.endswith("/merge")] == []


def test_the_fake_refuses_a_pull_whose_base_already_contains_its_head(
    repo: Path, gh: FakeGitHub, api: GitHubClient
) -> None:
    git(repo, "push", "-q", "origin", WORK, TASK)  # the old behaviour: the working branch pushed with the merge
    with pytest.raises(GitHubError, match="No commits between") as caught:
        api.create_pull(TASK, WORK, "task-2", "body")
    assert caught.value.status == 422
    assert [p for p in gh.issues.values() if p.pull is not None] == []


def test_pull_opened_before_the_working_branch_contains_the_task(
    repo: Path, remote: Path, gh: FakeGitHub, api: GitHubClient
) -> None:
    before = git(repo, "rev-parse", f"{WORK}^1")
    done = open_task_pull(api, repo, "origin", head=TASK, work=WORK, title="task-2: Schema", body="why")
    assert done.skipped is None
    assert done.pull is not None
    assert (done.pull.head, done.pull.base) == (TASK, WORK)
    assert git(remote, "rev-parse", WORK) == before, "the working branch as it was just before the merge"
    assert git(remote, "rev-parse", TASK) == git(repo, "rev-parse", TASK)
    [post] = gh.calls("POST", "/pulls")
    assert (post.status, post.body["head"], post.body["base"]) == (201, TASK, WORK)
    again = open_task_pull(api, repo, "origin", head=TASK, work=WORK, title="task-2: Schema", body="why")
    assert again.pull == done.pull
    assert len(gh.calls("POST", "/pulls")) == 1, "a rerun opens nothing twice"
    release = publish_release(api, repo, "origin", "invoices", summary="s", task_branches=[TASK])
    assert release.pushed == [WORK], "the task branch is on the remote already: not pushed again"
    assert git(remote, "rev-parse", WORK) == git(repo, "rev-parse", WORK), "a fast-forward that contains the merge"
    assert release.task_pulls == {TASK: done.pull}
    assert (release.release.head, release.release.base) == (WORK, "main")
    assert len(gh.calls("POST", "/pulls")) == 2
    assert _no_merge_call(gh)


def test_a_remote_already_past_the_merge_is_skipped_with_the_reason(
    repo: Path, remote: Path, gh: FakeGitHub, api: GitHubClient
) -> None:
    git(repo, "push", "-q", "origin", WORK)
    done = open_task_pull(api, repo, "origin", head=TASK, work=WORK, title="task-2: Schema", body="why")
    assert done.pull is None
    assert done.skipped == f"{WORK} on origin already contains it"
    assert gh.calls("POST", "/pulls") == []
    assert git(remote, "branch", "--list", TASK) == "", "nothing pushed for a pull request that cannot be"


def test_a_diverged_remote_is_not_pushed_over(tmp_path: Path, repo: Path, remote: Path, api: GitHubClient) -> None:
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(remote), str(other))
    git(other, "checkout", "-q", "-b", WORK)
    (other / "b.py").write_text("B = 2\n")
    commit_all(other, "someone else's work")
    git(other, "push", "-q", "origin", WORK)
    theirs = git(remote, "rev-parse", WORK)
    done = open_task_pull(api, repo, "origin", head=TASK, work=WORK, title="task-2: Schema", body="why")
    assert done.pull is None
    assert done.skipped is not None
    assert "has diverged" in done.skipped
    assert git(remote, "rev-parse", WORK) == theirs, "never forced"


def _plan() -> Plan:
    schema = Task(
        id="2",
        title="Schema",
        tier=Tier.CRITICAL,
        tier_reason="changes the database schema",
        security_flags=SecurityFlags(touches_schema=True),
        acceptance_criteria=["a table"],
    )
    return Plan(plan_id="invoices", path="docs/plans/invoices.md", tasks=[schema], queue=["2"])


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    path = tmp_path / ".pm-agent" / "state.db"
    register_hook(path, outbox_rows)
    with open_store(path) as opened:
        yield opened
    unregister_hook(path)


def _drain(sender: Sender) -> None:
    for _ in range(20):
        if not sender.pending():
            return
        sender.send()
    raise AssertionError(sender.outbox.summary(sender.run_id))


def test_the_sender_opens_the_task_pull_once_and_links_it_on_the_task_issue(
    repo: Path, remote: Path, gh: FakeGitHub, api: GitHubClient, store: SqliteStore
) -> None:
    run_id = store.create_run(_plan(), baseline_sha="a" * 40, working_branch=WORK, shared_context={}, config={}).id
    target = ReleaseTarget(repo, "origin", "docs/releases")
    sender = Sender(api, store, run_id, backoff=FAST, release=target)
    _drain(sender)  # the run's and the task's issues
    staged = {"branch": TASK, "working_branch": WORK, "merge": git(repo, "rev-parse", WORK),
              "review_artifact": "docs/reviews/task-2.md"}  # fmt: skip
    for _ in range(2):  # the delivery step ran again after a crash: still one row
        store.append_event(run_id, "task.staged", staged, task_id="2")
    [row] = [r for r in sender.outbox.rows(run_id) if r.kind == TASK_PULL]
    assert (row.key, row.payload["branch"], row.payload["task_id"]) == (task_pull_key(run_id, "2"), TASK, "2")
    # A first attempt got as far as opening the pull request, then the process died before marking the row sent.
    sender.outbox.begin(row.id)
    first = open_task_pull(api, repo, "origin", head=TASK, work=WORK, title="task-2: Schema", body="why")
    assert first.pull is not None
    _drain(Sender(api, store, run_id, backoff=FAST, release=target))
    [pull] = [p for p in gh.issues.values() if p.pull is not None]
    assert pull.pull is not None
    assert (pull.pull.head, pull.pull.base) == (TASK, WORK)
    assert len(gh.calls("POST", "/pulls")) == 1, "the retry found the pull request"
    assert git(remote, "rev-parse", WORK) == git(repo, "rev-parse", f"{WORK}^1")
    number = sender.issue_number("2")
    [link] = [c for c in gh.comment_list if c.issue_number == number]
    assert f"Pull request #{pull.number} ({TASK} into {WORK})" in link.body
    assert sender.outbox.get_state(task_pull_key(run_id, "2")) == pull.number
    assert _no_merge_call(gh)


def test_the_sender_writes_the_body_and_records_a_skip(
    repo: Path, gh: FakeGitHub, api: GitHubClient, store: SqliteStore
) -> None:
    run_id = store.create_run(_plan(), baseline_sha="a" * 40, working_branch=WORK, shared_context={}, config={}).id
    sender = Sender(api, store, run_id, backoff=FAST, release=ReleaseTarget(repo, "origin", "docs/releases"))
    store.append_event(run_id, "task.staged", {"branch": TASK, "working_branch": WORK,
                       "review_artifact": "docs/reviews/task-2.md"}, task_id="2")  # fmt: skip
    _drain(sender)
    [pull] = [p for p in gh.issues.values() if p.pull is not None]
    assert "task-2: Schema" in pull.body
    assert "Tier reason: changes the database schema" in pull.body
    assert "Review artifact: `docs/reviews/task-2.md`" in pull.body
    other = store.create_run(_plan(), baseline_sha="a" * 40, working_branch=WORK, shared_context={}, config={}).id
    git(repo, "push", "-q", "origin", WORK)  # the release went out: too late for a pull request
    late = Sender(api, store, other, backoff=FAST, release=ReleaseTarget(repo, "origin", "docs/releases"))
    store.append_event(other, "task.staged", {"branch": TASK, "working_branch": WORK}, task_id="2")
    gh.issues[pull.number].state = "closed"  # GitHub marks it merged once the working branch contains it
    _drain(late)
    reason = f"{WORK} on origin already contains it"
    assert late.outbox.get_state(task_pull_key(other, "2")) == {"skipped": reason}
    [note] = [c for c in gh.comment_list if c.issue_number == late.issue_number("2")]
    assert f"No pull request for `{TASK}` into `{WORK}`: {reason}." in note.body
    assert len(gh.calls("POST", "/pulls")) == 1
