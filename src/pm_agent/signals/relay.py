"""The signal_back server's stand-in when pm-agent serves signals itself: pipes stdio to pm-agent's socket.

An agent session's MCP server used to be a Python process of its own (`pm_agent.signals.server`), ~75 ms of
CPU per session in imports before its first answer, competing on small machines with the sessions and
gates pm-agent waits for. The running pm-agent now answers on a unix socket
(`pm_agent.signals.socket_server`), and the agent starts this relay instead: standard library only, run
by path with `python -I -S`, ~6 ms of CPU. It sends one hello line (the session token, and the run and
task for the audit record of an unknown token) and then copies bytes both ways until the agent closes
its end and pm-agent has answered everything.

When the socket cannot be reached (no `PM_AGENT_SIGNAL_SOCKET`, or pm-agent is not listening) the
relay becomes the standalone server (`exec`), which reads the same environment: the agent sees no
difference. This file must not import pm_agent: it runs without site-packages.
"""

from __future__ import annotations

import json
import os
import select
import socket
import sys

SOCKET_ENV = "PM_AGENT_SIGNAL_SOCKET"
TOKEN_ENV = "PM_AGENT_SESSION_TOKEN"
RUN_ENV = "PM_AGENT_RUN_ID"
TASK_ENV = "PM_AGENT_TASK_ID"
SERVER_MODULE = "pm_agent.signals.server"
_CHUNK = 1 << 16


def hello(environ: dict[str, str] | os._Environ[str]) -> bytes:
    """The first line the relay sends: who the session is."""
    fields = {"token": environ.get(TOKEN_ENV, ""), "run": environ.get(RUN_ENV), "task": environ.get(TASK_ENV)}
    return json.dumps(fields).encode("utf-8") + b"\n"


def _standalone() -> None:
    # A new process image without -I -S, so site-packages (and pm_agent) are found as usual.
    os.execv(sys.executable, [sys.executable, "-m", SERVER_MODULE])


def _connect(path: str) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        return None
    return sock


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def pump(sock: socket.socket, stdin: int, stdout: int) -> None:
    """Copy `stdin` to `sock` and `sock` to `stdout` until pm-agent closes the connection.

    At the end of `stdin` the socket's sending half is shut, so pm-agent answers what it has and closes."""
    reading = [stdin, sock.fileno()]
    while True:
        ready, _, _ = select.select(reading, [], [])
        if sock.fileno() in ready:
            data = sock.recv(_CHUNK)
            if not data:
                return
            _write_all(stdout, data)
        if stdin in ready:
            data = os.read(stdin, _CHUNK)
            if data:
                sock.sendall(data)
            else:
                reading.remove(stdin)
                sock.shutdown(socket.SHUT_WR)


def main() -> None:
    """Relay to pm-agent's socket, or become the standalone server when there is none."""
    path = os.environ.get(SOCKET_ENV)
    sock = _connect(path) if path else None
    if sock is None:
        _standalone()
        return
    try:
        sock.sendall(hello(os.environ))
        pump(sock, sys.stdin.fileno(), sys.stdout.fileno())
    except OSError:
        pass  # pm-agent went away mid-session (it stops its agents first): nothing left to answer
    finally:
        sock.close()


if __name__ == "__main__":
    main()
