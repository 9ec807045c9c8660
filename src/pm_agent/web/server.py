"""Serving the dashboard with uvicorn: in the foreground (`pm-agent web`) or in a thread beside a run."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from urllib.parse import quote

import uvicorn

from pm_agent.errors import InputError
from pm_agent.web.app import create_app
from pm_agent.web.auth import is_loopback, load_or_create_token
from pm_agent.web.context import WebContext

DEFAULT_PORT = 8765
DEFAULT_HOST = "127.0.0.1"


def address(host: str, port: int, token: str) -> str:
    """The address to open, token included."""
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/?token={quote(token)}"


def exposure_warning(host: str) -> str | None:
    """What to say when the dashboard listens beyond this machine."""
    if is_loopback(host):
        return None
    return (
        f"warning: the dashboard listens on {host}, not only on this machine: anyone who can reach it and "
        "learns the token can read the run and answer its escalations"
    )


class DashboardServer(uvicorn.Server):
    """uvicorn that ends the open event streams when it is asked to exit (else they would hold the exit until
    uvicorn cancels them, with an error in the log) and says where it listens once it does."""

    def __init__(self, config: uvicorn.Config, ctx: WebContext, token: str) -> None:
        super().__init__(config)
        self.ctx = ctx
        self.token = token
        self.url = ""
        self.on_ready: Callable[[str], None] | None = None

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """Ctrl-C or SIGTERM in the foreground."""
        self.ctx.closing.set()
        super().handle_exit(sig, frame)

    def close(self) -> None:
        """Exit from another thread."""
        self.ctx.closing.set()
        self.should_exit = True

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """Bind, then name the address with the port actually bound (port 0 takes a free one)."""
        await super().startup(sockets)
        if self.started:
            port = int(self.servers[0].sockets[0].getsockname()[1])
            self.url = address(self.config.host, port, self.token)
            if self.on_ready is not None:
                self.on_ready(self.url)


def make_server(repo: Path, host: str, port: int, poll_s: float = 0.5) -> DashboardServer:
    """The dashboard of `repo`'s store, not yet serving."""
    token = load_or_create_token(repo)
    app = create_app(repo, token, poll_s=poll_s)
    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", access_log=False, timeout_graceful_shutdown=2, lifespan="on"
    )
    return DashboardServer(config, app.state.ctx, token)


def serve(
    repo: Path,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    poll_s: float = 0.5,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve in this thread until Ctrl-C; `on_ready(url)` once it listens."""
    server = make_server(repo, host, port, poll_s)
    server.on_ready = on_ready
    try:
        server.run()
    except SystemExit:  # uvicorn logged why (the port is in use, the address is not this machine's)
        raise InputError(f"the dashboard could not listen on {host}:{port}") from None


@dataclass
class Background:
    """A dashboard served from a daemon thread; `stop()` ends it."""

    server: DashboardServer
    thread: threading.Thread

    @property
    def url(self) -> str:
        """The address to open, token included."""
        return self.server.url

    def stop(self, timeout_s: float = 5.0, grace_s: float = 0.0) -> None:
        """Ask uvicorn to exit (after `grace_s`: open pages fetch the last moves first) and wait for the thread."""
        if grace_s > 0 and self.thread.is_alive():
            time.sleep(grace_s)
        self.server.close()
        self.thread.join(timeout_s)


def start_background(
    repo: Path, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, poll_s: float = 0.5, wait_s: float = 10.0
) -> Background:
    """Start serving in a daemon thread and wait until it listens; InputError when it cannot bind."""
    server = make_server(repo, host, port, poll_s)
    thread = threading.Thread(target=server.run, name="pm-agent-web", daemon=True)
    thread.start()
    deadline = time.monotonic() + wait_s
    while not server.url:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.close()
            raise InputError(f"the dashboard could not listen on {host}:{port} (is the port in use?)")
        time.sleep(0.05)
    return Background(server, thread)


def start_dashboard(repo: Path, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> Background:
    """The dashboard beside a run: on `port`, or on a free port when that one is taken."""
    if port and port_free(host, port):
        try:
            return start_background(repo, host, port)
        except InputError:  # taken between the look and the bind (two runs starting at once)
            pass
    return start_background(repo, host, 0)


def port_free(host: str, port: int) -> bool:
    """Whether `host:port` can be bound now (a run should not fail because a dashboard is already open)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: TIME_WAIT is no obstacle
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True
