"""Scenarios for the scripted model server: assistant turns, and the requests they answer.

A *scenario* is a list of assistant turns. A turn is a `Turn` (text and/or tool calls), `Hang`
(never answers), `Fail` (an HTTP error status), or a function of the `ModelRequest` that returns one
of these. Requests reach a scenario through the marker `[scenario:NAME]` in their system prompt or
messages.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

__all__ = ["MARKER_RE", "Fail", "Hang", "ModelRequest", "Scenario", "ToolCall", "Turn", "TurnLike", "marker"]

MARKER_RE = re.compile(r"\[scenario:([A-Za-z0-9_.\-]+)\]")


def marker(name: str) -> str:
    """The text that routes a request to scenario `name`."""
    return f"[scenario:{name}]"


@dataclass(frozen=True)
class ToolCall:
    """One tool_use block: the tool name as the model sees it and its input."""

    name: str
    input: Mapping[str, Any]
    id: str | None = None


@dataclass(frozen=True)
class Turn:
    """One assistant message: optional text, then tool calls, streamed as the API streams them."""

    text: str | None = None
    tool_calls: tuple[ToolCall, ...] | list[ToolCall] = ()
    stop_reason: str | None = None  # default: "tool_use" when there are tool calls, else "end_turn"
    input_tokens: int = 100
    output_tokens: int = 20
    delay: float = 0.0  # seconds to wait before answering

    def resolved_stop_reason(self) -> str:
        """The stop_reason sent in message_delta."""
        if self.stop_reason is not None:
            return self.stop_reason
        return "tool_use" if self.tool_calls else "end_turn"


@dataclass(frozen=True)
class Hang:
    """Never answer: the connection stays open until the client goes away or the server stops."""


@dataclass(frozen=True)
class Fail:
    """Answer with an HTTP error of the API's type for it (500 api_error, 401 authentication_error, 529 ...)."""

    status: int = 500
    message: str = "scripted failure"


@dataclass
class ModelRequest:
    """A request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any  # decoded JSON, or the raw text when it is not JSON
    scenario: str | None = None
    turn_index: int | None = None  # index in the scenario's script; None when not advanced

    @property
    def endpoint(self) -> str:
        """The path without its query string."""
        return urlsplit(self.path).path

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The `messages` of the body (empty when absent)."""
        if isinstance(self.body, dict):
            messages = self.body.get("messages")
            if isinstance(messages, list):
                return [m for m in messages if isinstance(m, dict)]
        return []

    @property
    def session_id(self) -> str | None:
        """Claude Code's session id, from its request header."""
        for key, value in self.headers.items():
            if key.lower() == "x-claude-code-session-id":
                return value
        return None

    def system_text(self) -> str:
        """The system prompt as one string."""
        system = self.body.get("system") if isinstance(self.body, dict) else None
        return "\n".join(_texts(system))

    def conversation_text(self) -> str:
        """Every text, tool input and tool result of the conversation, in order, as one string."""
        return "\n".join(text for message in self.messages for text in _texts(message.get("content")))

    def last_user_text(self) -> str:
        """The text of the last user message (tool results included)."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return "\n".join(_texts(message.get("content")))
        return ""

    def tool_results(self) -> list[dict[str, Any]]:
        """The tool_result blocks of the last user message."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                content = message.get("content")
                if isinstance(content, list):
                    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
                return []
        return []

    def tool_result_text(self) -> str:
        """The text of every tool_result of the last user message."""
        return "\n".join(text for block in self.tool_results() for text in _texts(block.get("content")))

    def tool_names(self) -> list[str]:
        """The names of the tools offered to the model."""
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        if not isinstance(tools, list):
            return []
        return [str(t.get("name")) for t in tools if isinstance(t, dict)]


TurnLike = Turn | Hang | Fail | Callable[[ModelRequest], "Turn | Hang | Fail"]


@dataclass
class Scenario:
    """A named script of assistant turns.

    `per_session`: keep one position in the script per Claude Code session id (several sessions
    can then play the same script independently); otherwise one position for the scenario, shared
    by every session routed to it (so a resumed or follow-up session continues the script).
    `after`: what to answer once the script ran out.
    """

    name: str
    turns: list[TurnLike]
    per_session: bool = False
    after: TurnLike = field(default_factory=lambda: Turn(text="(end of scenario)"))


def _texts(content: Any) -> Iterator[str]:
    """Every string a content value carries: text blocks, tool inputs, nested tool results."""
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            yield from _texts(block)
    elif isinstance(content, dict):
        kind = content.get("type")
        if kind == "text" and isinstance(content.get("text"), str):
            yield content["text"]
        elif kind == "tool_use":
            yield json.dumps(content.get("input"), ensure_ascii=False)
        elif kind == "tool_result":
            yield from _texts(content.get("content"))
