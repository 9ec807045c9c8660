"""What `pm-agent run` imports at start-up: not the modules it may never use (each costs CPU on every run)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

LAZY = ("pm_agent.preflight.detect", "detect_secrets", "requests", "rich")


def loaded(code: str, names: tuple[str, ...]) -> list[str]:
    """Which of `names` are in sys.modules after `code` runs in a fresh interpreter."""
    script = f"import sys\n{code}\nprint(*[m for m in {names!r} if m in sys.modules])"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return done.stdout.split()


def test_start_up_leaves_detection_secret_scanning_and_printing_unimported() -> None:
    assert loaded("import pm_agent.engine.api, pm_agent.cli", ("pm_agent.config", *LAZY)) == ["pm_agent.config"]
    assert loaded("import pm_agent.cli", LAZY) == []


def test_detect_defaults_imports_detection_when_it_detects(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text("test:\n\ttrue\n")
    code = f"import pathlib, pm_agent.config\npm_agent.config.detect_defaults(pathlib.Path({str(tmp_path)!r}))"
    assert loaded(code, LAZY[:1]) == ["pm_agent.preflight.detect"]
