"""`GitHubClient`: the `GitHubApi` seam implemented with githubkit's sync REST API.

githubkit is generated from GitHub's OpenAPI description, so every call and every response is typed (mypy sees the
fields we read), it has a sync and an async API, and it is maintained against GitHub's schema releases. Its own
retrying, throttling and HTTP cache are switched off: the bridge's outbox decides when to retry (a client that
slept through a rate-limit window would stall the run), and `new_comments` sends its own conditional request.

The token lives only inside githubkit's auth object: it is never logged, never put in an error message, never
written anywhere (`__repr__` leaves it out).
"""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Literal, TypeVar

import httpx
import pydantic
from githubkit import GitHub, TokenAuthStrategy
from githubkit.exception import GitHubException, RequestError, RequestFailed
from githubkit.response import Response
from githubkit.utils import UNSET
from githubkit_schemas.latest.models import Issue as GhIssue
from githubkit_schemas.latest.models import IssueComment as GhComment
from githubkit_schemas.latest.models import PullRequest as GhPull
from githubkit_schemas.latest.models import PullRequestSimple as GhPullSimple
from githubkit_schemas.latest.models import ReposOwnerRepoIssuesIssueNumberPatchResponse200 as GhIssueUpdated
from githubkit_schemas.latest.types import ReposOwnerRepoIssuesIssueNumberPatchBodyType

from pm_agent.config import GitHubConfig
from pm_agent.errors import ConfigError
from pm_agent.github.api import Comment, GitHubError, Issue, PullRequest

T = TypeVar("T")

WRITE_ROLES = frozenset({"admin", "maintain", "write"})
"""Collaborator roles that may answer (GitHub reports `maintain` as permission `write`, role_name `maintain`)."""

IssueState = Literal["open", "closed", "all"]


