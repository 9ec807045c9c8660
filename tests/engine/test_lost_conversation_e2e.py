"""A conversation Claude Code no longer has, with the real CLI: the developer asks a question, its conversation
file is deleted before the answer resumes it, `--resume` ends with "No conversation found", and the task flow
falls back once to a fresh session (the new attempt's prompt, the line that says the conversation was lost, and
the human's answer), records `session.conversation_lost`, and the task completes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from pm_agent.agents.header import SessionHeader
from pm_agent.agents.session import CONVERSATION_LOST, LOST_LINE
from pm_agent.engine.api import drive_run
from pm_agent.human.channels import ScriptedChannel
from pm_agent.store import EscalationRecord, SessionStatus, default_store_path, open_store
from pm_agent.testing.scenario import ModelRequest, Turn
from pm_agent.testing.team import signal as signal_step
from pm_agent.testing.team import write

from .calc_plan import ADD, ADDITION, REVIEW, TEST_ADD, claimed, plan
from .conftest import Target, git

pytestmark = [pytest.mark.claude, pytest.mark.slow]

QUESTION = "Should add accept floats?"
ANSWER = "integers only"
ASK = signal_step({"signal": "needs-user-input", "question": QUESTION, "context": "the plan does not say"})


def test_a_lost_conversation_falls_back_to_a_fresh_session(target: Callable[[str], Target]) -> None:
    t = target(plan(ADDITION))
    fresh_prompts: list[str] = []

    def first(s: SessionHeader, r: ModelRequest) -> Turn:
        """Ask in the first conversation; in a fresh one (the conversation was lost) start the work."""
        text = r.conversation_text()
        if LOST_LINE not in text:
            return ASK(s, r)
        fresh_prompts.append(text)
        return write("src/calc/add.py", ADD)(s, r)

    t.team.scripts = {
        ("task-1", "developer"): [
            first,
            write("tests/test_add.py", TEST_ADD),
            claimed({"src/calc/add.py": ADD}, [("add(a, b) returns the sum", "src/calc/add.py", "return")]),
        ],
        ("*", "reviewer"): REVIEW,
    }
    deleted: list[str] = []

    def answer(esc: EscalationRecord) -> str:
        """Delete the asking session's conversation from the agent's HOME, then answer."""
        store = open_store(default_store_path(t.repo))
        try:
            assert esc.session_id is not None
            agent_id = store.get_session(esc.session_id).agent_session_id
        finally:
            store.close()
        assert agent_id
        for found in (t.repo / ".pm-agent").rglob(f"{agent_id}.jsonl"):
            found.unlink()
            deleted.append(str(found))
        return ANSWER

    rc = t.start(channel=ScriptedChannel(answer))
    result = asyncio.run(drive_run(rc, 0.2))
    events = "\n".join(f"{k}: {m}" for k, m, _ in t.listener.events)
    assert deleted, "no conversation file was found to delete"
    assert result.final is not None, events
    assert result.final.passed, events

    store = open_store(default_store_path(t.repo))
    try:
        sessions = store.list_sessions(rc.run_id, "1")
        developers = [s for s in sessions if s.role == "developer"]
        # The first session, the resume that found no conversation, the fresh session that did the work.
        assert [(s.status, s.resumed_from) for s in developers] == [
            (SessionStatus.SIGNALLED, None),
            (SessionStatus.CRASHED, developers[0].id),
            (SessionStatus.SIGNALLED, None),
        ]
        assert "No conversation found" in (developers[1].last_lines or "")
        assert developers[2].attempt == developers[0].attempt
        assert developers[2].agent_session_id != developers[0].agent_session_id
        lost = [e.payload for e in store.events(rc.run_id, "1") if e.kind == CONVERSATION_LOST]
        assert lost == [
            {
                "session": developers[1].id,
                "resumed": developers[0].id,
                "agent_session_id": developers[0].agent_session_id,
            }
        ]
        assert store.get_task(rc.run_id, "1").state == "completed"
    finally:
        store.close()
    # The fresh session got the task's prompt, the line, and the human's answer.
    assert len(fresh_prompts) == 1
    assert "add(a, b) returns the sum" in fresh_prompts[0]
    assert f"The user answered: {ANSWER}" in fresh_prompts[0]
    assert CONVERSATION_LOST in t.listener.kinds()
    assert git(t.repo, "show", f"{rc.run.working_branch}:src/calc/add.py") == ADD
