"""Recognising a lost conversation (the fake agent fails an unknown --resume id as Claude Code does) and the
fresh session's prompt; the callers' fallback runs with the real CLI in tests/engine and tests/intake."""

from __future__ import annotations

from pm_agent.agents.session import (
    CONVERSATION_LOST,
    LOST_LINE,
    AgentHost,
    conversation_lost,
    lost_conversation_prompt,
    record_lost,
    resume_session,
    start_session,
)
from pm_agent.store import SessionStatus

from .conftest import World


async def test_an_unknown_conversation_is_lost_and_recorded(world: World, fake_host: AgentHost) -> None:
    record = world.store.create_session(world.run_id, "t1", "developer", 1, "tok-lost", "claude", str(world.repo))
    record = world.store.update_session(record.id, agent_session_id="no-such-session", status=SessionStatus.EXITED)
    result = await resume_session(fake_host, record, "the answer: integers only")
    assert conversation_lost(result)
    line = record_lost(world.store, record, result)
    assert line.startswith(f"task-t1: the developer's conversation of session {record.id} is gone")
    events = [(e.kind, e.payload) for e in world.store.events(world.run_id, "t1") if e.kind == CONVERSATION_LOST]
    assert events == [
        (CONVERSATION_LOST, {"session": result.record.id, "resumed": record.id, "agent_session_id": "no-such-session"})
    ]


async def test_a_session_that_ran_is_not_lost(world: World, fake_host: AgentHost) -> None:
    first = await start_session(
        fake_host, run_id=world.run_id, task_id="t2", role="developer", prompt="hello", workdir=world.repo
    )
    assert not conversation_lost(first)  # not a resume
    again = await resume_session(fake_host, first.record, "go on")
    assert again.record.resumed_from == first.record.id
    assert not conversation_lost(again)  # the conversation was there


def test_the_fresh_prompt_is_the_new_attempts_plus_the_line_and_the_message() -> None:
    prompt = lost_conversation_prompt("Implement task-3.\n", "The user answered: yes")
    assert prompt.startswith("Implement task-3.\n\n## Lost conversation\n")
    assert LOST_LINE in prompt
    assert prompt.rstrip().endswith("The user answered: yes")
