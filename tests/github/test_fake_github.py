"""The fake GitHub itself, over plain HTTP: paths, status codes, paging, ETag, faults, and every JSON document parsed
with the githubkit model GitHub's OpenAPI description gives for that endpoint."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from githubkit_schemas.latest.models import (
    BasicError,
    FullRepository,
    Issue,
    IssueComment,
    Label,
    PullRequest,
    PullRequestSimple,
    RepositoryCollaboratorPermission,
    ValidationError,
)
from pydantic import TypeAdapter

from pm_agent.testing.fake_github import BOT, FakeGitHub

TOKEN = "t0ken-for-the-fake"


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub("acme/app", token=TOKEN) as fake:
        yield fake


@pytest.fixture
def http(gh: FakeGitHub) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=gh.url, headers={"Authorization": f"token {TOKEN}"}, trust_env=False) as client:
        yield client


def parsed(model: Any, resp: httpx.Response) -> Any:
    """The response parsed with githubkit's model (raises on a missing or mistyped field)."""
    return TypeAdapter(model).validate_json(resp.content)


def test_every_document_parses_with_githubkit_models(gh: FakeGitHub, http: httpx.Client) -> None:
    assert parsed(FullRepository, http.get("/repos/acme/app")).default_branch == "main"
    resp = http.post("/repos/acme/app/issues", json={"title": "t", "body": "b", "labels": ["ready", "x"]})
    assert resp.status_code == 201
    issue = parsed(Issue, resp)
    assert (issue.number, issue.user.login, [lab.name for lab in issue.labels]) == (1, BOT, ["ready", "x"])
    assert parsed(Label, http.get("/repos/acme/app/labels/ready")).name == "ready"
    assert http.get("/repos/acme/app/labels/unknown").status_code == 404
    resp = http.patch("/repos/acme/app/issues/1", json={"state": "closed", "labels": ["done"]})
    closed = parsed(Issue, resp)
    assert (closed.state, closed.closed_at is not None, [lab.name for lab in closed.labels]) == (
        "closed",
        True,
        ["done"],
    )
    resp = http.post("/repos/acme/app/issues/1/comments", json={"body": "hello"})
    assert resp.status_code == 201
    assert parsed(IssueComment, resp).issue_url.endswith("/repos/acme/app/issues/1")
    assert [c.body for c in parsed(list[IssueComment], http.get("/repos/acme/app/issues/1/comments"))] == ["hello"]
    assert len(parsed(list[IssueComment], http.get("/repos/acme/app/issues/comments"))) == 1
    gh.set_permission("mia", "maintain")
    perm = parsed(RepositoryCollaboratorPermission, http.get("/repos/acme/app/collaborators/mia/permission"))
    assert (perm.permission, perm.role_name) == ("write", "maintain")
    resp = http.post("/repos/acme/app/pulls", json={"title": "p", "head": "feature", "base": "main", "body": "x"})
    assert resp.status_code == 201
    pull = parsed(PullRequest, resp)
    assert (pull.head.ref, pull.base.ref, pull.merged) == ("feature", "main", False)
    listed = parsed(list[PullRequestSimple], http.get("/repos/acme/app/pulls", params={"head": "acme:feature"}))
    assert [p.number for p in listed] == [pull.number]
    issues = parsed(list[Issue], http.get("/repos/acme/app/issues", params={"state": "all"}))
    assert {(i.number, bool(i.pull_request)) for i in issues} == {(1, False), (pull.number, True)}


def test_errors_have_githubs_status_and_shape(gh: FakeGitHub, http: httpx.Client) -> None:
    missing = http.get("/repos/acme/app/issues/99")
    assert missing.status_code == 404
    assert parsed(BasicError, missing).message == "Not Found"
    assert http.get("/repos/other/app").status_code == 404
    bad = http.post("/repos/acme/app/issues", json={"body": "no title"})
    assert bad.status_code == 422
    assert parsed(ValidationError, bad).message == "Validation Failed"
    assert http.get("/repos/acme/app/collaborators/nobody/permission").status_code == 404


