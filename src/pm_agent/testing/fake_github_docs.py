"""The JSON documents `FakeGitHub` answers with: GitHub's field names and shapes, with every field githubkit's models
require (tests/github/test_fake_github.py parses each one with the matching githubkit model)."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any

JsonDoc = dict[str, Any]

BOT = "pm-agent-bot"
"""The login the token belongs to: issues, comments and pull requests made through the API are by this user."""


@dataclass
class Reply:
    """What the fake answers: a status, a JSON document (or none) and extra headers."""

    status: int
    doc: Any = None
    headers: dict[str, str] | None = None


_REPO_URL_FIELDS = (
    "archive",
    "assignees",
    "blobs",
    "branches",
    "collaborators",
    "comments",
    "commits",
    "compare",
    "contents",
    "contributors",
    "deployments",
    "downloads",
    "events",
    "forks",
    "git_commits",
    "git_refs",
    "git_tags",
    "issue_comment",
    "issue_events",
    "issues",
    "keys",
    "labels",
    "languages",
    "merges",
    "milestones",
    "notifications",
    "pulls",
    "releases",
    "stargazers",
    "statuses",
    "subscribers",
    "subscription",
    "tags",
    "teams",
    "trees",
    "hooks",
)


@dataclass
class IssueRec:
    """An issue (or the issue side of a pull request) held by the fake."""

    number: int
    title: str
    body: str
    user: str
    labels: list[str]
    created_at: str
    updated_at: str
    state: str = "open"
    closed_at: str | None = None
    comments: int = 0
    pull: PullRec | None = None


@dataclass
class PullRec:
    """The pull-request side of an issue number."""

    head: str
    base: str
    head_sha: str = "0" * 40
    base_sha: str = "0" * 40
    merged: bool = False


@dataclass
class CommentRec:
    """An issue comment held by the fake."""

    id: int
    issue_number: int
    user: str
    body: str
    created_at: str
    updated_at: str


@dataclass
class Docs:
    """Builds documents for one repository served at `base` (the fake's URL, no trailing slash)."""

    base: str
    owner: str
    name: str
    default_branch: str = "main"
    now: str = "2026-01-01T00:00:00Z"
    _user_ids: dict[str, int] = field(default_factory=dict)

    @property
    def repo_url(self) -> str:
        """The API URL of the repository."""
        return f"{self.base}/repos/{self.owner}/{self.name}"

    def html(self, path: str = "") -> str:
        """A web URL of the repository (GitHub's html_url fields)."""
        return f"{self.base}/{self.owner}/{self.name}{path}"

    def user(self, login: str) -> JsonDoc:
        """A SimpleUser."""
        uid = self._user_ids.setdefault(login, len(self._user_ids) + 1)
        url = f"{self.base}/users/{login}"
        doc: JsonDoc = {"login": login, "id": uid, "node_id": f"U_{uid}", "avatar_url": f"{url}/avatar"}
        doc |= {"gravatar_id": "", "url": url, "html_url": f"{self.base}/{login}", "type": "User", "site_admin": False}
        for part in ("followers", "following", "gists", "starred", "subscriptions", "organizations", "repos"):
            doc[f"{part}_url"] = f"{url}/{part}"
        doc |= {"events_url": f"{url}/events", "received_events_url": f"{url}/received_events"}
        return doc

    def label(self, name: str) -> JsonDoc:
        """A label as issues and pull requests carry it."""
        lid = zlib.crc32(name.encode())
        return {
            "id": lid,
            "node_id": f"LA_{lid}",
            "url": f"{self.repo_url}/labels/{name}",
            "name": name,
            "description": None,
            "color": "ededed",
            "default": False,
            "archived_at": None,
            "archived_by": None,
        }

    def repository(self) -> JsonDoc:
        """A FullRepository (also a valid Repository, as pull requests' head.repo and base.repo)."""
        doc: JsonDoc = {
            "id": 1,
            "node_id": "R_1",
            "name": self.name,
            "full_name": f"{self.owner}/{self.name}",
            "owner": self.user(self.owner),
            "private": True,
            "html_url": self.html(),
            "description": None,
            "fork": False,
            "url": self.repo_url,
            "git_url": f"git://fake/{self.owner}/{self.name}.git",
            "ssh_url": f"git@fake:{self.owner}/{self.name}.git",
            "clone_url": f"{self.html()}.git",
            "svn_url": self.html(),
            "mirror_url": None,
            "homepage": None,
            "language": "Python",
            "size": 1,
            "default_branch": self.default_branch,
            "license": None,
            "pushed_at": self.now,
            "created_at": self.now,
            "updated_at": self.now,
        }
        for part in _REPO_URL_FIELDS:
            doc[f"{part}_url"] = f"{self.repo_url}/{part}"
        for count in ("forks", "stargazers", "watchers", "open_issues", "subscribers", "network"):
            doc[f"{count}_count"] = 0
        doc |= {"forks": 0, "open_issues": 0, "watchers": 0}
        for flag in ("has_issues", "has_projects", "has_wiki"):
            doc[flag] = True
        doc |= {"has_pages": False, "has_discussions": False, "archived": False, "disabled": False}
        return doc

    def issue(self, rec: IssueRec) -> JsonDoc:
        """An Issue (with its `pull_request` key when the number is a pull request, as GitHub lists them)."""
        url = f"{self.repo_url}/issues/{rec.number}"
        doc: JsonDoc = {
            "id": 1000 + rec.number,
            "node_id": f"I_{rec.number}",
            "url": url,
            "repository_url": self.repo_url,
            "labels_url": f"{url}/labels{{/name}}",
            "comments_url": f"{url}/comments",
            "events_url": f"{url}/events",
            "html_url": self.html(f"/issues/{rec.number}"),
            "number": rec.number,
            "state": rec.state,
            "title": rec.title,
            "body": rec.body,
            "user": self.user(rec.user),
            "labels": [self.label(n) for n in rec.labels],
            "assignee": None,
            "assignees": [],
            "milestone": None,
            "locked": False,
            "comments": rec.comments,
            "closed_at": rec.closed_at,
            "created_at": rec.created_at,
            "updated_at": rec.updated_at,
            "author_association": "OWNER",
        }
        if rec.pull is not None:
            pull_html = self.html(f"/pull/{rec.number}")
            doc["pull_request"] = {
                "url": f"{self.repo_url}/pulls/{rec.number}",
                "html_url": pull_html,
                "diff_url": f"{pull_html}.diff",
                "patch_url": f"{pull_html}.patch",
                "merged_at": None,
            }
        return doc

    def comment(self, rec: CommentRec) -> JsonDoc:
        """An IssueComment."""
        return {
            "id": rec.id,
            "node_id": f"IC_{rec.id}",
            "url": f"{self.repo_url}/issues/comments/{rec.id}",
            "html_url": self.html(f"/issues/{rec.issue_number}#issuecomment-{rec.id}"),
            "body": rec.body,
            "user": self.user(rec.user),
            "created_at": rec.created_at,
            "updated_at": rec.updated_at,
            "issue_url": f"{self.repo_url}/issues/{rec.issue_number}",
            "author_association": "OWNER",
        }

    def permission(self, login: str, permission: str) -> JsonDoc:
        """A RepositoryCollaboratorPermission (`maintain` reads as permission `write`, as GitHub reports it)."""
        legacy = {"maintain": "write", "triage": "read"}.get(permission, permission)
        user = self.user(login) | {"role_name": permission}
        return {"permission": legacy, "role_name": permission, "user": user}

    def _branch(self, ref: str, sha: str) -> JsonDoc:
        return {
            "label": f"{self.owner}:{ref}",
            "ref": ref,
            "sha": sha,
            "user": self.user(self.owner),
            "repo": self.repository(),
        }

    def pull(self, rec: IssueRec, *, full: bool) -> JsonDoc:
        """A PullRequest (`full`, as created or fetched) or a PullRequestSimple (as listed)."""
        assert rec.pull is not None, "pull() of an issue that is not a pull request"
        p = rec.pull
        url = f"{self.repo_url}/pulls/{rec.number}"
        html = self.html(f"/pull/{rec.number}")
        issue_url = f"{self.repo_url}/issues/{rec.number}"
        doc: JsonDoc = {
            "url": url,
            "id": 5000 + rec.number,
            "node_id": f"PR_{rec.number}",
            "html_url": html,
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "issue_url": issue_url,
            "commits_url": f"{url}/commits",
            "review_comments_url": f"{url}/comments",
            "review_comment_url": f"{self.repo_url}/pulls/comments{{/number}}",
            "comments_url": f"{issue_url}/comments",
            "statuses_url": f"{self.repo_url}/statuses/{p.head_sha}",
            "number": rec.number,
            "state": rec.state,
            "locked": False,
            "title": rec.title,
            "user": self.user(rec.user),
            "body": rec.body,
            "labels": [self.label(n) for n in rec.labels],
            "milestone": None,
            "created_at": rec.created_at,
            "updated_at": rec.updated_at,
            "closed_at": rec.closed_at,
            "merged_at": None,
            "merge_commit_sha": None,
            "head": self._branch(p.head, p.head_sha),
            "base": self._branch(p.base, p.base_sha),
            "_links": {
                k: {"href": v}
                for k, v in {
                    "comments": f"{issue_url}/comments",
                    "commits": f"{url}/commits",
                    "statuses": f"{self.repo_url}/statuses/{p.head_sha}",
                    "html": html,
                    "issue": issue_url,
                    "review_comments": f"{url}/comments",
                    "review_comment": f"{self.repo_url}/pulls/comments{{/number}}",
                    "self": url,
                }.items()
            },
            "author_association": "OWNER",
            "auto_merge": None,
            "draft": False,
        }
        if full:
            doc |= {
                "merged": p.merged,
                "mergeable": True,
                "mergeable_state": "clean",
                "merged_by": None,
                "comments": rec.comments,
                "review_comments": 0,
                "maintainer_can_modify": False,
                "commits": 1,
                "additions": 0,
                "deletions": 0,
                "changed_files": 0,
            }
        return doc
