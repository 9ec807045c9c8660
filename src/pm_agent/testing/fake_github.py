"""A local fake of GitHub's REST API on 127.0.0.1, for the client, the bridge and end-to-end runs.

It serves the endpoints pm-agent uses with GitHub's paths, status codes, field names (documents in
`fake_github_docs`, checked against githubkit's models by the fake's own tests), Link-header pagination (a small
default page so paging is exercised; `per_page` honoured up to 100), an ETag and 304 on the repository-wide comments
list, and `since`. Every request is recorded (`requests`), so tests can assert "no merge call" or "no duplicate".

Faults and people are driven from the test: `fail_next(3, 502)`, `rate_limit(seconds)`, `set_permission(login,
"write")`, `add_comment(number, body, user=...)`, `add_issue(...)`. A request without the token gets a 401.

    with FakeGitHub("acme/app", token="t0k") as gh:
        client = GitHubClient("acme/app", gh.url, "t0k")
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from pm_agent.testing.fake_github_docs import BOT, Reply
from pm_agent.testing.fake_github_routes import route
from pm_agent.testing.fake_github_state import RepoState, error

__all__ = ["BOT", "FakeGitHub", "Recorded", "Reply"]


@dataclass(frozen=True)
class Recorded:
    """One request the fake received."""

    method: str
    path: str
    query: dict[str, str]
    body: Any
    status: int


class FakeGitHub(RepoState):
    """The fake server for one repository; a context manager serving from a daemon thread."""

    def __init__(
        self,
        repo: str = "acme/app",
        *,
        token: str = "fake-token",
        default_branch: str = "main",
        git_dir: Path | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(repo, default_branch=default_branch, git_dir=git_dir, clock=clock)
        self.token = token
        self.requests: list[Recorded] = []
        self._fail: list[tuple[int, bool]] = []
        self._limited_until: float | None = None
        self._secondary = False
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- serving

    @property
    def url(self) -> str:
        """The API base URL (api_url in pm-agent.yaml)."""
        if self._httpd is None:
            raise RuntimeError("FakeGitHub is not started")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def start(self) -> FakeGitHub:
        """Bind a free port on 127.0.0.1 and serve in a daemon thread."""
        httpd = _Server(("127.0.0.1", 0), _Handler)
        httpd.daemon_threads = True
        httpd.fake = self
        self._httpd = httpd
        self.docs.base = self.url
        self._thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), name="fake-github", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # -- driven from the test

    def fail_next(self, count: int, status: int = 502, *, after_effect: bool = False) -> None:
        """Answer the next `count` requests with `status`; `after_effect`: do the change first, then fail the reply
        (a write that landed although the caller saw an error)."""
        with self.lock:
            self._fail.extend([(status, after_effect)] * count)

    def rate_limit(self, seconds: float, *, secondary: bool = False) -> float:
        """Refuse every request for `seconds` with GitHub's primary rate-limit 403 (x-ratelimit-remaining 0 and
        x-ratelimit-reset), or its `secondary` one (403 with retry-after); returns the end (epoch)."""
        with self.lock:
            self._limited_until = self.clock() + seconds
            self._secondary = secondary
            return self._limited_until

    def calls(self, method: str, path_suffix: str = "") -> list[Recorded]:
        """The recorded requests with this method whose path ends with `path_suffix`."""
        with self.lock:
            return [r for r in self.requests if r.method == method and r.path.endswith(path_suffix)]

    # -- answering

    def handle(self, method: str, target: str, headers: dict[str, str], body: Any) -> Reply:
        """Answer one request and record it (called by the HTTP handler)."""
        split = urlsplit(target)
        path, query = split.path, dict(parse_qsl(split.query))
        with self.lock:
            reply = self._answer(method, path, query, headers, body)
            self.requests.append(Recorded(method, path, query, body, reply.status))
            reply.headers = self._rate_headers() | (reply.headers or {})
            return reply

    def _answer(self, method: str, path: str, query: dict[str, str], headers: dict[str, str], body: Any) -> Reply:
        auth = headers.get("authorization", "")
        if not auth:
            return Reply(401, error("Requires authentication"))
        if auth.split(" ", 1)[-1] != self.token:
            return Reply(401, error("Bad credentials"))
        if self._limited_until is not None and self.clock() < self._limited_until:
            if self._secondary:
                wait = str(max(int(self._limited_until - self.clock() + 0.999), 1))
                return Reply(403, error("You have exceeded a secondary rate limit."), {"retry-after": wait})
            reset = str(int(self._limited_until) + 1)
            doc = error("API rate limit exceeded for user ID 1.")
            return Reply(403, doc, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": reset})
        fault = self._fail.pop(0) if self._fail else None
        if fault is not None and not fault[1]:
            return Reply(fault[0], error("Server Error"))
        reply = route(self, method, path, query, headers, body)
        if fault is not None:
            return Reply(fault[0], error("Server Error"))
        return reply

    def _rate_headers(self) -> dict[str, str]:
        limited = self._limited_until is not None and self.clock() < self._limited_until and not self._secondary
        reset = int(self._limited_until if limited and self._limited_until else self.clock() + 3600)
        return {
            "x-ratelimit-limit": "5000",
            "x-ratelimit-remaining": "0" if limited else "4999",
            "x-ratelimit-reset": str(reset),
        }


class _Server(ThreadingHTTPServer):
    fake: FakeGitHub


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read `requests` instead."""

    def _serve(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        headers = {k.lower(): v for k, v in self.headers.items()}
        reply = self.server.fake.handle(self.command, self.path, headers, body)
        data = b"" if reply.doc is None or reply.status == 304 else json.dumps(reply.doc).encode()
        self.send_response(reply.status)
        if data:
            self.send_header("content-type", "application/json; charset=utf-8")
        self.send_header("content-length", str(len(data)))
        for key, value in (reply.headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if data:
            self.wfile.write(data)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve
