"""GitHubClient (githubkit) against the local fake GitHub: every call, all pages, the conditional comments poll,
and GitHub's failures mapped to GitHubError."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

import pytest

from pm_agent.config import GitHubConfig
from pm_agent.errors import ConfigError
from pm_agent.github.api import GitHubApi, GitHubError
from pm_agent.github.client import GitHubClient
from pm_agent.testing.fake_github import BOT, FakeGitHub

TOKEN = "ghp_secretTokenValue1234567890"


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub("acme/app", token=TOKEN) as fake:
        yield fake


@pytest.fixture
def client(gh: FakeGitHub) -> GitHubClient:
    # per_page=2: a few issues already take several pages
    return GitHubClient("acme/app", gh.url, TOKEN, per_page=2)


def test_client_is_a_github_api(client: GitHubClient) -> None:
    api: GitHubApi = client
    assert api.default_branch() == "main"


def test_issues_all_pages_with_labels_and_no_pulls(gh: FakeGitHub, client: GitHubClient) -> None:
    for n in range(5):
        gh.add_issue(f"task {n}", f"body {n}", ("ready", "pm") if n % 2 == 0 else ("ready",))
    client.create_pull("work", "main", "release", "summary")
    found = client.issues(labels=("ready", "pm"))
    assert [(i.number, i.title, i.body, i.labels) for i in found] == [
        (1, "task 0", "body 0", ("ready", "pm")),
        (3, "task 2", "body 2", ("ready", "pm")),
        (5, "task 4", "body 4", ("ready", "pm")),
    ]
    assert [i.number for i in client.issues()] == [1, 2, 3, 4, 5]
    pages = [r for r in gh.calls("GET", "/issues") if "labels" not in r.query]
    assert len(pages) == 3


def test_create_and_update_issue(gh: FakeGitHub, client: GitHubClient) -> None:
    made = client.create_issue("task-1: x", "body", ("pm-agent", "state:ready"))
    assert (made.number, made.state, made.labels) == (1, "open", ("pm-agent", "state:ready"))
    assert made.html_url.endswith("/acme/app/issues/1")
    moved = client.update_issue(1, labels=("pm-agent", "state:done"), state="closed")
    assert (moved.title, moved.body, moved.state, moved.labels) == (
        "task-1: x",
        "body",
        "closed",
        ("pm-agent", "state:done"),
    )
    assert gh.calls("PATCH")[-1].body == {"labels": ["pm-agent", "state:done"], "state": "closed"}
    with pytest.raises(GitHubError, match="not open or closed"):
        client.update_issue(1, state="merged")


def test_comments_all_pages_oldest_first(gh: FakeGitHub, client: GitHubClient) -> None:
    number = gh.add_issue("q")
    for n in range(5):
        gh.add_comment(number, f"c{n}", user="ann")
    mine = client.create_comment(number, "from pm")
    assert (mine.issue_number, mine.author, mine.body) == (number, BOT, "from pm")
    listed = client.comments(number)
    assert [c.body for c in listed] == ["c0", "c1", "c2", "c3", "c4", "from pm"]
    assert listed[0].created_at.endswith("Z")


def test_new_comments_conditional_and_since(gh: FakeGitHub, client: GitHubClient) -> None:
    now = [1_700_000_000.0]
    gh.clock = lambda: now[0]
    number = gh.add_issue("q")
    for n in range(3):
        gh.add_comment(number, f"early {n}", user="ann")
    first = client.new_comments(None)
    assert first is not None
    assert [c.body for c in first] == ["early 0", "early 1", "early 2"]
    assert client.new_comments(None) is None, "unchanged: the ETag made it a 304"
    assert gh.calls("GET", "/issues/comments")[-1].status == 304
    now[0] += 60
    gh.add_comment(number, "later", user="bob")
    since = first[-1].created_at
    assert [c.body for c in client.new_comments(None) or []] == ["early 0", "early 1", "early 2", "later"]
    later = client.new_comments("2023-11-14T22:13:30Z")
    assert [(c.body, c.author, c.issue_number) for c in later or []] == [("later", "bob", number)]
    assert since < "2023-11-14T22:13:30Z"


def test_can_answer_by_role(gh: FakeGitHub, client: GitHubClient) -> None:
    for login, role in [("ada", "admin"), ("mo", "maintain"), ("wu", "write"), ("tri", "triage"), ("rea", "read")]:
        gh.set_permission(login, role)
    assert [client.can_answer(x) for x in ("ada", "mo", "wu", "tri", "rea", "ghost")] == [
        True,
        True,
        True,
        False,
        False,
        False,
    ]


def test_pull_found_again_not_duplicated(gh: FakeGitHub, client: GitHubClient) -> None:
    assert client.find_pull("pm/p1/work", "main") is None
    made = client.create_pull("pm/p1/work", "main", "Release p1", "summary")
    assert (made.head, made.base) == ("pm/p1/work", "main")
    assert client.find_pull("pm/p1/work", "main") == made
    assert client.find_pull("pm/p1/work", "develop") is None
    assert gh.calls("GET", "/pulls")[0].query["head"] == "acme:pm/p1/work"
    with pytest.raises(GitHubError, match="already exists") as dup:
        client.create_pull("pm/p1/work", "main", "Release p1", "summary")
    assert (dup.value.status, dup.value.transient) == (422, False)


def test_server_errors_are_transient(gh: FakeGitHub, client: GitHubClient) -> None:
    gh.fail_next(1, 502)
    with pytest.raises(GitHubError) as err:
        client.default_branch()
    assert (err.value.status, err.value.transient, err.value.retry_at) == (502, True, None)
    assert client.default_branch() == "main"
    assert len(gh.calls("GET")) == 2, "githubkit's own retry is off: the outbox decides"


def test_rate_limit_gives_the_reset(gh: FakeGitHub, client: GitHubClient) -> None:
    reset = gh.rate_limit(120)
    with pytest.raises(GitHubError) as err:
        client.issues()
    assert err.value.status == 403
    assert err.value.transient
    assert err.value.retry_at == float(int(reset) + 1)


def test_secondary_rate_limit_gives_retry_after(gh: FakeGitHub, client: GitHubClient) -> None:
    now = [1_800_000_000.0]
    gh.clock = lambda: now[0]
    gh.rate_limit(90, secondary=True)
    before = time.time()
    with pytest.raises(GitHubError, match="secondary rate limit") as err:
        client.create_comment(gh.add_issue("q"), "hi")
    assert (err.value.status, err.value.transient) == (403, True)
    assert err.value.retry_at is not None
    assert before + 90 <= err.value.retry_at <= time.time() + 90
    assert gh.comment_list == [], "nothing was written"


def test_forbidden_without_rate_limit_is_not_transient(gh: FakeGitHub, client: GitHubClient) -> None:
    gh.fail_next(1, 403)
    with pytest.raises(GitHubError) as err:
        client.default_branch()
    assert (err.value.status, err.value.retry_at, err.value.transient) == (403, None, False)


def test_not_found_and_bad_token_are_not_transient(gh: FakeGitHub) -> None:
    with pytest.raises(GitHubError) as err:
        GitHubClient("acme/other", gh.url, TOKEN).default_branch()
    assert (err.value.status, err.value.transient) == (404, False)
    with pytest.raises(GitHubError, match="Bad credentials") as bad:
        GitHubClient("acme/app", gh.url, "wrong").default_branch()
    assert bad.value.status == 401


def test_unreachable_is_transient_with_no_status() -> None:
    with FakeGitHub("acme/app", token=TOKEN) as fake:
        url = fake.url
    with pytest.raises(GitHubError, match="unreachable") as err:
        GitHubClient("acme/app", url, TOKEN, timeout_s=2).default_branch()
    assert (err.value.status, err.value.transient) == (None, True)


def test_token_never_in_logs_errors_or_repr(gh: FakeGitHub, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    client = GitHubClient("acme/app", gh.url, TOKEN)
    gh.add_issue("x")
    client.issues()
    client.create_comment(1, "hi")
    messages = []
    for fault in (lambda: gh.fail_next(1, 502), lambda: gh.rate_limit(5), lambda: gh.rate_limit(0)):
        fault()
        try:
            client.default_branch()
        except GitHubError as exc:
            messages += [str(exc), repr(exc), repr(exc.__cause__), repr(exc.__context__)]
    assert len(messages) == 8
    text = "\n".join([*messages, repr(client), caplog.text, *(repr(r) for r in gh.requests)])
    assert "/repos/acme/app" in caplog.text, "httpx logged the requests (so the check below saw them)"
    assert TOKEN not in text


def test_from_config_reads_the_named_variable(gh: FakeGitHub) -> None:
    config = GitHubConfig(repo="acme/app", api_url=gh.url, token_env="PM_TEST_TOKEN")
    assert GitHubClient.from_config(config, {"PM_TEST_TOKEN": TOKEN}).default_branch() == "main"
    with pytest.raises(ConfigError, match="PM_TEST_TOKEN is not set"):
        GitHubClient.from_config(config, {})
    with pytest.raises(ConfigError, match="not owner/name"):
        GitHubClient("acme", gh.url, TOKEN)
