"""Agent stdout lines to events, and what the outcome learns from them (Claude Code's stream-json).

Claude Code prints one JSON object per line. The facts pm-agent needs are found by type, never by
position: `{"type":"system","subtype":"init"}` carries the session id and the MCP servers' status;
each `{"type":"result"}` carries is_error, usage and total_cost_usd (a run may print several: the
last one wins, and the cost is cumulative across --resume). A line that is not a JSON object is kept
as a text event and counted, never fatal.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from pm_agent.agents.base import AgentEvent, EventKind, Outcome

__all__ = ["absorb", "parse_line"]


def _as_int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def parse_line(outcome: Outcome, seq: int, text: str, size: int, *, json_lines: bool = True) -> AgentEvent:
    """The event for one stdout line; JSON events also update `outcome`."""
    at = datetime.now(UTC)
    data: Any = None
    if json_lines:
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            outcome.non_json_lines += 1
            data = None
    if data is None:
        return AgentEvent(seq, EventKind.TEXT, at, text, size)
    return AgentEvent(seq, absorb(outcome, data), at, text, size, data)


# Claude Code's assistant-message errors that no retry mends: the account is not logged in (or its key is refused),
# or it has no credit. Its others (rate_limit, server_error, ...) pass: a retry may well work.
ACCOUNT_ERRORS = frozenset({"authentication_failed", "billing_error"})


def absorb(out: Outcome, data: dict[str, Any]) -> EventKind:
    """Update the outcome from one JSON event; the event's kind."""
    kind = data.get("type")
    session_id = data.get("session_id")
    if isinstance(session_id, str) and session_id and out.agent_session_id is None:
        out.agent_session_id = session_id
    if kind == "system":
        if data.get("subtype") != "init":
            return EventKind.SYSTEM
        if isinstance(session_id, str) and session_id:
            out.agent_session_id = session_id
        servers = data.get("mcp_servers")
        if isinstance(servers, list):
            for server in servers:
                if isinstance(server, dict) and "name" in server:
                    out.mcp_servers[str(server["name"])] = str(server.get("status", ""))
        return EventKind.INIT
    if kind == "result":
        _absorb_result(out, data)
        return EventKind.RESULT
    if kind == "assistant":
        error = data.get("error")  # Claude Code's own verdict on an API error it turned into this message
        if isinstance(error, str) and error.strip().lower() in ACCOUNT_ERRORS:
            out.account_error = error.strip().lower()
        return EventKind.ASSISTANT
    if kind == "user":
        return EventKind.USER
    return EventKind.OTHER


def _absorb_result(out: Outcome, data: dict[str, Any]) -> None:
    out.result_seen = True
    out.is_error = bool(data.get("is_error", False))
    subtype = data.get("subtype")
    out.result_subtype = str(subtype) if subtype is not None else None
    reason = data.get("terminal_reason")
    out.terminal_reason = str(reason) if reason is not None else None
    turns = data.get("num_turns")
    if isinstance(turns, int):
        out.num_turns = turns
    cost = data.get("total_cost_usd")
    if isinstance(cost, int | float) and not isinstance(cost, bool):
        out.total_cost_usd = float(cost)
    usage = data.get("usage")
    if isinstance(usage, dict):  # cumulative for the process: the last result holds the total
        out.input_tokens = (
            _as_int(usage.get("input_tokens"))
            + _as_int(usage.get("cache_creation_input_tokens"))
            + _as_int(usage.get("cache_read_input_tokens"))
        )
        out.output_tokens = _as_int(usage.get("output_tokens"))
    if out.is_error:
        text = data.get("result")
        status = data.get("api_error_status")
        detail = text if isinstance(text, str) and text else out.result_subtype or "error"
        out.error = f"{detail} (api status {status})" if status else str(detail)[:500]
