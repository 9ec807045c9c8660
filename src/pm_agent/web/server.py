"""Serving the dashboard with uvicorn: in the foreground (`pm-agent web`) or in a thread beside a run."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import uvicorn

from pm_agent.errors import InputError
from pm_agent.web.app import create_app
from pm_agent.web.auth import is_loopback, load_or_create_token

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


def _server(repo: Path, host: str, port: int, poll_s: float) -> tuple[uvicorn.Server, str]:
    token = load_or_create_token(repo)
    # Serving another repository's store from the same address would hand it this token: one port, one store.
    config = uvicorn.Config(
        create_app(repo, token, poll_s=poll_s),
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=2,  # open event streams must not hold the exit
        lifespan="on",
    )
    return uvicorn.Server(config), token


def serve(repo: Path, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, poll_s: float = 0.5) -> None:
    """Serve in this thread until Ctrl-C."""
    server, _ = _server(repo, host, port, poll_s)
    try:
        server.run()
    except SystemExit:  # uvicorn logged why (the port is in use, the address is not this machine's)
        raise InputError(f"the dashboard could not listen on {host}:{port}") from None


@dataclass
class Background:
    """A dashboard served from a daemon thread; `stop()` ends it."""

    server: uvicorn.Server
    thread: threading.Thread
    url: str

    def stop(self, timeout_s: float = 5.0) -> None:
        """Ask uvicorn to exit and wait for the thread."""
        self.server.should_exit = True
        self.thread.join(timeout_s)


def start_background(
    repo: Path, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, poll_s: float = 0.5, wait_s: float = 10.0
) -> Background:
    """Start serving in a daemon thread and wait until it listens; InputError when it cannot bind.

    Port 0 takes a free port; `url` names the one bound."""
    server, token = _server(repo, host, port, poll_s)
    thread = threading.Thread(target=server.run, name="pm-agent-web", daemon=True)
    thread.start()
    deadline = time.monotonic() + wait_s
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise InputError(f"the dashboard could not listen on {host}:{port} (is the port in use?)")
        time.sleep(0.05)
    bound = port or int(server.servers[0].sockets[0].getsockname()[1])
    return Background(server, thread, address(host, bound, token))


def start_dashboard(repo: Path, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> Background:
    """The dashboard beside a run: on `port`, or on a free port when that one is taken."""
    return start_background(repo, host, port if port_free(host, port) else 0)


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
