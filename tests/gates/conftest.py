"""Gate tests: real git repositories in tmp_path (isolated from user git config), real subprocesses."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from pm_agent.vcs import Git

# pytest run by the gates inside the crafted repositories: no plugins, no cache, quiet.
PYTEST = f"{sys.executable} -m pytest -q -p no:cacheprovider"
PYTEST_ENV = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}

CALC = "def add(a, b):\n    return a + b\n"
CALC_TEST = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"


@pytest.fixture(autouse=True)
def _clean_git(isolated_git: None) -> None:
    """Every gate test runs git as on a clean machine (`isolated_git` in tests/conftest.py)."""


@dataclass
class Work:
    """A task worktree: `base` is the commit the task started from; changes are left uncommitted."""

    git: Git
    base: str

    @property
    def path(self) -> Path:
        return self.git.path

    def write(self, rel: str, text: str) -> Path:
        path = self.path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def delete(self, rel: str) -> None:
        (self.path / rel).unlink()


MakeWork = Callable[[dict[str, str]], Work]


@pytest.fixture
def make_work(tmp_path: Path, new_git: Callable[..., Git]) -> MakeWork:
    """make_work({path: text}): a repo whose base commit holds those files, on branch feat/demo/task-1."""

    def make(files: dict[str, str]) -> Work:
        git = new_git(tmp_path / "repo", "feat/demo/task-1")
        for rel, text in files.items():
            path = git.path / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        git.run("add", "-A")
        git.run("commit", "-q", "--allow-empty", "-m", "base")
        return Work(git=git, base=git.head_sha())

    return make


@pytest.fixture
def work(make_work: MakeWork) -> Work:
    """A small Python project: calc.py and tests/test_calc.py (the test passes)."""
    return make_work({"calc.py": CALC, "tests/test_calc.py": CALC_TEST, "README.md": "# calc\n"})


@pytest.fixture
def test_cmd() -> str:
    """The test command the crafted repositories use."""
    return PYTEST


@pytest.fixture
def test_env() -> dict[str, str]:
    """Environment for pytest runs inside the crafted repositories."""
    return dict(PYTEST_ENV)


MINI_RUNNER = '''\
"""A tiny test runner: runs test_* functions of the given files (default: tests/), pytest-style summary."""
import importlib.util, os, sys, time, traceback
sys.path.insert(0, os.getcwd())
start = time.monotonic()
files = sys.argv[1:] or sorted(
    os.path.join(d, f) for d, _, fs in os.walk("tests") for f in fs if f.startswith("test_") and f.endswith(".py")
)
passed = failed = 0
for path in files:
    spec = importlib.util.spec_from_file_location(path.replace("/", "_")[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name in sorted(n for n in vars(module) if n.startswith("test_")):
        try:
            getattr(module, name)()
            passed += 1
        except Exception:
            failed += 1
            print(f"FAILED {path}::{name}")
            traceback.print_exc(file=sys.stdout)
parts = [f"{passed} passed"] + ([f"{failed} failed"] if failed else [])
print(f"{', '.join(parts)} in {time.monotonic() - start:.2f}s")
sys.exit(1 if failed else 0)
'''


@pytest.fixture
def mini_cmd(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A fast real test command (no pytest start-up cost), kept outside the crafted repository."""
    runner = tmp_path_factory.mktemp("runner") / "runtests.py"
    runner.write_text(MINI_RUNNER)
    return f"{sys.executable} {runner}"
