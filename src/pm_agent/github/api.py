"""The seam between the bridge and GitHub: the calls the bridge makes, and the data it reads back.

`client.GitHubClient` implements it with githubkit against api.github.com, GitHub Enterprise or the local fake in
`pm_agent.testing.fake_github`; the bridge (`outbox`, `bridge`) only ever sees this Protocol.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from pm_agent.errors import PmAgentError


class GitHubError(PmAgentError):
    """A GitHub call failed; `transient` ones (5xx, rate limit, network) are retried, the others are not."""

    def __init__(self, message: str, *, status: int | None = None, retry_at: float | None = None) -> None:
        self.status = status
        self.retry_at = retry_at
        """Epoch seconds before which no call should be made (a rate limit's reset), when GitHub said so."""
        super().__init__(message)

    @property
    def transient(self) -> bool:
        """A network failure, a 5xx or a rate limit: the same call may succeed later."""
        return self.status is None or self.status >= 500 or self.status == 429 or self.retry_at is not None


@dataclass(frozen=True)
class Issue:
    """An issue as the bridge needs it (pull requests are never returned as issues)."""

    number: int
    title: str
    body: str
    state: str
    """"open" or "closed"."""
    labels: tuple[str, ...]
    html_url: str


@dataclass(frozen=True)
class Comment:
    """An issue comment."""

    id: int
    issue_number: int
    author: str
    body: str
    created_at: str
    """ISO 8601, as GitHub gives it."""
    html_url: str


@dataclass(frozen=True)
class PullRequest:
    """A pull request the bridge opened or found again."""

    number: int
    head: str
    base: str
    html_url: str


class GitHubApi(Protocol):
    """The GitHub calls of the bridge; every method raises GitHubError on failure."""

    def issues(self, *, labels: tuple[str, ...] = (), state: str = "all") -> list[Issue]:
        """Every issue (all pages) carrying all of `labels`, pull requests left out."""
        ...

    def create_issue(self, title: str, body: str, labels: tuple[str, ...]) -> Issue:
        """Open an issue."""
        ...

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
        ...

    def comments(self, number: int) -> list[Comment]:
        """Every comment on one issue (all pages), oldest first."""
        ...

    def create_comment(self, number: int, body: str) -> Comment:
        """Comment on an issue."""
        ...

    def new_comments(self, since: str | None) -> list[Comment] | None:
        """Repository-wide issue comments updated at or after `since` (conditional request: None when unchanged)."""
        ...

    def can_answer(self, login: str) -> bool:
        """Whether `login` has write access (write, maintain or admin) to the repository."""
        ...

    def default_branch(self) -> str:
        """The repository's default branch."""
        ...

    def find_pull(self, head: str, base: str) -> PullRequest | None:
        """The open pull request from `head` into `base`, if there is one."""
        ...

    def create_pull(self, head: str, base: str, title: str, body: str) -> PullRequest:
        """Open a pull request from `head` into `base` (never merged by pm-agent)."""
        ...