def test_a_token_is_required(gh: FakeGitHub) -> None:
    with httpx.Client(base_url=gh.url, trust_env=False) as anonymous:
        assert anonymous.get("/repos/acme/app").status_code == 401
        wrong = anonymous.get("/repos/acme/app", headers={"Authorization": "token nope"})
        assert (wrong.status_code, wrong.json()["message"]) == (401, "Bad credentials")
    assert all(r.status == 401 for r in gh.requests)


def test_link_header_pages_with_a_small_default(gh: FakeGitHub, http: httpx.Client) -> None:
    for n in range(12):
        gh.add_issue(f"issue {n}", labels=("ready",))
    first = http.get("/repos/acme/app/issues", params={"labels": "ready", "direction": "asc"})
    assert [i["number"] for i in first.json()] == [1, 2, 3, 4, 5]
    assert first.links["next"]["url"].endswith("page=2&per_page=5") or "page=2" in first.links["next"]["url"]
    seen, url = [], str(first.url)
    while url:
        resp = http.get(url)
        seen += [i["number"] for i in resp.json()]
        url = resp.links.get("next", {}).get("url", "")
    assert seen == list(range(1, 13))
    big = http.get("/repos/acme/app/issues", params={"per_page": "100"})
    assert len(big.json()) == 12
    assert "link" not in big.headers


def test_comments_list_etag_since_and_sort(gh: FakeGitHub, http: httpx.Client) -> None:
    now = [1_700_000_000.0]
    gh.clock = lambda: now[0]
    number = gh.add_issue("q")
    gh.add_comment(number, "old", user="ann")
    first = http.get("/repos/acme/app/issues/comments", params={"sort": "updated"})
    etag = first.headers["etag"]
    again = http.get("/repos/acme/app/issues/comments", params={"sort": "updated"}, headers={"If-None-Match": etag})
    assert (again.status_code, again.content) == (304, b"")
    now[0] += 100
    gh.add_comment(number, "new", user="ann")
    changed = http.get("/repos/acme/app/issues/comments", params={"sort": "updated"}, headers={"If-None-Match": etag})
    assert changed.status_code == 200
    assert [c["body"] for c in changed.json()] == ["old", "new"]
    since = http.get("/repos/acme/app/issues/comments", params={"since": "2023-11-14T22:14:00Z"})
    assert [c["body"] for c in since.json()] == ["new"]


def test_fail_next_then_success(gh: FakeGitHub, http: httpx.Client) -> None:
    gh.fail_next(3, 502)
    assert [http.get("/repos/acme/app").status_code for _ in range(4)] == [502, 502, 502, 200]


def test_fail_after_effect_lands_the_write(gh: FakeGitHub, http: httpx.Client) -> None:
    gh.fail_next(1, 502, after_effect=True)
    assert http.post("/repos/acme/app/issues", json={"title": "t"}).status_code == 502
    assert [rec.title for rec in gh.issues.values()] == ["t"]


def test_rate_limit_window(gh: FakeGitHub, http: httpx.Client) -> None:
    reset = gh.rate_limit(30)
    limited = http.get("/repos/acme/app")
    assert limited.status_code == 403
    assert limited.headers["x-ratelimit-remaining"] == "0"
    assert int(limited.headers["x-ratelimit-reset"]) >= reset
    gh.clock = lambda: time.time() + 31
    assert http.get("/repos/acme/app").status_code == 200


def test_duplicate_pull_is_refused_and_merge_recorded(gh: FakeGitHub, http: httpx.Client) -> None:
    body = {"title": "p", "head": "work", "base": "main"}
    number = http.post("/repos/acme/app/pulls", json=body).json()["number"]
    dup = http.post("/repos/acme/app/pulls", json=body)
    assert dup.status_code == 422
    assert "already exists" in dup.json()["errors"][0]["message"]
    assert gh.calls("PUT") == []
    http.put(f"/repos/acme/app/pulls/{number}/merge")
    assert [r.path for r in gh.calls("PUT", "/merge")] == [f"/repos/acme/app/pulls/{number}/merge"]
