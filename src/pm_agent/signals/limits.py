"""Size limits on what an agent sends through signal_back, so one session cannot bloat the store.

A payload is measured as compact UTF-8 JSON. Over MAX_PAYLOAD_BYTES it is refused unread; a refused
payload is stored as sent only up to REFUSED_KEEP_BYTES (refusals are an audit trail, and an agent
may make many); a refusal lists at most MAX_PROBLEMS problems.
"""

from __future__ import annotations

import json
from typing import Any, Final

__all__ = ["MAX_PAYLOAD_BYTES", "MAX_PROBLEMS", "REFUSED_KEEP_BYTES", "kept_payload", "payload_bytes", "problem_lines"]

MAX_PAYLOAD_BYTES: Final = 256 * 1024
"""The largest payload (compact UTF-8 JSON) signal_back takes; evidence is key lines, not whole logs."""
REFUSED_KEEP_BYTES: Final = 16 * 1024
"""What is stored of a refused payload at most (see `kept_payload`)."""
MAX_PROBLEMS: Final = 20
"""Problems listed in one refusal; the rest are counted."""


def payload_bytes(arguments: Any) -> int:
    """The size of a payload as compact UTF-8 JSON, the measure of MAX_PAYLOAD_BYTES."""
    return len(_compact(arguments).encode())


def kept_payload(arguments: dict[str, Any]) -> dict[str, Any]:
    """What is stored of a refused payload: as sent up to REFUSED_KEEP_BYTES, else a marked head of its JSON.

    Refused calls are kept for the audit trail, but an agent may make many of them: cutting them keeps
    one misbehaving session from bloating the store.
    """
    text = _compact(arguments)
    data = text.encode()
    if len(data) <= REFUSED_KEEP_BYTES:
        return arguments
    head = data[:REFUSED_KEEP_BYTES].decode(errors="ignore")
    return {"truncated": True, "bytes": len(data), "head": head}


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def problem_lines(problems: list[str]) -> str:
    """One line per problem; past MAX_PROBLEMS the rest are counted, so a reply stays readable."""
    shown = [f"- {problem}" for problem in problems[:MAX_PROBLEMS]]
    if len(problems) > MAX_PROBLEMS:
        shown.append(f"- ... and {len(problems) - MAX_PROBLEMS} more")
    return "\n".join(shown)
