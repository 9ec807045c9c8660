"""Reading a Claude Code conversation: how far a scripted session got, the user's answer, the contract.

The demo's model keeps no state between requests: everything it needs is in the messages it is sent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import yaml

__all__ = ["ANSWER_RE", "Conversation", "parse_contract", "result_text"]

ANSWER_RE: Final = re.compile(r"The user answered:[ \t]*(?P<answer>[^\n]*)")


def parse_contract(text: str) -> dict[str, Any] | None:
    """The `task_contract:` YAML block of a prompt as data, None when there is none or it does not parse."""
    start = text.find("task_contract:")
    if start < 0:
        return None
    lines = text[start:].splitlines()
    block = [lines[0]]
    for line in lines[1:]:
        if line.strip() and not line.startswith((" ", "\t")):
            break
        block.append(line)
    try:
        data = yaml.safe_load("\n".join(block))
    except yaml.YAMLError:
        return None
    contract = data.get("task_contract") if isinstance(data, dict) else None
    return contract if isinstance(contract, dict) else None


def _blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _user_texts(message: Mapping[str, Any]) -> list[str]:
    """The text a user message says itself (tool results left out)."""
    if message.get("role") != "user":
        return []
    return [str(b.get("text", "")) for b in _blocks(message) if b.get("type") == "text"]


def _tool_uses(message: Mapping[str, Any]) -> int:
    if message.get("role") != "assistant":
        return 0
    return sum(1 for b in _blocks(message) if b.get("type") == "tool_use")


def result_text(block: Mapping[str, Any]) -> str:
    """The text of a tool result block (its content as a string or its text parts joined)."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


@dataclass(frozen=True)
class Conversation:
    """What the session did so far: tool calls made since the last answer, the answer, the prompt."""

    used: int  # tool calls made in the current phase (after the user's answer, if there is one)
    answer: str | None
    prompt: str

    @classmethod
    def read(cls, messages: Sequence[Mapping[str, Any]]) -> Conversation:
        """Read the conversation so far from the request's messages."""
        start, answer = 0, None
        prompt = ""
        for index, message in enumerate(messages):
            for text in _user_texts(message):
                if not prompt and "task_contract:" in text:
                    prompt = text
                found = ANSWER_RE.search(text)
                if found is not None:
                    start, answer = index, found["answer"].strip()
        if not prompt:
            prompt = "\n".join(t for m in messages for t in _user_texts(m))
        used = sum(_tool_uses(m) for m in messages[start:])
        return cls(used=used, answer=answer, prompt=prompt)
