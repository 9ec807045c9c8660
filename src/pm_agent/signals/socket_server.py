"""signal_back served by the running pm-agent on a unix socket, one thread per agent session.

Each session's MCP server is then `signals/relay.py` (standard library only) instead of a Python process
that imports pm-agent's signal models: the same `SignalServer` answers, over the socket, with a desk on
its own connection to the store, as the standalone server would. The socket lives in a fresh private
folder under the temporary directory (a unix socket's path is limited to ~107 bytes, too short for
many repositories' `.pm-agent/`); the session token in the relay's hello line names the session, as the
environment does for the standalone server.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import tempfile
import threading
import time
import weakref
from pathlib import Path
from typing import Any

from pm_agent.signals.desk import desk_from_env
from pm_agent.signals.server import SignalServer
from pm_agent.signals.tokens import DB_ENV, RUN_ENV, TASK_ENV, TOKEN_ENV

__all__ = ["MAX_PATH", "SignalSocket", "sweep_stale"]

log = logging.getLogger(__name__)

MAX_PATH = 100  # sun_path is 108 bytes on Linux, 104 on macOS, terminator included
_PREFIX = "pm-agent-signals-"


def sweep_stale(root: Path | None = None) -> list[Path]:
    """Remove the socket folders of pm-agent processes that no longer run (killed: a clean stop removes its own);
    the folders removed. Only this user's, and only a folder holding nothing but its socket."""
    removed: list[Path] = []
    try:
        entries = list((root or Path(tempfile.gettempdir())).glob(f"{_PREFIX}*"))
    except OSError:
        return removed
    for folder in entries:
        pid = folder.name.removeprefix(_PREFIX).partition("-")[0]
        if not pid.isdigit() or _alive(int(pid)):
            continue
        try:
            if folder.stat().st_uid != os.getuid() or {p.name for p in folder.iterdir()} - {"signals.sock"}:
                continue
        except OSError:
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True
_HELLO_LIMIT = 4096


class SignalSocket:
    """Listens on a unix socket and answers each connection's MCP messages for the store at `db_path`."""

    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path
        sweep_stale()
        # 0700: only this user can connect. The pid in the name lets a later run remove it if this process is killed.
        self._dir = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-"))
        self.path = self._dir / "signals.sock"
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._closed = False
        self._lock = threading.Lock()
        self._sessions: set[threading.Thread] = set()
        self.sessions_served = 0  # connections answered to their end (tests tell the relay took this way)
        try:
            if len(str(self.path).encode()) > MAX_PATH:
                raise OSError(f"socket path too long: {self.path}")
            self._listener.bind(str(self.path))
            self._listener.listen(64)
        except OSError:
            self._listener.close()
            shutil.rmtree(self._dir, ignore_errors=True)
            raise
        # Removed at exit too when nobody calls close() (a test that never ends its run).
        self._cleanup = weakref.finalize(self, shutil.rmtree, self._dir, True)
        self._thread = threading.Thread(target=self._accept, name="signal-socket", daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return  # closed
            with self._lock:
                if self._closed:
                    conn.close()
                    return
                thread = threading.Thread(target=self._serve, args=(conn,), name="signal-session", daemon=True)
                self._sessions.add(thread)
            thread.start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            with conn, conn.makefile("rb") as rfile, conn.makefile("wb") as wfile:
                env = self._environ(rfile.readline(_HELLO_LIMIT))
                desk = desk_from_env(env)
                try:
                    SignalServer(desk).serve(rfile, wfile)
                finally:
                    close = getattr(desk.store, "close", None)
                    if close is not None:
                        close()
        except Exception:
            log.exception("signal_back session on %s failed", self.path)
        finally:
            with self._lock:
                self._sessions.discard(threading.current_thread())
                self.sessions_served += 1

    def _environ(self, line: bytes) -> dict[str, str]:
        """What the standalone server reads from its environment, from the relay's hello line."""
        try:
            fields: Any = json.loads(line)
        except ValueError:
            fields = {}
        if not isinstance(fields, dict):
            fields = {}
        env = {DB_ENV: str(self.db_path)}
        for key, name in ((TOKEN_ENV, "token"), (RUN_ENV, "run"), (TASK_ENV, "task")):
            value = fields.get(name)
            if isinstance(value, str) and value:
                env[key] = value
        return env

    def close(self, timeout: float = 5.0) -> None:
        """Stop listening, wait (bounded, `timeout` in all) for sessions still answering, remove the folder."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:  # wake accept(): closing the socket from another thread does not, everywhere
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as wake:
                wake.connect(str(self.path))
        except OSError:
            pass
        deadline = time.monotonic() + timeout
        self._thread.join(timeout)
        self._listener.close()
        with self._lock:
            sessions = list(self._sessions)
        for thread in sessions:
            thread.join(max(0.0, deadline - time.monotonic()))
        self._cleanup()
