"""The brain driving the REAL Claude Code CLI: sessions of demo tasks in worktrees of the demo repository.

The model server answers every request without a scenario marker with `DemoBrain` (its fallback);
the CLI runs the brain's Read, Write and Bash calls for real and reports through the real signal_back
MCP server into the real store; pm-agent's gates then judge the worktree.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pm_agent.agents.base import SessionLimits
from pm_agent.agents.claude import ClaudeRunner
from pm_agent.agents.session import AgentHost, SessionResult, answer_prompt, resume_session, start_session
from pm_agent.agents.slots import Worktrees
from pm_agent.config import load_config
from pm_agent.demo import DEMO_ANSWERS, DemoBrain, apply_files, demo_task, session_header
from pm_agent.gates import GateResult, run_integrity_checks, run_minimum_gates
from pm_agent.store import SessionStatus, SqliteStore, open_store
from pm_agent.testing.model_server import ModelServer
from pm_agent.testing.repo import commit_all

from .conftest import Demo, git, prompt_for

pytestmark = pytest.mark.claude


@dataclass
class Live:
    """A run in a real store, the real CLI as runner, the model server with the brain as fallback."""

    demo: Demo
    store: SqliteStore
    run_id: str
    host: AgentHost
    server: ModelServer
    tmp: Path

    async def worktree(self, task_id: str) -> tuple[Path, str]:
        """A fresh worktree for the task, from main; (path, base commit)."""
        base = git(self.demo.repo, "rev-parse", "HEAD").strip()
        tree = await Worktrees(self.demo.repo, self.tmp / "worktrees", "main").create(f"pm/textstats/{task_id}")
        return tree.path, base

    async def session(
        self, task_id: str, role: str, workdir: Path, *, attempt: int = 1, extra: str = ""
    ) -> SessionResult:
        header = session_header(role, f"task-{task_id}", attempt, workdir)
        return await start_session(
            self.host,
            run_id=self.run_id,
            task_id=task_id,
            role=role,
            prompt=prompt_for(self.demo, task_id, role, extra),
            workdir=workdir,
            attempt=attempt,
            system_prompt=f"{header}\nReport back only through the signal_back tool.",
        )

    def gates(self, task_id: str, workdir: Path, base: str, result: SessionResult) -> list[GateResult]:
        assert result.signal is not None
        task = self.demo.plan.task(task_id)
        env = load_config(self.demo.repo).environment
        ids = [t.id for t in self.demo.plan.tasks]
        payload = result.signal.payload
        return run_minimum_gates(task, workdir, base, payload, environment=env, known_task_ids=ids) + (
            run_integrity_checks(task, workdir, base, payload=payload)
        )

    def stored(self, result: SessionResult) -> list[tuple[str, bool]]:
        return [(s.kind, s.accepted) for s in self.store.signals_for_session(result.record.id)]


@pytest.fixture
def live(demo: Demo, tmp_path: Path, agent_home: Path, claude_bin: Path) -> Iterator[Live]:
    db = tmp_path / "state" / "state.db"
    store = open_store(db)
    head = git(demo.repo, "rev-parse", "HEAD").strip()
    run = store.create_run(demo.plan, baseline_sha=head, working_branch="pm/textstats", shared_context={}, config={})
    try:
        with ModelServer(fallback=DemoBrain()) as server:
            runner = ClaudeRunner(agent_home=agent_home, binary=claude_bin, max_retries=0)
            limits = SessionLimits(max_turns=20, stuck_after_s=60, time_budget_s=240, signal_grace_s=2.0)
            host = AgentHost(store, db, runner, limits=limits, env=server.env(), poll_s=0.1)
            yield Live(demo, store, run.id, host, server, tmp_path)
    finally:
        store.close()


def _commit_tasks(demo: Demo, upto: str) -> None:
    """Commit the final files of every task before `upto` (queue order) on main."""
    for task_id in demo.plan.queue:
        if task_id == upto:
            return
        data = demo_task(task_id)
        assert data is not None
        apply_files(demo.repo, data.final_files(DEMO_ANSWERS.get(data.ref)))
        commit_all(demo.repo, f"{data.title}\n\nRefs: {data.ref}")


def _failed(results: list[GateResult]) -> list[str]:
    return [f"{r.gate}: {r.evidence}" for r in results if not r.passed]


async def test_a_developer_session_of_the_first_task_passes_every_gate(live: Live) -> None:
    workdir, base = await live.worktree("1")
    result = await live.session("1", "developer", workdir)

    data = demo_task("task-1")
    assert data is not None
    for path, content in data.final_files().items():
        assert (workdir / path).read_text(encoding="utf-8") == content
        assert not (live.demo.repo / path).exists()  # only in the worktree
    assert result.status is SessionStatus.SIGNALLED
    assert result.outcome.ok, result.outcome
    assert result.signal is not None
    assert result.signal.kind == "complete"
    assert live.stored(result) == [("complete", True)]
    payload = result.signal.payload
    assert payload["stepId"] == "1"  # stored under the canonical task id
    assert payload["testEvidence"][1].startswith("7 passed")  # the real output of the CLI's Bash call
    assert payload["lintEvidence"][1] == "All checks passed!"
    assert _failed(live.gates("1", workdir, base, result)) == []
    first = next(r for r in live.server.requests if r.session_id == result.record.agent_session_id)
    assert "pm-agent session: role=developer task=task-1 attempt=1" in first.system_text()


async def test_the_question_is_answered_and_the_resumed_session_builds_the_answer(live: Live) -> None:
    _commit_tasks(live.demo, "6")
    workdir, base = await live.worktree("6")
    asked = await live.session("6", "developer", workdir)
    assert asked.signal is not None
    assert asked.signal.kind == "needs-user-input"
    assert "JSON or a plain aligned table" in asked.signal.payload["question"]
    assert not (workdir / "src/textstats/cli.py").exists()

    reply = "JSON by default for scripts; a --table flag for people."
    done = await resume_session(live.host, asked.record, answer_prompt(asked.signal.payload, reply))
    assert done.record.agent_session_id == asked.record.agent_session_id  # the same conversation
    assert done.signal is not None
    assert done.signal.kind == "complete", done.outcome
    assert live.stored(done) == [("complete", True)]
    assert 'DEFAULT_FORMAT = "json"' in (workdir / "src/textstats/cli.py").read_text()
    assert "textstats.cli:main" in (workdir / "pyproject.toml").read_text()
    assert _failed(live.gates("6", workdir, base, done)) == []


async def test_the_fixer_repairs_the_slip_the_gates_caught(live: Live) -> None:
    _commit_tasks(live.demo, "3")
    workdir, base = await live.worktree("3")
    first = await live.session("3", "developer", workdir)
    assert first.signal is not None
    assert first.signal.payload["testsClaimedPassing"] is True
    failed = [r for r in live.gates("3", workdir, base, first) if not r.passed]
    assert [r.gate for r in failed] == ["2-tests-added", "3-tests-run"]

    evidence = "Source: gates\n" + "\n\n".join(f"{r.gate}:\n{r.evidence}" for r in failed)
    fixed = await live.session("3", "fixer", workdir, attempt=2, extra=evidence)
    assert fixed.signal is not None
    assert fixed.signal.kind == "complete", fixed.outcome
    assert live.stored(fixed) == [("complete", True)]  # the fixer Read the file before rewriting it
    assert "groups -= 1" in (workdir / "src/textstats/counts.py").read_text()
    assert _failed(live.gates("3", workdir, base, fixed)) == []
