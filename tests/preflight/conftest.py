"""Detection tests: tiny repositories in tmp_path, real interpreters and make, a PATH built per test.

`Machine` is the PATH detection sees: a directory of wrappers (`exec /usr/bin/make "$@"`), so a test
decides which tools exist without touching the real ones. Interpreters are real venvs made with
`python -m venv --without-pip` (about 50 ms): bare ones import nothing but the standard library,
tooled ones see this checkout's site-packages (pytest, ruff, mypy) through a .pth file.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import pytest

from pm_agent.gates.ward import CommandResult, run_command
from pm_agent.preflight.detect import Detection, Rejected, Slot, detect_environment

# Detected commands run in crafted repositories: pytest without plugins or bytecode, npm without its
# registry look-up for a newer npm (tests reach 127.0.0.1 only).
CHILD_ENV = {
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTEST_ADDOPTS": "",
    "NPM_CONFIG_UPDATE_NOTIFIER": "false",
}


def make_venv(where: Path, *, tooled: bool) -> Path:
    """A real venv at `where`; its python. Tooled: this checkout's site-packages are importable."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=60)
    if tooled:
        site = next((where / "lib").glob("python3*/site-packages"))
        (site / "tools.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    return where / "bin" / "python"


def write(repo: Path, files: dict[str, str]) -> Path:
    """Write `files` (relative path: text) under `repo`; the repo."""
    for rel, text in files.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return repo


def package_json(scripts: dict[str, str] | None = None, **fields: object) -> str:
    """A package.json with these scripts and top-level fields."""
    data: dict[str, object] = {"name": "demo", "version": "1.0.0", **fields}
    if scripts is not None:
        data["scripts"] = scripts
    return json.dumps(data, indent=2)


@dataclass
class Machine:
    """The PATH a detection sees: wrappers in one directory."""

    bindir: Path

    @property
    def path(self) -> str:
        return str(self.bindir)

    def add(self, name: str, target: str | Path) -> Machine:
        """`name` on PATH runs `target`."""
        return self.script(name, f'exec {target} "$@"')

    def script(self, name: str, body: str) -> Machine:
        """`name` on PATH is a shell script with `body` (a fake pyenv shim, a stub tool)."""
        path = self.bindir / name
        path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
        path.chmod(0o755)
        return self

    def real(self, *names: str) -> Machine:
        """These tools as this machine has them; a test needing one the machine lacks fails, naming it."""
        for name in names:
            found = shutil.which(name)
            assert found is not None, f"this test needs {name} on PATH"
            self.add(name, found)
        return self

    def detect(self, repo: Path) -> Detection:
        return detect_environment(repo, path=self.path)

    def run(self, command: str, repo: Path) -> CommandResult:
        """A detected command run the way the gates run it, on this PATH."""
        return run_command(command, repo, timeout_s=120, env={"PATH": self.path, **CHILD_ENV})


@pytest.fixture
def machine(tmp_path: Path) -> Machine:
    """An empty PATH directory outside the repository."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    return Machine(bindir)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """An empty directory to hold the repository files."""
    path = tmp_path / "repo"
    path.mkdir()
    return path


@pytest.fixture(scope="session")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Python 3 that imports only the standard library."""
    return make_venv(tmp_path_factory.mktemp("bare") / "venv", tooled=False)


@pytest.fixture(scope="session")
def tooled_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Python 3 that imports pytest, ruff and mypy (not flake8, not pyright)."""
    return make_venv(tmp_path_factory.mktemp("tooled") / "venv", tooled=True)


def rejected_for(detection: Detection, slot: Slot | None) -> dict[str, str]:
    """command -> why, for the rejections of one slot (None: interpreters and unreadable files)."""
    return {r.command: r.why for r in detection.rejected if r.slot == slot}


__all__ = ["Machine", "Rejected", "make_venv", "package_json", "rejected_for", "write"]
