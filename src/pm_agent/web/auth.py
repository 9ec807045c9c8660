"""The dashboard's access rules: one token per store, carried in the address once and then in a cookie.

The token lives in `.pm-agent/web-token` (mode 0600), made on first use and kept, so a bookmarked
address stays valid across restarts of the server. The CSRF token of a form is derived from it: a page
served to the token holder can post, another site cannot know the value.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import os
import secrets
from pathlib import Path

from starlette.requests import Request

from pm_agent.errors import StoreError
from pm_agent.statefile import default_store_path

TOKEN_FILE = "web-token"
CSRF_HEADER = "x-csrf-token"


def token_path(repo: Path) -> Path:
    """Where the repository's dashboard token is kept."""
    return default_store_path(repo).parent / TOKEN_FILE


def load_or_create_token(repo: Path) -> str:
    """The store's dashboard token, created (0600, never rewritten) on first use."""
    path = token_path(repo)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            token = path.read_text(encoding="utf-8").strip()
            if token:
                return token
            raise StoreError(f"{path} is empty: delete it and start the dashboard again") from None
        token = secrets.token_urlsafe(24)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(token + "\n")
        return token
    except OSError as exc:
        raise StoreError(f"cannot read or write the dashboard token {path}: {exc}") from exc


def csrf_token(token: str) -> str:
    """The value a form must send back with a POST."""
    return hmac.new(token.encode(), b"pm-agent csrf", hashlib.sha256).hexdigest()[:32]


def cookie_name(request: Request) -> str:
    """Cookies are per host, not per port: two dashboards on one machine keep one cookie each."""
    port = request.url.port
    return f"pm_agent_token_{port}" if port else "pm_agent_token"


def matches(given: str | None, token: str) -> bool:
    """A constant-time comparison (a timing difference would tell a guesser how much was right)."""
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


def presented(request: Request, token: str) -> tuple[bool, bool]:
    """(authorised, came in the query string) for a request."""
    if matches(request.query_params.get("token"), token):
        return True, True
    if matches(request.cookies.get(cookie_name(request)), token):
        return True, False
    bearer = request.headers.get("authorization", "")
    return matches(bearer.removeprefix("Bearer ").strip() if bearer.startswith("Bearer ") else None, token), False


def is_loopback(host: str) -> bool:
    """True for localhost and loopback addresses (anything else exposes the dashboard to the network)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
