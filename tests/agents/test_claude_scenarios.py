"""The real Claude Code CLI against the scripted model server: seed 004's runtime scenarios.

Each test scripts the model's turns; Claude Code runs the tools for real (Write, Bash, the
signal_back MCP server on the real store) in a real git worktree.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pm_agent.agents.base import SessionRequest, StopReason
from pm_agent.agents.claude import SIGNAL_TOOL
from pm_agent.agents.monitor import SessionMonitor
from pm_agent.agents.process import group_alive
from pm_agent.agents.session import (
    AgentHost,
    answer_prompt,
    continuation_prompt,
    followup_done_prompt,
    resume_session,
    start_session,
)
from pm_agent.agents.slots import Slot, SlotPool, Worktrees
from pm_agent.signals import mcp_config, new_token
from pm_agent.store import SessionStatus
from pm_agent.testing.model_server import Hang, ModelRequest, ModelServer, Scenario, ToolCall, Turn, marker
from pm_agent.testing.repo import git

from .conftest import World

pytestmark = pytest.mark.claude

ROLE_TEXT = "You are the developer role of pm-agent: implement the task, then call signal_back once."


def signal(**payload: Any) -> ToolCall:
    return ToolCall(SIGNAL_TOOL, payload)


def complete(summary: str, **evidence: Any) -> ToolCall:
    return signal(signal="complete", stepId="t1", summary=summary, **evidence)


async def _worktree(world: World, branch: str) -> Path:
    return (await Worktrees(world.repo, world.tmp / "worktrees", "main").create(branch)).path


async def test_write_bash_and_complete(world: World, claude_host: AgentHost, model_server: ModelServer) -> None:
    """Scenario 1: a file written with Write, a command run with Bash, complete with evidence."""
    worktree = await _worktree(world, "feat/t1")
    model_server.add(
        Scenario(
            "build",
            [
                Turn(text="Writing the file.", tool_calls=[
                    ToolCall("Write", {"file_path": str(worktree / "hello.txt"), "content": "hello\n"})]),
                Turn(tool_calls=[ToolCall("Bash", {"command": "cat hello.txt && echo bash-ran", "description": "x"})]),
                lambda r: Turn(tool_calls=[complete("wrote hello.txt", filesCreated=["hello.txt"],
                                                    testEvidence=[r.tool_result_text()])]),
                Turn(text="Done."),
            ],
        )
    )  # fmt: skip
    result = await start_session(
        claude_host, run_id=world.run_id, task_id="t1", role="developer", workdir=worktree,
        prompt="Create hello.txt. " + marker("build"), system_prompt=ROLE_TEXT,
    )  # fmt: skip
    assert (worktree / "hello.txt").read_text() == "hello\n"
    assert not (world.repo / "hello.txt").exists()
    assert result.status is SessionStatus.SIGNALLED
    assert result.outcome.ok, result.outcome
    stored = world.store.signals_for_session(result.record.id)
    assert [(s.kind, s.accepted) for s in stored] == [("complete", True)]
    assert stored[0].payload["testEvidence"] == ["hello\nbash-ran"]
    record = world.store.get_session(result.record.id)
    assert record.agent_session_id is not None
    assert record.agent_session_id == model_server.requests_for("build")[0].session_id
    assert record.cost_usd > 0
    assert record.input_tokens > 0
    assert record.output_tokens > 0
    assert result.outcome.mcp_servers == {"pm": "connected"}
    first = model_server.requests_for("build")[0]
    assert SIGNAL_TOOL in first.tool_names()  # sent up front: ENABLE_TOOL_SEARCH=false
    assert ROLE_TEXT in first.system_text()
    assert "Create hello.txt." in first.conversation_text()
    kinds = {e.kind for e in world.store.session_events(record.id)}
    assert {"system/init", "assistant", "user", "result"} <= kinds
    # What else Claude Code sent: no count_tokens, no title/summary side request in -p mode.
    others = [(r.method, r.endpoint) for r in model_server.requests if r.scenario is None]
    assert set(others) <= {("HEAD", "/api/hello")}, others


async def test_needs_user_input_then_the_same_session_resumes_with_the_answer(
    world: World, claude_host: AgentHost, model_server: ModelServer
) -> None:
    """Scenario 2: the session is ended after its question and resumed (--resume) with the answer."""
    question = signal(signal="needs-user-input", stepId="t1", question="Which greeting?", context="hi or bonjour")

    def use_answer(request: ModelRequest) -> Turn:
        greeting = "bonjour" if "bonjour" in request.last_user_text() else "unknown"
        return Turn(tool_calls=[ToolCall("Write", {"file_path": "greeting.txt", "content": greeting})])

    model_server.add(
        Scenario("ask", [Turn(tool_calls=[question]), Hang(), use_answer, Turn(tool_calls=[complete("greeted")]),
                         Turn(text="Done.")])
    )  # fmt: skip
    first = await start_session(
        claude_host, run_id=world.run_id, task_id="t1", role="developer", workdir=world.repo,
        prompt="Greet the user. " + marker("ask"),
    )  # fmt: skip
    assert first.signal is not None
    assert first.signal.kind == "needs-user-input"
    assert first.outcome.stopped is StopReason.SIGNAL  # killed after its grace: it was still waiting on the model
    assert first.status is SessionStatus.SIGNALLED

    second = await resume_session(claude_host, first.record, answer_prompt(first.signal.payload, "Use bonjour"))
    assert second.record.resumed_from == first.record.id
    assert second.record.agent_session_id == first.record.agent_session_id
    assert second.signal is not None
    assert second.signal.kind == "complete"
    assert (world.repo / "greeting.txt").read_text() == "bonjour"
    resumed = model_server.requests_for("ask")[2]
    assert resumed.session_id == first.record.agent_session_id
    history = resumed.conversation_text()
    assert "Greet the user." in history  # the earlier conversation came along
    assert "Which greeting?" in history  # ... with the signal call
    assert "The user answered: Use bonjour" in resumed.last_user_text()
    assert second.record.cost_usd > 0


async def test_partially_complete_starts_a_fresh_session_of_the_same_role(
    world: World, claude_host: AgentHost, model_server: ModelServer
) -> None:
    """Scenario 3: a new session (not a resume) whose prompt carries progress and continuationPoint."""
    partial = signal(
        signal="partially-complete", stepId="t1", progress="parser written", continuationPoint="write the tests"
    )
    model_server.add(Scenario("part1", [Turn(tool_calls=[partial]), Turn(text="Out of context.")]))
    model_server.add(Scenario("part2", [Turn(tool_calls=[complete("tests written")]), Turn(text="Done.")]))
    first = await start_session(
        claude_host, run_id=world.run_id, task_id="t1", role="developer", workdir=world.repo,
        prompt="Build the parser. " + marker("part1"),
    )  # fmt: skip
    assert first.signal is not None
    assert first.signal.kind == "partially-complete"
    prompt = continuation_prompt("Build the parser. " + marker("part2"), first.signal.payload)
    second = await start_session(
        claude_host, run_id=world.run_id, task_id="t1", role=first.record.role, workdir=world.repo, prompt=prompt
    )
    assert second.record.resumed_from is None
    assert second.record.role == "developer"
    assert second.record.agent_session_id != first.record.agent_session_id
    assert second.signal is not None
    assert second.signal.kind == "complete"
    sent = model_server.requests_for("part2")[0].conversation_text()
    assert "parser written" in sent
    assert "write the tests" in sent
    assert "partially-complete" not in sent  # a fresh conversation, not the old one


async def test_role_followup_runs_the_target_role_then_resumes_the_asker(
    world: World, claude_host: AgentHost, model_server: ModelServer
) -> None:
    """Scenario 4: needs-role-followup with resume true: planner runs, then the developer is resumed."""
    ask = signal(
        signal="needs-role-followup", stepId="t1", targetRole="pathseeker", reason="the step is too big",
        context="split parsing from validation", resume=True,
    )  # fmt: skip

    def after_followup(request: ModelRequest) -> Turn:
        assert "finished" in request.last_user_text()
        return Turn(tool_calls=[complete("implemented step 1 of the split plan")])

    model_server.add(Scenario("dev", [Turn(tool_calls=[ask]), Turn(text="Waiting for the planner."),
                                      after_followup, Turn(text="Done.")]))  # fmt: skip
    model_server.add(
        Scenario("plan", [Turn(tool_calls=[ToolCall("Write", {"file_path": "PLAN.md", "content": "1. parse\n"})]),
                          Turn(tool_calls=[complete("split into parse and validate")]), Turn(text="Done.")])
    )  # fmt: skip
    dev = await start_session(
        claude_host, run_id=world.run_id, task_id="t1", role="developer", workdir=world.repo,
        prompt="Implement parsing and validation. " + marker("dev"),
    )  # fmt: skip
    assert dev.signal is not None
    payload = dev.signal.payload
    assert (payload["targetRole"], payload["resume"]) == ("planner", True)

    planner = await start_session(
        claude_host, run_id=world.run_id, task_id="t1", role=payload["targetRole"], workdir=world.repo,
        prompt=f"The developer asks: {payload['reason']}. {payload['context']}. " + marker("plan"),
    )  # fmt: skip
    assert planner.signal is not None
    assert planner.signal.kind == "complete"
    assert (world.repo / "PLAN.md").exists()

    summary = planner.signal.payload["summary"]
    back = await resume_session(claude_host, dev.record, followup_done_prompt(payload, planner.outcome, summary))
    assert back.signal is not None
    assert back.signal.kind == "complete"
    assert back.record.resumed_from == dev.record.id
    assert back.record.agent_session_id == dev.record.agent_session_id
    # Claude Code reports the conversation's total cost; each row keeps its own share (2 turns each).
    assert back.outcome.total_cost_usd == pytest.approx(dev.record.cost_usd + back.record.cost_usd)
    assert back.record.cost_usd == pytest.approx(dev.record.cost_usd)
    roles = [s.role for s in world.store.list_sessions(world.run_id, "t1")]
    assert roles == ["developer", "planner", "developer"]
    resumed = model_server.requests_for("dev")[2]
    assert "split parsing from validation" in resumed.conversation_text()
    assert "split into parse and validate" in resumed.last_user_text()


async def test_exit_without_a_signal_is_recorded_as_a_crash(
    world: World, claude_host: AgentHost, model_server: ModelServer
) -> None:
    """Scenario 5: no signal (an API error; a model that just stops) -> crashed, exit code, last lines."""
    from pm_agent.testing.model_server import Fail

    model_server.add(Scenario("api-down", [Fail(500, "the model is down")]))
    model_server.add(Scenario("quiet", [Turn(text="I think I am finished.")]))
    failed = await start_session(
        claude_host, run_id=world.run_id, task_id="t1", role="developer", workdir=world.repo,
        prompt="Do it. " + marker("api-down"),
    )  # fmt: skip
    assert failed.status is SessionStatus.CRASHED
    assert failed.record.exit_code == 1
    assert failed.outcome.is_error
    assert '"is_error":true' in failed.record.last_lines
    quiet = await start_session(
        claude_host, run_id=world.run_id, task_id="t2", role="developer", workdir=world.repo,
        prompt="Do it. " + marker("quiet"),
    )  # fmt: skip
    assert quiet.status is SessionStatus.CRASHED
    assert quiet.record.exit_code == 0
    assert "I think I am finished." in quiet.record.last_lines
    assert quiet.outcome.crashed


async def test_a_model_that_stops_answering_gets_the_session_killed_as_stuck(
    world: World, claude_host: AgentHost, model_server: ModelServer
) -> None:
    """Scenario 6: the model server hangs; no output for stuck_after -> the process group is killed."""
    model_server.add(
        Scenario("stall", [Turn(tool_calls=[ToolCall("Bash", {"command": "echo started", "description": "x"})]),
                           Hang()])
    )  # fmt: skip
    limits = replace(claude_host.limits, stuck_after_s=3.0)
    started = time.monotonic()
    result = await start_session(
        claude_host, run_id=world.run_id, task_id="t1", role="developer", workdir=world.repo,
        prompt="Work. " + marker("stall"), limits=limits,
    )  # fmt: skip
    assert result.status is SessionStatus.STUCK
    assert result.record.pid is not None
    assert not group_alive(result.record.pid)
    assert result.outcome.exit_code == 143  # Claude Code ended on SIGTERM, no SIGKILL needed
    assert len(model_server.requests_for("stall")) == 2  # it was waiting on the hung request
    # start-up (~1-3 s), the hung request, stuck_after, then SIGTERM and at most 3 s to SIGKILL
    assert time.monotonic() - started < 3.0 + 15
    record = world.store.get_session(result.record.id)
    assert record.ended_at is not None
    assert record.last_output_at is not None
    assert (record.ended_at - record.last_output_at).total_seconds() < 3.0 + 5


async def test_a_signal_with_another_sessions_token_is_refused(
    world: World, claude_host: AgentHost, model_server: ModelServer
) -> None:
    """Scenario 7: an agent holding another session's token cannot signal for its own task."""
    other_token = new_token()
    other = world.store.create_session(world.run_id, "t2", "developer", 1, other_token, "claude", str(world.repo))
    other = world.store.update_session(other.id, status=SessionStatus.RUNNING)
    mine = world.store.create_session(world.run_id, "t1", "developer", 1, new_token(), "claude", str(world.repo))
    seen: list[str] = []

    def read_refusal(request: ModelRequest) -> Turn:
        seen.append(request.tool_result_text())
        return Turn(text="My signal was refused.")

    model_server.add(Scenario("steal", [Turn(tool_calls=[complete("done")]), read_refusal]))
    request = SessionRequest(
        prompt="Finish t1. " + marker("steal"), workdir=world.repo, role="developer", env=claude_host.env,
        limits=claude_host.limits, mcp_config=mcp_config(world.db, other_token),
    )  # fmt: skip
    session = await claude_host.runner.start(request)
    result = await SessionMonitor(world.store, mine.id, session, limits=claude_host.limits, poll_s=0.1).run()
    refused = world.store.signals_for_session(other.id)
    assert [(s.kind, s.accepted) for s in refused] == [("complete", False)]
    assert "stepId" in refused[0].reason
    assert world.store.signals_for_session(mine.id) == []
    assert result.status is SessionStatus.CRASHED  # it never got a signal accepted
    assert "Signal refused" in seen[0]


