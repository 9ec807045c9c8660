"""What every route shares: the repository, its store (opened on first use, read only) and the token."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from starlette.requests import Request

from pm_agent.errors import NotFoundError
from pm_agent.statefile import default_store_path
from pm_agent.store import SqliteStore, open_store
from pm_agent.web.auth import csrf_token


@dataclass
class WebContext:
    """The served repository. The store is opened when a page first needs it, so the dashboard can start
    before the run has written anything."""

    repo: Path
    token: str
    poll_s: float = 0.5  # how often the live stream looks at the events table
    closing: threading.Event = field(default_factory=threading.Event, init=False, repr=False)  # server exiting
    _store: SqliteStore | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @property
    def db(self) -> Path:
        """The store's file."""
        return default_store_path(self.repo)

    @property
    def csrf(self) -> str:
        """The CSRF token forms and POSTs carry."""
        return csrf_token(self.token)

    def has_store(self) -> bool:
        """Whether a run has written anything yet."""
        return self._store is not None or self.db.exists()

    def store(self) -> SqliteStore:
        """The store; NotFoundError while no run has written one."""
        with self._lock:
            if self._store is None:
                if not self.db.exists():
                    raise NotFoundError(f"no pm-agent state in {self.repo} yet: start a run")
                self._store = open_store(self.db)
            return self._store

    def close(self) -> None:
        """Release the store's connections."""
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None


def web_context(request: Request) -> WebContext:
    """The app's context (a FastAPI dependency)."""
    ctx = request.app.state.ctx
    assert isinstance(ctx, WebContext)
    return ctx
