"""The dashboard served by uvicorn on 127.0.0.1: `pm-agent web` as a user starts it, and the live stream
picking up what another process writes to the store."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import httpx2 as httpx  # what mcp (a core dependency) installs
import pytest

from pm_agent.web.auth import load_or_create_token
from pm_agent.web.server import Background, port_free, start_background, start_dashboard

if TYPE_CHECKING:
    from tests.web.conftest import Project


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def served(fresh_project: Project) -> Iterator[Background]:
    background = start_background(fresh_project.repo, port=free_port(), poll_s=0.1)
    yield background
    background.stop()
    assert not background.thread.is_alive()


def test_the_stream_follows_writes_of_another_process(served: Background, fresh_project: Project) -> None:
    token = load_or_create_token(fresh_project.repo)
    base = served.url.split("/?")[0]
    url = f"{base}/api/runs/{fresh_project.run_id}/events"
    seen: list[dict[str, object]] = []
    answered = threading.Event()

    def answer_later() -> None:
        answered.wait(30)
        fresh_project.pm("answer", str(fresh_project.escalation_id), "quiet")

    helper = threading.Thread(target=answer_later)
    helper.start()
    try:
        with httpx.stream("GET", url, params={"token": token}, timeout=30) as response:
            assert response.status_code == 200
            for line in response.iter_lines():
                if not line.startswith("data: "):
                    continue
                seen.append(json.loads(line[len("data: ") :]))
                answered.set()  # the backlog is streaming: now another process answers
                if seen[-1]["kind"] == "escalation.answered":
                    break
    finally:
        answered.set()
        helper.join(30)
    assert seen[-1]["kind"] == "escalation.answered"
    ids = [int(str(e["id"])) for e in seen]
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)


def test_pm_agent_web_prints_its_address_and_serves_it(waiting_project: Project) -> None:
    port = free_port()
    proc = waiting_project.start("web", "-C", str(waiting_project.repo), "--port", str(port))
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        token = load_or_create_token(waiting_project.repo)
        assert line.strip().endswith(f"http://127.0.0.1:{port}/?token={token}")
        address = line.split(": ", 1)[1].strip()
        for _ in range(100):  # the address is printed just before uvicorn binds
            try:
                with httpx.Client(timeout=5) as client:
                    page = client.get(address, follow_redirects=True)
                break
            except httpx.ConnectError:
                threading.Event().wait(0.1)
        assert page.status_code == 200
        assert waiting_project.run_id in page.text
        assert httpx.get(f"http://127.0.0.1:{port}/", timeout=5).status_code == 401
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=20)
        if proc.stdout is not None:
            proc.stdout.close()
    assert proc.returncode in (0, 130)


def test_run_with_web_prints_the_dashboard_and_takes_it_down_at_the_end(unrun_repo: Path) -> None:
    proc = subprocess.run(
        [shutil.which("pm-agent", path=str(Path(sys.executable).parent)) or "pm-agent",
         "run", "docs/notes.md", "--no-input", "--web"],
        cwd=unrun_repo, capture_output=True, text=True, timeout=150, check=False,
    )  # fmt: skip
    assert proc.returncode == 3, proc.stdout + proc.stderr  # task 2 waits for its answer
    token = load_or_create_token(unrun_repo)
    found = re.search(r"^dashboard: http://127\.0\.0\.1:(\d+)/\?token=(\S+)$", proc.stdout, re.MULTILINE)
    assert found is not None, proc.stdout
    assert found.group(2) == token
    assert "ERROR" not in proc.stdout + proc.stderr  # no cancelled stream, no traceback from the server
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{found.group(1)}/", timeout=5)


def test_a_taken_port_is_seen_as_taken() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = int(holder.getsockname()[1])
        assert port_free("127.0.0.1", port) is False
    assert port_free("127.0.0.1", port) is True


def test_a_host_beyond_loopback_is_warned_about(waiting_project: Project) -> None:
    # 192.0.2.1 is TEST-NET-1: never this machine's, so the warning is printed and the bind fails, exposing nothing
    proc = waiting_project.pm("web", "--host", "192.0.2.1", "--port", "0", timeout=60)
    assert "warning: the dashboard listens on 192.0.2.1, not only on this machine" in proc.stderr
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "could not listen on 192.0.2.1:0" in proc.stdout + proc.stderr


KEEP_SERVING = """
import sys
from pathlib import Path
from pm_agent.cli.web import keep_serving
from pm_agent.web.server import start_background
background = start_background(Path(sys.argv[1]), port=0)
print("url", background.url, flush=True)
keep_serving(background)
print("stopped", flush=True)
"""


@pytest.mark.parametrize("parent_ignores_sigint", [False, True])
def test_after_the_demo_the_dashboard_stays_up_only_in_a_terminal(
    waiting_project: Project, parent_ignores_sigint: bool
) -> None:
    piped = subprocess.run(
        [sys.executable, "-c", KEEP_SERVING, str(waiting_project.repo)],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert piped.stdout.splitlines()[-1] == "stopped"  # not a terminal: make demo in CI ends
    leader, follower = pty.openpty()
    ignore = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if parent_ignores_sigint else None
    proc = subprocess.Popen(
        [sys.executable, "-c", KEEP_SERVING, str(waiting_project.repo)], stdout=follower, stderr=follower,
        preexec_fn=ignore,  # the child inherits an ignored SIGINT, as from a test runner's worker
    )  # fmt: skip
    os.close(follower)
    try:
        seen = b""
        while b"Ctrl-C stops it" not in seen:
            ready, _, _ = select.select([leader], [], [], 30)
            assert ready, seen
            seen += os.read(leader, 4096)
        url = re.search(rb"url (http://\S+)", seen)
        assert url is not None
        assert httpx.get(url.group(1).decode(), timeout=5, follow_redirects=True).status_code == 200
        assert proc.poll() is None  # still serving
        proc.send_signal(signal.SIGINT)
        # Keep reading while it stops: a child whose terminal buffer is full blocks on its next write.
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            if select.select([leader], [], [], 0.2)[0]:
                try:
                    seen += os.read(leader, 4096)
                except OSError:  # EIO: it exited and closed its end, everything it wrote was read
                    break
        assert proc.wait(timeout=5) == 0, seen
        while b"stopped" not in seen:
            ready, _, _ = select.select([leader], [], [], 10)
            assert ready, seen
            seen += os.read(leader, 4096)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(leader)


def test_a_run_dashboard_on_a_taken_port_takes_a_free_one(waiting_project: Project) -> None:
    first = start_background(waiting_project.repo, port=0)
    try:
        taken = int(first.url.split(":")[2].split("/")[0])
        second = start_dashboard(waiting_project.repo, port=taken)
        try:
            assert f":{taken}/" not in second.url
            assert httpx.get(second.url, timeout=5, follow_redirects=True).status_code == 200
        finally:
            second.stop()
    finally:
        first.stop()
    assert not first.thread.is_alive()
