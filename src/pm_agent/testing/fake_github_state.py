"""The repository `FakeGitHub` holds (issues, comments, people) and how it pages a list, apart from serving."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlencode

from pm_agent.testing.fake_github_docs import BOT, CommentRec, Docs, IssueRec, JsonDoc, Reply

DEFAULT_PER_PAGE = 5
"""Smaller than GitHub's 30, so a handful of issues already spans pages."""


def error(message: str) -> JsonDoc:
    """GitHub's error document."""
    return {"message": message, "documentation_url": "https://docs.github.com/rest", "status": "error"}


class RepoState:
    """One fake repository's issues, pull requests, comments and collaborators; every change under `lock`."""

    def __init__(
        self,
        repo: str = "acme/app",
        *,
        default_branch: str = "main",
        git_dir: Path | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.owner, _, self.name = repo.partition("/")
        self.git_dir = git_dir
        """A bare repository standing for GitHub's copy: pull requests need their head branch pushed there."""
        self.clock = clock
        self.lock = threading.RLock()
        self.issues: dict[int, IssueRec] = {}
        self.comment_list: list[CommentRec] = []
        self.permissions: dict[str, str] = {BOT: "admin", self.owner: "admin"}
        self._next_comment_id = 9001
        self.extra_labels: set[str] = set()
        self.docs = Docs("http://127.0.0.1:0", self.owner, self.name, default_branch)

    def now(self) -> str:
        """The fake's clock as GitHub writes times (UTC, seconds, Z)."""
        return dt.datetime.fromtimestamp(self.clock(), tz=dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    def add_issue(self, title: str, body: str = "", labels: tuple[str, ...] = (), *, user: str = "octocat") -> int:
        """An issue opened by `user` (not through the API); returns its number."""
        with self.lock:
            number = len(self.issues) + 1
            now = self.now()
            self.issues[number] = IssueRec(number, title, body, user, list(labels), now, now)
            return number

    def add_comment(self, number: int, body: str, *, user: str = "octocat") -> int:
        """A comment written by `user` on issue `number`; returns its id."""
        with self.lock:
            rec = self.issues[number]
            cid = self._next_comment_id
            self._next_comment_id += 1
            now = self.now()
            self.comment_list.append(CommentRec(cid, number, user, body, now, now))
            rec.comments += 1
            rec.updated_at = now
            self.permissions.setdefault(user, "read")
            return cid

    def labels(self) -> set[str]:
        """The repository's labels: those on an issue, and those added with `add_label`."""
        with self.lock:
            return self.extra_labels | {lab for rec in self.issues.values() for lab in rec.labels}

    def add_label(self, name: str) -> None:
        """A label that no issue carries (yet)."""
        with self.lock:
            self.extra_labels.add(name)

    def set_permission(self, login: str, permission: str) -> None:
        """Give `login` a role: admin, maintain, write, triage, read or none."""
        with self.lock:
            self.permissions[login] = permission

    def comment(self, cid: int) -> CommentRec:
        """The comment with this id."""
        with self.lock:
            return next(c for c in self.comment_list if c.id == cid)

    def branch_sha(self, branch: str) -> str | None:
        """The commit `branch` points at in `git_dir` (None: no such branch, or no git_dir)."""
        if self.git_dir is None:
            return None
        done = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"],
            cwd=self.git_dir,
            capture_output=True,
            text=True,
            check=False,
        )
        return done.stdout.strip() or None

    def contains(self, base_sha: str, head_sha: str) -> bool:
        """Whether commit `base_sha` already contains `head_sha` in `git_dir` (False without one)."""
        if self.git_dir is None:
            return False
        done = subprocess.run(
            ["git", "merge-base", "--is-ancestor", head_sha, base_sha],
            cwd=self.git_dir,
            capture_output=True,
            check=False,
        )
        return done.returncode == 0

    def page(
        self,
        path: str,
        query: dict[str, str],
        items: list[JsonDoc],
        *,
        etag: bool = False,
        if_none_match: str | None = None,
    ) -> Reply:
        """One page of `items` with GitHub's Link header (and an ETag of the page when `etag`)."""
        try:
            per_page = min(max(int(query.get("per_page", DEFAULT_PER_PAGE)), 1), 100)
            number = max(int(query.get("page", "1")), 1)
        except ValueError:
            return Reply(422, error("Validation Failed"))
        last = max((len(items) + per_page - 1) // per_page, 1)
        chunk = items[(number - 1) * per_page : number * per_page]
        links = []

        def link(n: int, rel: str) -> str:
            params = urlencode(query | {"page": str(n), "per_page": str(per_page)})
            return f'<{self.docs.base}{path}?{params}>; rel="{rel}"'

        if number > 1:
            links += [link(number - 1, "prev"), link(1, "first")]
        if number < last:
            links += [link(number + 1, "next"), link(last, "last")]
        headers = {"link": ", ".join(links)} if links else {}
        if etag:
            tag = '"' + hashlib.sha1(json.dumps(chunk, sort_keys=True).encode()).hexdigest() + '"'
            if if_none_match == tag:
                return Reply(304, None, {"etag": tag})
            headers["etag"] = tag
        return Reply(200, chunk, headers)