class GitHubClient:
    """The bridge's GitHub calls on one repository, through githubkit; every failure is a GitHubError."""

    def __init__(self, repo: str, api_url: str, token: str, *, per_page: int = 100, timeout_s: float = 30) -> None:
        owner, sep, name = repo.partition("/")
        if not sep or not owner or not name or "/" in name:
            raise ConfigError(f"github repo {repo!r} is not owner/name")
        self.owner, self.name = owner, name
        self.api_url = api_url
        self.per_page = per_page
        self._comments_etag: tuple[str | None, str] | None = None
        """(since, ETag) of the last repository-wide comments list, for If-None-Match."""
        self._gh: GitHub[TokenAuthStrategy] = GitHub(
            TokenAuthStrategy(token),
            base_url=api_url,
            user_agent="pm-agent",
            timeout=timeout_s,
            http_cache=False,
            auto_retry=False,
        )

    @classmethod
    def from_config(cls, config: GitHubConfig, env: Mapping[str, str] | None = None) -> GitHubClient:
        """The client for a `github:` config section, its token read from the variable `token_env` names."""
        if config.repo is None:
            raise ConfigError("github.repo is not set")
        token = (os.environ if env is None else env).get(config.token_env, "")
        if not token:
            raise ConfigError(f"github: the token variable {config.token_env} is not set")
        return cls(config.repo, config.api_url, token)

    def __repr__(self) -> str:
        return f"GitHubClient({self.owner}/{self.name} at {self.api_url})"

    # -- issues

    def issues(self, *, labels: tuple[str, ...] = (), state: str = "all") -> list[Issue]:
        """Every issue (all pages) carrying all of `labels`, pull requests left out."""
        with _mapped(f"list issues of {self.owner}/{self.name}"):
            pages: Iterator[GhIssue] = self._gh.rest.paginate(
                self._gh.rest.issues.list_for_repo,
                owner=self.owner,
                repo=self.name,
                state=_issue_state(state),
                labels=",".join(labels) if labels else UNSET,
                direction="asc",
                per_page=self.per_page,
            )
            return [_issue(i) for i in pages if not i.pull_request]

    def create_issue(self, title: str, body: str, labels: tuple[str, ...]) -> Issue:
        """Open an issue."""
        with _mapped(f"create issue {title!r}"):
            resp = self._gh.rest.issues.create(self.owner, self.name, title=title, body=body, labels=list(labels))
            return _issue(resp.parsed_data)

    def update_issue(
        self,
        number: int,
        *,
        title: str | None = None,
        body: str | None = None,
        labels: tuple[str, ...] | None = None,
        state: str | None = None,
    ) -> Issue:
        """Change what is given; labels replace the issue's labels."""
        data: ReposOwnerRepoIssuesIssueNumberPatchBodyType = {}
        if title is not None:
            data["title"] = title
        if body is not None:
            data["body"] = body
        if labels is not None:
            data["labels"] = list(labels)
        if state in ("open", "closed"):
            data["state"] = "open" if state == "open" else "closed"
        elif state is not None:
            raise GitHubError(f"GitHub: issue state {state!r} is not open or closed", status=400)
        with _mapped(f"update issue #{number}"):
            resp = self._gh.rest.issues.update(self.owner, self.name, number, data=data)
            return _issue(resp.parsed_data)

    def label_exists(self, name: str) -> bool:
        """Whether the repository has the label `name` (a plan source naming an unknown one is refused)."""
        try:
            with _mapped(f"get label {name!r}"):
                self._gh.rest.issues.get_label(self.owner, self.name, name)
        except GitHubError as exc:
            if exc.status == 404:
                return False
            raise
        return True

    # -- comments

    def comments(self, number: int) -> list[Comment]:
        """Every comment on one issue (all pages), oldest first."""
        with _mapped(f"list comments of #{number}"):
            pages: Iterator[GhComment] = self._gh.rest.paginate(
                self._gh.rest.issues.list_comments,
                owner=self.owner,
                repo=self.name,
                issue_number=number,
                per_page=self.per_page,
            )
            return [_comment(c) for c in pages]

    def create_comment(self, number: int, body: str) -> Comment:
        """Comment on an issue."""
        with _mapped(f"comment on #{number}"):
            resp = self._gh.rest.issues.create_comment(self.owner, self.name, number, body=body)
            return _comment(resp.parsed_data)

    def new_comments(self, since: str | None) -> list[Comment] | None:
        """Repository-wide issue comments updated at or after `since` (conditional request: None when unchanged).

        The first page is asked with the ETag of the last answer to the same `since`: a 304 costs no rate limit.
        Newest first, so that any new or edited comment changes the first page (and so its ETag); returned oldest
        first.
        """
        headers: dict[str, str] = {}
        if self._comments_etag is not None and self._comments_etag[0] == since:
            headers["If-None-Match"] = self._comments_etag[1]
        with _mapped("list new comments"):
            first = self._gh.rest.issues.list_comments_for_repo(
                self.owner,
                self.name,
                sort="updated",
                direction="desc",
                since=_parse_time(since) if since is not None else UNSET,
                per_page=self.per_page,
                headers=headers,
            )
            if first.status_code == 304:
                return None
            if etag := first.headers.get("etag"):
                self._comments_etag = (since, etag)
            page: list[GhComment] = first.parsed_data
            found = [_comment(c) for c in page]
            for page in self._next_pages(first, list[GhComment]):
                found.extend(_comment(c) for c in page)
            return found[::-1]

    def _next_pages(self, first: Response[Any], model: type[T]) -> Iterator[T]:
        """Follow the Link header's rel="next" from `first` (without the conditional header: each page has its own)."""
        link = _next_link(first)
        while link is not None:
            resp = self._gh.request("GET", link, response_model=model)
            yield resp.parsed_data
            link = _next_link(resp)

    # -- people, repository, pull requests

    def can_answer(self, login: str) -> bool:
        """Whether `login` has write access (write, maintain or admin) to the repository."""
        try:
            with _mapped(f"permission of {login}"):
                resp = self._gh.rest.repos.get_collaborator_permission_level(self.owner, self.name, login)
                perm = resp.parsed_data
        except GitHubError as exc:
            if exc.status == 404:  # not a user GitHub knows: nobody to trust
                return False
            raise
        return perm.permission in WRITE_ROLES or perm.role_name in WRITE_ROLES

    def default_branch(self) -> str:
        """The repository's default branch."""
        with _mapped(f"get repository {self.owner}/{self.name}"):
            return self._gh.rest.repos.get(self.owner, self.name).parsed_data.default_branch

    def find_pull(self, head: str, base: str) -> PullRequest | None:
        """The open pull request from `head` (a branch of this repository) into `base`, if there is one."""
        with _mapped(f"find pull request {head} -> {base}"):
            pages: Iterator[GhPullSimple] = self._gh.rest.paginate(
                self._gh.rest.pulls.list,
                owner=self.owner,
                repo=self.name,
                state="open",
                head=f"{self.owner}:{head}",
                base=base,
                per_page=self.per_page,
            )
            for pull in pages:
                if pull.head.ref == head and pull.base.ref == base:
                    return _pull(pull)
        return None

    def create_pull(self, head: str, base: str, title: str, body: str) -> PullRequest:
        """Open a pull request from `head` into `base` (never merged by pm-agent)."""
        with _mapped(f"open pull request {head} -> {base}"):
            resp = self._gh.rest.pulls.create(self.owner, self.name, head=head, base=base, title=title, body=body)
            return _pull(resp.parsed_data)