async def test_three_slots_run_at_once_each_in_its_own_worktree(
    world: World, claude_host: AgentHost, model_server: ModelServer
) -> None:
    """Scenario 8: three tasks in three slots overlap in time; each changes only its own worktree."""
    tasks = ["t1", "t2", "t3"]
    for task in tasks:
        model_server.add(
            Scenario(f"slot-{task}", [
                Turn(tool_calls=[ToolCall("Write", {"file_path": f"{task}.txt", "content": task})]),
                Turn(tool_calls=[ToolCall("Bash", {"command": "sleep 2 && git status --porcelain",
                                                   "description": "x"})]),
                lambda r, task=task: Turn(tool_calls=[signal(signal="complete", stepId=task,
                                                             summary=r.tool_result_text())]),
                Turn(text="Done."),
            ])
        )  # fmt: skip
    queue = list(tasks)
    changed: dict[str, str] = {}

    async def work(slot: Slot, task: str) -> Any:
        assert slot.worktree is not None
        result = await start_session(
            claude_host, run_id=world.run_id, task_id=task, role="developer", workdir=slot.worktree.path,
            prompt=f"Task {task}. " + marker(f"slot-{task}"),
        )  # fmt: skip
        changed[task] = git(slot.worktree.path, "status", "--porcelain")
        return result

    pool: SlotPool[str, Any] = SlotPool(
        3,
        next_ready=lambda: queue.pop(0) if queue else None,
        work=work,
        worktrees=Worktrees(world.repo, world.tmp / "worktrees", "main"),
        branch_for=lambda task: f"feat/{task}",
        succeeded=lambda result: result.status is SessionStatus.SIGNALLED,
    )
    runs = await asyncio.wait_for(pool.run(), 150)
    assert len({run.slot for run in runs}) == 3
    assert all(run.ok for run in runs), [(run.error, run.result) for run in runs]
    for task in tasks:
        assert changed[task] == f"?? {task}.txt"
        assert git(world.repo, "rev-parse", f"feat/{task}") == git(world.repo, "rev-parse", "main")
    assert all(run.kept_worktree is None and run.worktree is not None and not run.worktree.path.exists()
               for run in runs)  # fmt: skip
    sessions = [world.store.list_sessions(world.run_id, task)[0] for task in tasks]
    latest_start = max(s.started_at for s in sessions)
    earliest_end = min(s.ended_at for s in sessions if s.ended_at is not None)
    assert latest_start < earliest_end, "the three sessions did not overlap"
    assert not list(world.repo.glob("t*.txt"))


async def test_an_agent_that_runs_git_commit_is_caught(
    world: World, claude_host: AgentHost, model_server: ModelServer
) -> None:
    """Scenario 9: an agent committing through Bash gets its result refused (tampered)."""
    worktree = await _worktree(world, "feat/t1")
    model_server.add(
        Scenario("sneaky", [
            Turn(tool_calls=[ToolCall("Write", {"file_path": "x.txt", "content": "x"})]),
            Turn(tool_calls=[ToolCall("Bash", {"command": "git add x.txt && git commit -qm sneaky && echo ok",
                                               "description": "commit"})]),
            Turn(tool_calls=[complete("committed it myself")]),
            Turn(text="Done."),
        ])
    )  # fmt: skip
    head = git(worktree, "rev-parse", "HEAD")
    result = await start_session(
        claude_host, run_id=world.run_id, task_id="t1", role="developer", workdir=worktree,
        prompt="Add x.txt. " + marker("sneaky"),
    )  # fmt: skip
    assert git(worktree, "rev-parse", "HEAD") != head  # the commit really happened
    assert result.signal is not None
    assert result.outcome.tampered
    assert result.outcome.tamper_reason is not None
    assert "committed" in result.outcome.tamper_reason
    assert not result.outcome.ok
