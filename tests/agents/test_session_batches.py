"""The monitor writes the lines an agent prints in batches: those that came while a write was under way go in
the next one. Every line is kept, in order; a line the store refuses is skipped alone; a batch never grows
past BATCH_MAX (the agent's output is read no faster than the store takes it)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import pytest

from pm_agent.agents import monitor
from pm_agent.agents.session import AgentHost, start_session
from pm_agent.errors import StoreError
from pm_agent.store import SessionStatus

from .conftest import World

LINES = 300
COMPLETE = {"signal": "complete", "stepId": "t1", "summary": "printed", "filesCreated": []}


def calls_of(world: World, refuse: str | None = None, slow_s: float = 0.0) -> list[list[tuple[int, str, Any]]]:
    """Each call of the store's record_session_events, with its lines; `refuse`: fail a batch holding it; `slow_s`:
    each write takes that long (lines pile up meanwhile, however fast the machine reads them)."""
    calls: list[list[tuple[int, str, Any]]] = []
    real = world.store.record_session_events

    def record(session_id: int, lines: Sequence[tuple[int, str, Any]], touched_at: Any = None) -> int:
        calls.append(list(lines))
        time.sleep(slow_s)
        if refuse is not None and any(refuse in str(line[2]) for line in lines):
            raise StoreError("refused for the test")
        return real(session_id, lines, touched_at)

    world.store.record_session_events = record  # type: ignore[method-assign]
    return calls


async def burst(world: World, host: AgentHost) -> tuple[Any, list[str]]:
    """A session that prints LINES lines at once, then signals; the lines stored, checked for order."""
    steps: list[dict[str, Any]] = [{"print": f"line {n}"} for n in range(LINES)] + [{"signal": COMPLETE}]
    marker = world.script("burst", steps)
    result = await start_session(
        host, run_id=world.run_id, task_id="t1", role="developer", prompt=marker, workdir=world.repo
    )
    events = world.store.session_events(result.record.id)
    assert [e.seq for e in events] == sorted({e.seq for e in events})  # unique, in order
    return result, [e.payload for e in events if isinstance(e.payload, str) and e.payload.startswith("line ")]


async def test_a_burst_of_lines_is_stored_whole_in_few_writes(world: World, fake_host: AgentHost) -> None:
    # Writes of 20 ms, as the limit's test below: with the store's own speed the batches' size was the machine's
    # (a loaded one read the agent no faster than it wrote, three lines a write, and the test failed).
    calls = calls_of(world, slow_s=0.02)
    result, printed = await burst(world, fake_host)
    assert result.status is SessionStatus.SIGNALLED
    assert printed == [f"line {n}" for n in range(LINES)]
    assert len(calls) < LINES // 4, [len(c) for c in calls]  # one write per line would be 300 or more
    assert max(len(c) for c in calls) > 8
    assert world.store.get_session(result.record.id).last_output_at is not None


async def test_a_refused_line_is_skipped_alone(world: World, fake_host: AgentHost) -> None:
    calls_of(world, refuse="line 150")
    result, printed = await burst(world, fake_host)
    assert result.status is SessionStatus.SIGNALLED  # the session goes on and ends as it would
    assert printed == [f"line {n}" for n in range(LINES) if n != 150]


async def test_a_batch_never_grows_past_its_limit(
    world: World, fake_host: AgentHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(monitor, "BATCH_MAX", 8)
    calls = calls_of(world, slow_s=0.02)  # 300 lines at once outrun 20 ms writes: full batches on any machine
    _, printed = await burst(world, fake_host)
    assert printed == [f"line {n}" for n in range(LINES)]
    sizes = [len(c) for c in calls]
    assert max(sizes) == 8, sizes  # full batches: without the limit they hold dozens (the first test)
