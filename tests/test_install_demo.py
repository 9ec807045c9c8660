"""`pip install pm-agent` (no dev extra) into a fresh virtual environment, then `pm-agent demo` from it.

The real dependencies come from the package index under constraints.txt, as a user's install would.
The demo first says in one line what it lacks (the sample project's gate tools) and creates nothing;
with them installed it runs; stopped by SIGINT it says so in its last line and exit code, and never
points at a release that was not produced.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.claude, pytest.mark.timeout(1800)]

ROOT = Path(__file__).resolve().parents[1]
CONSTRAINTS = ROOT / "constraints.txt"


def _env(venv: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "VIRTUAL_ENV", "PYTHON"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def _run(argv: list[str], env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout, check=False)


def test_pip_install_without_dev_extra_then_demo(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    env = _env(venv)
    made = _run([sys.executable, "-m", "venv", str(venv)], env, 300)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    installed = _run([str(python), "-m", "pip", "install", "-q", "-c", str(CONSTRAINTS), str(ROOT)], env, 900)
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    pm = str(venv / "bin" / "pm-agent")

    # 1. Without the dev tools: one line, before any session, naming what to install and how.
    lacking = _run([pm, "demo", "--dest", str(tmp_path / "demo-a")], env, 300)
    assert lacking.returncode == 2, lacking.stdout + lacking.stderr
    lines = lacking.stderr.strip().splitlines()
    assert len(lines) == 1, lacking.stderr
    assert lines[0].startswith("error: pm-agent demo needs pytest, ruff, mypy in ")
    assert "session" not in lacking.stdout
    assert not (tmp_path / "demo-a").exists()
    command = re.search(r"install with `([^`]+)`", lines[0])
    assert command is not None, lines[0]

    # 2. Do what it says (under the same constraints).
    tools = _run([*command.group(1).split(), "-q", "-c", str(CONSTRAINTS)], env, 900)
    assert tools.returncode == 0, tools.stdout[-3000:] + tools.stderr[-3000:]

    # 3. Stopped by SIGINT: the last line and the exit code say so, and no release is pointed at.
    out_file = tmp_path / "demo-b.out"
    with out_file.open("w", encoding="utf-8") as sink:
        proc = subprocess.Popen(
            [pm, "demo", "--dest", str(tmp_path / "demo-b")], stdout=sink, stderr=subprocess.STDOUT, env=env
        )
    try:
        deadline = time.monotonic() + 300
        while "session.started" not in out_file.read_text(encoding="utf-8"):
            assert proc.poll() is None, out_file.read_text(encoding="utf-8")[-3000:]
            assert time.monotonic() < deadline, out_file.read_text(encoding="utf-8")[-3000:]
            time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=120) == 130, out_file.read_text(encoding="utf-8")[-3000:]
    finally:
        proc.kill()
        proc.wait(timeout=30)
    stopped = out_file.read_text(encoding="utf-8")
    assert "Inspect the release" not in stopped
    assert "RELEASE SUMMARY" not in stopped
    assert stopped.strip().splitlines()[-1] == "demo ended without a release: stopped by SIGINT (exit 130)"

    # 4. The whole demo, to the release.
    done = _run([pm, "demo", "--dest", str(tmp_path / "demo-c")], env, 1200)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "Inspect the release:" in done.stdout
    last = done.stdout.strip().splitlines()[-1]
    assert (
        last == "demo finished: released, manifest docs/releases/textstats-release.yaml on pm/textstats/work (exit 0)"
    )
    shown = subprocess.run(
        ["git", "-C", str(tmp_path / "demo-c"), "show", "pm/textstats/work:docs/releases/textstats-release.yaml"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert shown.stdout.startswith("plan_id: textstats")
