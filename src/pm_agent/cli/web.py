"""`pm-agent web`: serve one repository's dashboard."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from pm_agent.cli.app import RepoOption, call, err, fail, out, repo_root

PortOption = Annotated[int, typer.Option("--port", min=0, max=65535, help="Port to listen on (0: a free one).")]
HostOption = Annotated[
    str, typer.Option("--host", help="Address to listen on; anything but loopback exposes the dashboard.")
]
if TYPE_CHECKING:
    from pm_agent.web.server import Background

MISSING = "the dashboard needs the web extra: pip install 'pm-agent[web]'"


def web_cmd(repo: RepoOption = None, port: PortOption = 8765, host: HostOption = "127.0.0.1") -> None:
    """Serve the dashboard of the repository's store: board, tasks, inbox, reports (Ctrl-C stops it).

    Prints the address to open, with the store's token (kept in .pm-agent/web-token). Every request
    needs that token; the first page sets it as a cookie.
    """
    try:
        from pm_agent.web import server
    except ImportError as exc:
        raise fail(f"{MISSING} ({exc})") from None
    root = repo_root(repo)
    warning = server.exposure_warning(host)
    if warning:
        err.print(warning, highlight=False, style="bold yellow")

    def ready(url: str) -> None:  # printed once it listens: the address works when it is shown
        out.print(f"pm-agent dashboard of {root}: {url}", highlight=False, soft_wrap=True)

    call(lambda: server.serve(root, host, port, on_ready=ready))


WebFlag = Annotated[
    bool, typer.Option("--web", help="Serve the dashboard during the run (127.0.0.1:8765, or a free port).")
]


def start_dashboard(root: Path) -> Background:
    """Start the dashboard beside a run and print its address; exits with a clear line without the web extra."""
    try:
        from pm_agent.web.server import start_dashboard as start
    except ImportError as exc:
        raise fail(f"{MISSING} ({exc})") from None
    background = call(lambda: start(root))
    out.print(f"dashboard: {background.url}", highlight=False, soft_wrap=True)
    return background


@contextmanager
def dashboard(root: Path, enabled: bool) -> Iterator[None]:
    """The dashboard served for the duration of the block, when asked for."""
    if not enabled:
        yield
        return
    background = start_dashboard(root)
    try:
        yield
    finally:
        # An open page learns the run's last moves from the stream (polled every 0.5 s) and then reads the
        # board: give it that long before the server goes with the run.
        background.stop(grace_s=1.5)


def keep_serving(background: Background) -> None:
    """After a run in a terminal: keep the dashboard up until Ctrl-C (never when output is not a terminal)."""
    previous = None
    try:
        if sys.stdout.isatty():
            if threading.current_thread() is threading.main_thread():
                # Python leaves Ctrl-C ignored when it started ignored (a parent that ignored SIGINT, such as a
                # test runner's worker); the line below promises that Ctrl-C stops it, so it does.
                previous = signal.signal(signal.SIGINT, signal.default_int_handler)
            out.print(f"The dashboard stays up for inspection at {background.url} (Ctrl-C stops it).", soft_wrap=True)
            while background.thread.is_alive():
                background.thread.join(1.0)
    except KeyboardInterrupt:
        pass
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
        background.stop()
