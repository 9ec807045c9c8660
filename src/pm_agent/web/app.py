"""The dashboard's FastAPI app: `create_app(repo_dir, token)`.

Every request needs the store's token (query string once, then an HttpOnly cookie); the JSON endpoints
under /api are described in /openapi.json; pages are server-rendered Jinja templates with autoescape on,
so nothing an agent printed is ever read as HTML.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

from pm_agent.errors import InputError, NotFoundError, PmAgentError, StoreError
from pm_agent.web import routes_api, routes_live, routes_pages
from pm_agent.web.auth import cookie_name, presented
from pm_agent.web.context import WebContext

STATIC = Path(__file__).parent / "static"
UNAUTHORISED = "401 Unauthorized: open the address `pm-agent web` printed (it carries the token)\n"


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

    @app.middleware("http")
    async def require_token(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        ok, in_query = presented(request, token)
        if not ok:
            return PlainTextResponse(UNAUTHORISED, status_code=401)
        if in_query and request.method == "GET" and not request.url.path.startswith("/api/"):
            # The token leaves the address bar (and the browser history): the cookie carries it from here on.
            rest = request.url.remove_query_params("token")
            response: Response = RedirectResponse(rest.path + (f"?{rest.query}" if rest.query else ""), 303)
        else:
            response = await call_next(request)
        if in_query:
            response.set_cookie(cookie_name(request), token, httponly=True, samesite="strict", path="/")
        return response

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
