"""`pm-agent web`: serve one repository's dashboard."""

from __future__ import annotations

from typing import Annotated

import typer

from pm_agent.cli.app import RepoOption, call, err, fail, out, repo_root

PortOption = Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to listen on.")]
HostOption = Annotated[
    str, typer.Option("--host", help="Address to listen on; anything but loopback exposes the dashboard.")
]
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
