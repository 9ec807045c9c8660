"""A real target repository with a real test suite, and a helper that runs the PM loop on it."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pm_agent.config import PmConfig
from pm_agent.engine.events import RecordingListener
from pm_agent.engine.launch import start_run
from pm_agent.engine.loop import LoopOutcome, PmLoop
from pm_agent.engine.runctx import RunContext
from pm_agent.engine.taskflow import TaskFlow
from pm_agent.human.channels import EscalationChannel, PrintOnlyChannel
from pm_agent.testing.model_server import ModelServer
from pm_agent.testing.team import ScriptedTeam

PY = sys.executable


@pytest.fixture(autouse=True)
def _applied_record_is_fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """`TaskFlow._drive` takes the record `apply` returns instead of reading the task again: in every engine
    test, that record must equal a fresh read at that point (the slow path it replaces)."""
    apply = TaskFlow.apply

    async def checked(self: TaskFlow, *args: Any, **kwargs: Any) -> Any:
        known = await apply(self, *args, **kwargs)
        fresh = self.record()
        assert known == fresh, f"task-{self.task_id}: apply returned {known!r}, the store holds {fresh!r}"
        return known

    monkeypatch.setattr(TaskFlow, "apply", checked)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


@dataclass
class Target:
    repo: Path
    plan: Path
    team: ScriptedTeam
    server: ModelServer
    listener: RecordingListener

    def config(self, **overrides: object) -> PmConfig:
        base: dict[str, object] = {
            "max_parallel_agents": 3,
            # The scripts here were written for the path without a tester; each test counts sessions,
            # attempts or transitions of that path. The tester's path (the default tester_tiers) is
            # tested in test_tester_e2e.py, which passes tester_tiers itself.
            "tester_tiers": [],
            "environment": {
                "test_command": f"{PY} -m pytest -q -p no:cacheprovider",
                "lint_command": f"{PY} -m ruff check --no-cache src tests",
                "gate_timeout_s": 120,
            },
            "agent": {"isolated_home": True, "stuck_after_s": 60, "max_turns": 30, "time_budget_min": 5},
        }
        base.update(overrides)
        return PmConfig.model_validate(base)

    def start(self, channel: EscalationChannel | None = None, **overrides: object) -> RunContext:
        return start_run(
            self.repo,
            self.plan,
            None,
            listener=self.listener,
            channel=channel or PrintOnlyChannel(),
            config=self.config(**overrides),
        )

    def drive(self, rc: RunContext) -> LoopOutcome:
        return asyncio.run(PmLoop(rc).drive(poll_s=0.2))

    def log(self, branch: str) -> list[str]:
        return git(self.repo, "log", "--format=%s", branch).splitlines()


PYPROJECT = textwrap.dedent(
    """\
    [project]
    name = "calc"
    version = "0.0.1"

    [tool.pytest.ini_options]
    pythonpath = ["src"]

    [tool.ruff]
    line-length = 100
    """
)


@pytest.fixture
def target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], Target]]:
    """Build a target repo with the given plan text; the model server plays a ScriptedTeam."""
    team = ScriptedTeam()
    with ModelServer(fallback=team) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")

        def make(plan_text: str, at: str = "docs/plans/calc.md", files: Mapping[str, str] | None = None) -> Target:
            """`at`: where the plan's text goes; `files`: more files, such as the rest of a plan folder."""
            repo = tmp_path / "calc"
            (repo / "src" / "calc").mkdir(parents=True)
            (repo / "tests").mkdir()
            (repo / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
            (repo / "src" / "calc" / "__init__.py").write_text('"""calc."""\n', encoding="utf-8")
            (repo / "tests" / "test_smoke.py").write_text(
                "import calc\n\n\ndef test_import() -> None:\n    assert calc.__doc__ == 'calc.'\n", encoding="utf-8"
            )
            (repo / "README.md").write_text("# calc\n", encoding="utf-8")
            (repo / ".gitignore").write_text("__pycache__/\n", encoding="utf-8")
            plan = repo / at
            for path, text in {at: plan_text, **(files or {})}.items():
                (repo / path).parent.mkdir(parents=True, exist_ok=True)
                (repo / path).write_text(text, encoding="utf-8")
            git(repo, "init", "-q", "-b", "main")
            git(repo, "config", "user.name", "Test User")
            git(repo, "config", "user.email", "test@example.com")
            git(repo, "add", "-A")
            git(repo, "commit", "-q", "-m", "initial")
            return Target(repo, plan, team, server, RecordingListener())

        yield make
