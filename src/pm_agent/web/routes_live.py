"""Server-sent events that follow a run's events table, whichever process writes it.

The stream polls the table (the writer may be another process, so there is nothing to subscribe to)
and names each message by its event id: a browser reconnecting sends it back as Last-Event-ID and
the stream continues after it, so no move is missed across a restart of either side.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Query
from starlette.requests import Request
from starlette.responses import StreamingResponse

from pm_agent.store import EventRecord
from pm_agent.web.context import WebContext, web_context

router = APIRouter(prefix="/api", tags=["api"])
BATCH = 500
KEEPALIVE_S = 15.0  # a comment line now and then, so proxies and browsers keep an idle stream open


def sse_message(event: EventRecord) -> str:
    """One event as a server-sent message (`id:` is what comes back as Last-Event-ID)."""
    data = {
        "id": event.id,
        "kind": event.kind,
        "task_id": event.task_id,
        "payload": event.payload,
        "at": event.created_at.isoformat(),
    }
    return f"id: {event.id}\ndata: {json.dumps(data, default=str)}\n\n"


def _start(after: int, last_event_id: str | None) -> int:
    if last_event_id is not None and last_event_id.strip().isdigit():
        return int(last_event_id.strip())
    return after


@router.get(
    "/runs/{run_id}/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}, "description": "The run's events after `after`."}},
)
async def events(
    run_id: str,
    request: Request,
    ctx: Annotated[WebContext, Depends(web_context)],
    after: Annotated[int, Query(ge=0, description="Stream events with an id above this.")] = 0,
    follow: Annotated[bool, Query(description="Keep streaming new events; false: stop after the current ones.")] = True,
    last_event_id: Annotated[str | None, Header()] = None,
) -> StreamingResponse:
    """The run's events with id > `after` (or > Last-Event-ID on a reconnect), then new ones as they come."""
    store = ctx.store()
    await asyncio.to_thread(store.get_run, run_id)  # an unknown run: 404 before the stream starts

    async def stream() -> AsyncIterator[str]:
        cursor = _start(after, last_event_id)
        idle = 0.0
        yield "retry: 1000\n\n"
        while True:
            batch = await asyncio.to_thread(store.events, run_id, None, cursor, BATCH)
            for event in batch:
                cursor = event.id
                yield sse_message(event)
            if len(batch) == BATCH:
                continue
            if not follow or ctx.closing.is_set() or await request.is_disconnected():
                return  # closing: the browser reconnects (to the next server) from the last id it saw
            await asyncio.sleep(ctx.poll_s)
            idle = 0.0 if batch else idle + ctx.poll_s
            if idle >= KEEPALIVE_S:
                idle = 0.0
                yield ": keepalive\n\n"

    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)