@contextmanager
def _mapped(what: str) -> Iterator[None]:
    """Turn githubkit's, httpx's and pydantic's errors into GitHubError; the message never carries a header."""
    try:
        yield
    except RequestFailed as exc:
        resp = exc.response
        raise GitHubError(
            f"GitHub: {what}: {resp.status_code} {_message(resp)}",
            status=resp.status_code,
            retry_at=_retry_at(resp.headers) if resp.status_code in (403, 429) else None,
        ) from None
    except RequestError as exc:
        raise GitHubError(f"GitHub: {what}: unreachable ({type(exc.exc).__name__})", status=None) from None
    except (GitHubException, httpx.HTTPError) as exc:
        raise GitHubError(f"GitHub: {what}: {type(exc).__name__}", status=None) from None
    except pydantic.ValidationError as exc:
        # A 2xx whose body is not what GitHub documents: retrying will not fix it.
        raise GitHubError(f"GitHub: {what}: unexpected response ({exc.error_count()} bad fields)", status=200) from None


def _message(resp: Response[Any]) -> str:
    try:
        body = resp.json()
    except ValueError:
        return resp.reason_phrase
    if not isinstance(body, dict) or not isinstance(body.get("message"), str):
        return resp.reason_phrase
    details = [
        e["message"] for e in body.get("errors") or () if isinstance(e, dict) and isinstance(e.get("message"), str)
    ]
    return "; ".join([str(body["message"]), *details])


def _retry_at(headers: httpx.Headers, now: Callable[[], float] = time.time) -> float | None:
    """When a rate-limited call may be made again: retry-after (seconds) first, then x-ratelimit-reset (epoch)."""
    retry_after = headers.get("retry-after")
    if retry_after is not None and retry_after.strip().isdigit():
        return now() + int(retry_after)
    if headers.get("x-ratelimit-remaining") == "0":
        reset = headers.get("x-ratelimit-reset")
        if reset is not None and reset.strip().isdigit():
            return float(reset)
        return now() + 60  # GitHub's advice when it gives no reset: wait at least a minute
    return None


def _next_link(resp: Response[Any]) -> httpx.URL | None:
    link = resp.raw_response.links.get("next")
    url = link.get("url") if link else None
    return httpx.URL(url) if url else None


def _parse_time(text: str) -> dt.datetime:
    try:
        return dt.datetime.fromisoformat(text)
    except ValueError:
        raise GitHubError(f"GitHub: `since` {text!r} is not an ISO 8601 time", status=400) from None


def _issue_state(state: str) -> IssueState:
    if state not in ("open", "closed", "all"):
        raise GitHubError(f"GitHub: issue state {state!r} is not open, closed or all", status=400)
    return state  # type: ignore[return-value]


def _issue(i: GhIssue | GhIssueUpdated) -> Issue:
    labels = tuple(lab if isinstance(lab, str) else (lab.name or "") for lab in i.labels)
    return Issue(
        number=i.number,
        title=i.title,
        body=i.body or "",
        state=i.state,
        labels=tuple(lab for lab in labels if lab),
        html_url=i.html_url,
    )


def _comment(c: GhComment) -> Comment:
    return Comment(
        id=c.id,
        issue_number=int(c.issue_url.rstrip("/").rsplit("/", 1)[-1]),
        author=c.user.login if c.user is not None else "",
        body=c.body or "",
        created_at=c.created_at.isoformat().replace("+00:00", "Z"),
        html_url=c.html_url,
    )


def _pull(p: GhPull | GhPullSimple) -> PullRequest:
    return PullRequest(number=p.number, head=p.head.ref, base=p.base.ref, html_url=p.html_url)
