"""The token (401 without it on every route), the cookie it becomes, the CSRF check, the token file."""

from __future__ import annotations

import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from pm_agent.web.app import create_app
from pm_agent.web.auth import csrf_token, is_loopback, load_or_create_token, token_path
from pm_agent.web.server import address, exposure_warning

if TYPE_CHECKING:
    from tests.web.conftest import Project


def _routes(app_path: Path) -> list[tuple[str, str]]:
    app = create_app(app_path, "secret")
    found = []
    routes = []
    for route in app.routes:  # FastAPI keeps an included router as one entry: its routes are inside
        routes += getattr(route, "original_router", None).routes if hasattr(route, "original_router") else [route]
    for route in routes:
        path = getattr(route, "path", "")
        methods = sorted(route.methods) if isinstance(route, APIRoute) else ["GET"]
        filled = re.sub(r"\{[a-z_]+\}", "1", path)
        found += [(method, filled) for method in methods if method != "HEAD"]
    return found


def test_every_route_answers_401_without_the_token(waiting_project: Project) -> None:
    routes = _routes(waiting_project.repo)
    assert ("POST", "/api/escalations/1/answer") in routes
    assert ("POST", "/inbox/1/answer") in routes
    assert ("GET", "/static") in routes
    with TestClient(create_app(waiting_project.repo, "secret")) as client:
        for method, path in routes:
            response = client.request(method, path)
            assert response.status_code == 401, (method, path)
            assert "token" in response.text
        client.cookies.set("pm_agent_token", "guess")
        for method, path in routes:
            wrong = client.request(method, path, params={"token": "guess"}, headers={"Authorization": "Bearer guess"})
            assert wrong.status_code == 401, (method, path)


def test_the_token_in_the_address_becomes_an_httponly_cookie(waiting_project: Project) -> None:
    with TestClient(create_app(waiting_project.repo, "secret")) as client:
        first = client.get("/inbox", params={"token": "secret"}, follow_redirects=False)
        assert first.status_code == 303
        assert first.headers["location"] == "/inbox"  # the token leaves the address bar
        cookie = first.headers["set-cookie"]
        assert cookie.startswith("pm_agent_token=secret")
        assert "httponly" in cookie.lower()
        assert "samesite=strict" in cookie.lower()
        assert client.get("/inbox").status_code == 200  # the cookie carries it now
        assert client.get("/api/runs").status_code == 200


def test_a_bearer_header_also_works(waiting_project: Project) -> None:
    with TestClient(create_app(waiting_project.repo, "secret")) as client:
        assert client.get("/api/runs", headers={"Authorization": "Bearer secret"}).status_code == 200
        assert client.get("/api/runs", headers={"Authorization": "Bearer nope"}).status_code == 401


def test_answers_without_the_csrf_token_are_refused(client: TestClient, waiting_project: Project) -> None:
    esc = waiting_project.escalation_id
    body = {"answer": "loud"}
    assert client.post(f"/api/escalations/{esc}/answer", json=body).status_code == 403
    refused = client.post(f"/api/escalations/{esc}/answer", json=body, headers={"X-CSRF-Token": "wrong"})
    assert refused.status_code == 403
    form = client.post(f"/inbox/{esc}/answer", data={"answer": "loud"}, follow_redirects=False)
    assert form.status_code == 403
    form = client.post(f"/inbox/{esc}/answer", data={"answer": "loud", "csrf_token": "x"}, follow_redirects=False)
    assert form.status_code == 403
    [still] = client.get("/api/escalations").json()
    assert still["id"] == esc
    assert still["status"] == "open"


def test_the_token_file_is_private_and_kept(tmp_path: Path) -> None:
    first = load_or_create_token(tmp_path)
    assert len(first) >= 32
    assert stat.S_IMODE(token_path(tmp_path).stat().st_mode) == 0o600
    assert load_or_create_token(tmp_path) == first
    assert csrf_token(first) != first
    assert csrf_token(first) == csrf_token(first)
    assert load_or_create_token(tmp_path / "other") != first


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("localhost", True), ("::1", True), ("127.0.0.2", True), ("0.0.0.0", False),
     ("192.168.1.4", False), ("example.org", False)],
)  # fmt: skip
def test_only_loopback_hosts_go_without_a_warning(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
    warning = exposure_warning(host)
    assert (warning is None) is loopback
    if warning is not None:
        assert host in warning


def test_the_address_carries_the_token() -> None:
    assert address("127.0.0.1", 8765, "a+b") == "http://127.0.0.1:8765/?token=a%2Bb"
    assert address("::1", 9000, "t") == "http://[::1]:9000/?token=t"
