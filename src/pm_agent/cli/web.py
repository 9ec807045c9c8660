"""`pm-agent web`: serve one repository's dashboard."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from pm_agent.cli.app import RepoOption, call, err, fail, out, repo_root

PortOption = Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to listen on.")]
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
        from pm_agent.web.auth import load_or_create_token
    except ImportError as exc:
        raise fail(f"{MISSING} ({exc})") from None
    root = repo_root(repo)
    warning = server.exposure_warning(host)
    if warning:
        err.print(warning, highlight=False, style="bold yellow")
    token = call(lambda: load_or_create_token(root))
    out.print(f"pm-agent dashboard of {root}: {server.address(host, port, token)}", highlight=False, soft_wrap=True)
    call(lambda: server.serve(root, host, port))


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
        background.stop()


def keep_serving(background: Background) -> None:
    """After a run in a terminal: keep the dashboard up until Ctrl-C (never when output is not a terminal)."""
    try:
        if sys.stdout.isatty():
            out.print(f"The dashboard stays up for inspection at {background.url} (Ctrl-C stops it).", soft_wrap=True)
            while background.thread.is_alive():
                background.thread.join(1.0)
    except KeyboardInterrupt:
        pass
    finally:
        background.stop()
