"""The intake's lost conversation, with the real CLI: the analyst asks, its conversation file is deleted before the
answer resumes it, and the intake falls back once to a fresh analyst session (the first prompt, the line that
says the conversation was lost, the human's answer) that writes the requirements."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pm_agent.agents.header import SessionHeader
from pm_agent.agents.session import CONVERSATION_LOST, LOST_LINE
from pm_agent.engine.events import RecordingListener
from pm_agent.human.channels import ScriptedChannel
from pm_agent.intake import Phase, new_request, requirements_hash
from pm_agent.store import EscalationRecord, SessionStatus, default_store_path, open_store
from pm_agent.testing.scenario import ModelRequest, Turn
from pm_agent.testing.team import Step, write
from pm_agent.testing.team import signal as signal_step

from .conftest import DAY, PATHS, PLAN_GOOD, REQUEST, REQUIREMENTS, Target, config

pytestmark = [pytest.mark.claude, pytest.mark.slow]

QUESTION = "Should rows be separated by newlines or by commas?"
ANSWER = "newlines, one row a line"


def done(summary: str) -> Step:
    return signal_step({"signal": "complete", "summary": summary, "selfAssessment": "confident"})


def test_a_lost_analyst_conversation_falls_back_to_a_fresh_session(calc: Callable[[], Target]) -> None:
    t = calc()
    fresh: list[str] = []
    ask = signal_step({"signal": "needs-user-input", "question": QUESTION, "context": "the request does not say"})

    def first(s: SessionHeader, r: ModelRequest) -> Turn:
        text = r.conversation_text()
        if LOST_LINE not in text:
            return ask(s, r)
        fresh.append(text)
        return write(PATHS.design_rel, REQUIREMENTS)(s, r)

    t.team.scripts.update(
        {
            ("task-requirements", "analyst"): [first, done("S1 written")],
            ("task-plan", "planner"): [write(PATHS.plan_rel, PLAN_GOOD), done("one task")],
        }
    )
    deleted: list[str] = []

    def user(esc: EscalationRecord) -> str | None:
        if esc.source == "intake-approval":
            return "abort"  # the analyst's part is what this test is about
        store = open_store(default_store_path(t.repo))
        try:
            assert esc.session_id is not None
            agent_id = store.get_session(esc.session_id).agent_session_id
        finally:
            store.close()
        for found in (t.repo / ".pm-agent").rglob(f"{agent_id}.jsonl"):
            found.unlink()
            deleted.append(str(found))
        return ANSWER

    listener = RecordingListener()
    result = new_request(
        t.repo, REQUEST, listener=listener, channel=ScriptedChannel(user), config=config(), poll_s=0.2, today=DAY
    )
    assert deleted, "no conversation file was found to delete"
    assert result.intake is Phase.FAILED  # aborted at the approval, after the requirements and the plan
    store = open_store(default_store_path(t.repo))
    try:
        analyst = store.list_sessions(result.intake_run, "requirements")
        assert [(s.status, s.resumed_from) for s in analyst] == [
            (SessionStatus.SIGNALLED, None),
            (SessionStatus.CRASHED, analyst[0].id),
            (SessionStatus.SIGNALLED, None),
        ]
        lost = [e.payload for e in store.events(result.intake_run, "requirements") if e.kind == CONVERSATION_LOST]
        assert lost == [
            {"session": analyst[1].id, "resumed": analyst[0].id, "agent_session_id": analyst[0].agent_session_id}
        ]
        locked = [e.payload["sha256"] for e in store.events(result.intake_run) if e.kind == "requirements.locked"]
        assert locked == [requirements_hash(REQUIREMENTS)]
    finally:
        store.close()
    assert len(fresh) == 1
    assert f"The user answered: {ANSWER}" in fresh[0]
    assert CONVERSATION_LOST in listener.kinds()
