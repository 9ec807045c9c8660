"""The dashboard's FastAPI app: `create_app(repo_dir, token)`.

Every request needs the store's token (query string once, then an HttpOnly cookie); the JSON endpoints
under /api are described in /openapi.json; pages are server-rendered Jinja templates with autoescape on,
so nothing an agent printed is ever read as HTML.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pm_agent.errors import InputError, NotFoundError, PmAgentError, StoreError
from pm_agent.web import routes_api, routes_live, routes_pages
from pm_agent.web.auth import cookie_name, presented
from pm_agent.web.context import WebContext

STATIC = Path(__file__).parent / "static"
UNAUTHORISED = "401 Unauthorized: open the address `pm-agent web` printed (it carries the token)\n"


class TokenGuard:
    """401 without the token; the token in the query string becomes an HttpOnly cookie (and leaves the address).

    Plain ASGI rather than `@app.middleware("http")`: that wrapper runs streamed responses (the live event
    stream) through a task group of its own, which breaks when the server shuts down with a stream open."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        ok, in_query = presented(request, self.token)
        if not ok:
            await PlainTextResponse(UNAUTHORISED, status_code=401)(scope, receive, send)
            return
        if not in_query:
            await self.app(scope, receive, send)
            return
        # The token is URL-safe base64: nothing in it needs quoting in a cookie.
        value = f"{cookie_name(request)}={self.token}; HttpOnly; Path=/; SameSite=strict"
        header = (b"set-cookie", value.encode("latin-1"))
        if request.method == "GET" and not request.url.path.startswith("/api/"):
            rest = request.url.remove_query_params("token")
            redirect = RedirectResponse(rest.path + (f"?{rest.query}" if rest.query else ""), 303)
            redirect.raw_headers.append(header)
            await redirect(scope, receive, send)
            return

        async def with_cookie(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), header]}
            await send(message)

        await self.app(scope, receive, with_cookie)


def create_app(repo_dir: Path, token: str, *, poll_s: float = 0.5) -> FastAPI:
    """The dashboard of the store of `repo_dir`, guarded by `token`."""
    ctx = WebContext(repo_dir.resolve(), token, poll_s=poll_s)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            ctx.close()

    app = FastAPI(
        title="pm-agent dashboard",
        description="A run's board, its tasks' evidence, the escalation inbox and the reports, from the store.",
        lifespan=lifespan,
    )
    app.state.ctx = ctx

    app.add_middleware(TokenGuard, token=token)

    @app.exception_handler(PmAgentError)
    async def pm_error(request: Request, exc: Exception) -> Response:
        status = 404 if isinstance(exc, NotFoundError) else 409 if isinstance(exc, StoreError) else 400
        if not isinstance(exc, InputError | StoreError):
            status = 500
        return PlainTextResponse(f"{status}: {exc}\n", status_code=status)

    app.include_router(routes_api.router)
    app.include_router(routes_live.router)
    app.include_router(routes_pages.router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app
