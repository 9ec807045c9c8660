"""The endpoints of `FakeGitHub`: GitHub's paths, methods, status codes and validation messages."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from pm_agent.testing.fake_github_docs import BOT, IssueRec, PullRec, Reply
from pm_agent.testing.fake_github_state import RepoState as FakeGitHub

Handler = Callable[[FakeGitHub, "re.Match[str]", dict[str, str], dict[str, str], Any], Reply]
_ROUTES: list[tuple[str, re.Pattern[str], Handler]] = []


def _on(method: str, pattern: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        _ROUTES.append((method, re.compile(f"^/repos/(?P<o>[^/]+)/(?P<r>[^/]+){pattern}$"), fn))
        return fn

    return register


def route(fake: FakeGitHub, method: str, path: str, query: dict[str, str], headers: dict[str, str], body: Any) -> Reply:
    """Dispatch one authorised request; 404 for another repository or an unknown path, as GitHub answers."""
    path = path.rstrip("/") or "/"
    for verb, pattern, fn in _ROUTES:
        m = pattern.match(path)
        if m and verb == method:
            if (m["o"], m["r"]) != (fake.owner, fake.name):
                return _reply(404, _msg("Not Found"))
            return fn(fake, m, query, headers, body)
    return _reply(404, _msg("Not Found"))


def _reply(status: int, doc: Any = None, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, doc, headers)


def _msg(message: str) -> dict[str, str]:
    return {"message": message, "documentation_url": "https://docs.github.com/rest", "status": "error"}


def _invalid(message: str, field: str, resource: str) -> Reply:
    errors = [{"resource": resource, "field": field, "code": "invalid", "message": message}]
    return _reply(
        422, {"message": "Validation Failed", "errors": errors, "documentation_url": "https://docs.github.com/rest"}
    )


def _labels(body: dict[str, Any]) -> list[str] | None:
    raw = body.get("labels")
    if raw is None:
        return None
    return [lab if isinstance(lab, str) else str(lab.get("name", "")) for lab in raw]


# -- repository and people


@_on("GET", "")
def _get_repo(fake: FakeGitHub, m: re.Match[str], q: dict[str, str], h: dict[str, str], body: Any) -> Reply:
    return _reply(200, fake.docs.repository())


@_on("GET", r"/collaborators/(?P<login>[^/]+)/permission")
def _permission(fake: FakeGitHub, m: re.Match[str], q: dict[str, str], h: dict[str, str], body: Any) -> Reply:
    perm = fake.permissions.get(m["login"])
    if perm is None:
        return _reply(404, _msg(f"{m['login']} is not a user"))
    return _reply(200, fake.docs.permission(m["login"], perm))


@_on("GET", r"/labels/(?P<name>[^/]+)")
def _get_label(fake: FakeGitHub, m: re.Match[str], q: dict[str, str], h: dict[str, str], body: Any) -> Reply:
    name = unquote(m["name"])
    if name not in fake.labels():
        return _reply(404, _msg("Not Found"))
    return _reply(200, fake.docs.label(name))


# -- issues


@_on("GET", "/issues")
def _list_issues(fake: FakeGitHub, m: re.Match[str], q: dict[str, str], h: dict[str, str], body: Any) -> Reply:
    state = q.get("state", "open")
    wanted = {lab for lab in q.get("labels", "").split(",") if lab}
    found = [
        rec
        for rec in sorted(fake.issues.values(), key=lambda r: r.number, reverse=q.get("direction", "desc") == "desc")
        if (state == "all" or rec.state == state) and wanted <= set(rec.labels)
    ]
    return fake.page(m.string, q, [fake.docs.issue(rec) for rec in found])


@_on("GET", r"/issues/(?P<n>\d+)")
def _get_issue(fake: FakeGitHub, m: re.Match[str], q: dict[str, str], h: dict[str, str], body: Any) -> Reply:
    rec = fake.issues.get(int(m["n"]))
    return _reply(200, fake.docs.issue(rec)) if rec else _reply(404, _msg("Not Found"))


@_on("POST", "/issues")
def _create_issue(fake: FakeGitHub, m: re.Match[str], q: dict[str, str], h: dict[str, str], body: Any) -> Reply:
    if not isinstance(body, dict) or not body.get("title"):
        return _invalid("title wasn't supplied", "title", "Issue")
    number = fake.add_issue(str(body["title"]), str(body.get("body") or ""), tuple(_labels(body) or ()), user=BOT)
    return _reply(201, fake.docs.issue(fake.issues[number]))


@_on("PATCH", r"/issues/(?P<n>\d+)")
def _update_issue(fake: FakeGitHub, m: re.Match[str], q: dict[str, str], h: dict[str, str], body: Any) -> Reply:
    rec = fake.issues.get(int(m["n"]))
    if rec is None:
        return _reply(404, _msg("Not Found"))
    if not isinstance(body, dict):
        return _reply(400, _msg("Problems parsing JSON"))
    if body.get("state") not in (None, "open", "closed"):
        return _invalid("state is not open or closed", "state", "Issue")
    rec.title = str(body.get("title", rec.title))
    rec.body = str(body.get("body", rec.body))
    rec.labels = (_labels(body) or []) if "labels" in body else rec.labels
    if body.get("state") is not None and body["state"] != rec.state:
        rec.state = str(body["state"])
        rec.closed_at = fake.now() if rec.state == "closed" else None
    rec.updated_at = fake.now()
    return _reply(200, fake.docs.issue(rec))


# -- comments


@_on("GET", "/issues/comments")
def _repo_comments(fake: FakeGitHub, m: re.Match[str], q: dict[str, str], h: dict[str, str], body: Any) -> Reply:
    found = list(fake.comment_list)
    if "since" in q:
        try:
            since = dt.datetime.fromisoformat(q["since"])
        except ValueError:
            return _invalid("since is not an ISO 8601 time", "since", "IssueComment")
        found = [c for c in found if dt.datetime.fromisoformat(c.updated_at) >= since]
    key = (lambda c: (c.updated_at, c.id)) if q.get("sort") == "updated" else (lambda c: (c.created_at, c.id))
    found.sort(key=key, reverse=q.get("direction", "asc") == "desc")
    return fake.page(
        m.string, q, [fake.docs.comment(c) for c in found], etag=True, if_none_match=h.get("if-none-match")
    )


@_on("GET", r"/issues/(?P<n>\d+)/comments")
def _issue_comments(fake: FakeGitHub, m: re.Match[str], q: dict[str, str], h: dict[str, str], body: Any) -> Reply:
    number = int(m["n"])
    if number not in fake.issues:
        return _reply(404, _msg("Not Found"))
    found = [fake.docs.comment(c) for c in fake.comment_list if c.issue_number == number]
    return fake.page(m.string, q, found)


@_on("POST", r"/issues/(?P<n>\d+)/comments")
def _create_comment(fake: FakeGitHub, m: re.Match[str], q: dict[str, str], h: dict[str, str], body: Any) -> Reply:
    number = int(m["n"])
    if number not in fake.issues:
        return _reply(404, _msg("Not Found"))
    if not isinstance(body, dict) or not isinstance(body.get("body"), str):
        return _invalid("body wasn't supplied", "body", "IssueComment")
    cid = fake.add_comment(number, body["body"], user=BOT)
    return _reply(201, fake.docs.comment(fake.comment(cid)))


# -- pull requests


def _open_pull(fake: FakeGitHub, head: str, base: str) -> IssueRec | None:
    for rec in fake.issues.values():
        if rec.pull is not None and rec.state == "open" and (rec.pull.head, rec.pull.base) == (head, base):
            return rec
    return None


@_on("GET", "/pulls")
def _list_pulls(fake: FakeGitHub, m: re.Match[str], q: dict[str, str], h: dict[str, str], body: Any) -> Reply:
    state = q.get("state", "open")
    head = q.get("head")
    if head is not None and ":" in head:
        owner, _, head = head.partition(":")
        if owner != fake.owner:
            return fake.page(m.string, q, [])
    found = [
        fake.docs.pull(rec, full=False)
        for rec in sorted(fake.issues.values(), key=lambda r: r.number, reverse=True)
        if rec.pull is not None
        and (state == "all" or rec.state == state)
        and (head is None or rec.pull.head == head)
        and ("base" not in q or rec.pull.base == q["base"])
    ]
    return fake.page(m.string, q, found)


@_on("GET", r"/pulls/(?P<n>\d+)")
def _get_pull(fake: FakeGitHub, m: re.Match[str], q: dict[str, str], h: dict[str, str], body: Any) -> Reply:
    rec = fake.issues.get(int(m["n"]))
    if rec is None or rec.pull is None:
        return _reply(404, _msg("Not Found"))
    return _reply(200, fake.docs.pull(rec, full=True))


@_on("POST", "/pulls")
def _create_pull(fake: FakeGitHub, m: re.Match[str], q: dict[str, str], h: dict[str, str], body: Any) -> Reply:
    if not isinstance(body, dict) or not body.get("head") or not body.get("base") or not body.get("title"):
        return _invalid("head, base and title are required", "head", "PullRequest")
    head, base = str(body["head"]).split(":")[-1], str(body["base"])
    head_sha, base_sha = fake.branch_sha(head), fake.branch_sha(base)
    if fake.git_dir is not None and head_sha is None:
        return _invalid("invalid", "head", "PullRequest")
    if fake.git_dir is not None and base_sha is None:
        return _invalid("invalid", "base", "PullRequest")
    if head_sha is not None and base_sha is not None and (head_sha == base_sha or fake.contains(base_sha, head_sha)):
        # GitHub's answer when the base already has every commit of the head (as after a merge into it)
        return _invalid(f"No commits between {base} and {head}", "head", "PullRequest")
    if _open_pull(fake, head, base) is not None:
        return _invalid(f"A pull request already exists for {fake.owner}:{head}.", "head", "PullRequest")
    number = fake.add_issue(str(body["title"]), str(body.get("body") or ""), user=BOT)
    rec = fake.issues[number]
    rec.pull = PullRec(head, base, head_sha or "1" * 40, base_sha or "0" * 40)
    return _reply(201, fake.docs.pull(rec, full=True))


@_on("PUT", r"/pulls/(?P<n>\d+)/merge")
def _merge_pull(fake: FakeGitHub, m: re.Match[str], q: dict[str, str], h: dict[str, str], body: Any) -> Reply:
    # Served so that a merge attempt is recorded and visible to the test that asserts there is none.
    rec = fake.issues.get(int(m["n"]))
    if rec is None or rec.pull is None:
        return _reply(404, _msg("Not Found"))
    rec.pull.merged, rec.state, rec.closed_at = True, "closed", fake.now()
    return _reply(200, {"sha": rec.pull.head_sha, "merged": True, "message": "Pull Request successfully merged"})
