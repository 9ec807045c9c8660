"""A scripted team: the model side of every pm-agent session, routed by task and role.

pm-agent's system prompt names each session on its first line
(`pm-agent session: role=developer task=task-3 attempt=1 workdir=/abs/path`); `ScriptedTeam`
reads it and plays the script for that (task, role). A script is a list of steps; each step is a
function of the session and the request returning a `Turn` (usually tool calls). The step index is
the number of assistant messages with tool calls so far in the conversation, so a resumed session
(`--resume`) continues its script where it stopped. After a `signal_back` result the team answers
with a closing text turn so the CLI ends.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pm_agent.agents.header import SessionHeader, parse_session_header
from pm_agent.internal_tasks import FINAL_REVIEW_STEP
from pm_agent.testing.scenario import ModelRequest, ToolCall, Turn

SIGNAL_TOOL = "mcp__pm__signal_back"


Step = Callable[[SessionHeader, ModelRequest], Turn]


def _tool_turns(request: ModelRequest) -> int:
    count = 0
    for message in request.messages:
        content = message.get("content")
        if message.get("role") != "assistant" or not isinstance(content, list):
            continue
        count += any(isinstance(b, dict) and b.get("type") == "tool_use" for b in content)
    return count


def _last_tool_name(request: ModelRequest) -> str | None:
    ids = {b.get("tool_use_id") for b in request.tool_results()}
    for message in reversed(request.messages):
        content = message.get("content")
        if message.get("role") == "assistant" and isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("id") in ids:
                    return str(block.get("name"))
            return None
    return None


def write(path: str, content: str) -> Step:
    """A step that writes `path` (relative to the worktree) with the Write tool."""
    return lambda s, _r: Turn(tool_calls=[ToolCall("Write", {"file_path": f"{s.workdir}/{path}", "content": content})])


def bash(command: str) -> Step:
    """A step that runs a shell command in the worktree."""
    return lambda s, _r: Turn(tool_calls=[ToolCall("Bash", {"command": command, "description": "run"})])


def signal(payload: Mapping[str, Any] | Callable[[SessionHeader, ModelRequest], Mapping[str, Any]]) -> Step:
    """A step that calls signal_back; `stepId` defaults to the session's task."""

    def step(s: SessionHeader, r: ModelRequest) -> Turn:
        body = dict(payload(s, r) if callable(payload) else payload)
        body.setdefault("stepId", s.task)
        return Turn(tool_calls=[ToolCall(SIGNAL_TOOL, body)])

    return step


def say(text: str) -> Step:
    """A step that only talks (ends the turn without signalling: a crash, for pm-agent)."""
    return lambda _s, _r: Turn(text=text)


def line_of(content: str, needle: str) -> int:
    """The 1-based line of the first line containing `needle` (for criteria mappings)."""
    for number, line in enumerate(content.splitlines(), start=1):
        if needle in line:
            return number
    raise ValueError(f"{needle!r} not in content")


# A tester with nothing to add: pm-agent sends every task in `tester_tiers` (NORMAL and CRITICAL by default)
# to a tester once its gates pass, and a script written before that step, or about something else, gives
# none. Adding no tests leaves the change as the developer left it, so such a script means what it meant.
NO_EDGE_CASES: tuple[Step, ...] = (
    signal({"signal": "complete", "summary": "no edge cases to add: the task's tests cover the contract"}),
)
# A final reviewer that approves: pm-agent reviews the whole branch before every release (final_review.enabled),
# in a session of the pm-internal task `final-review`; a script about the plan's tasks has none for it. An approval
# in the form a task's reviewer gives (a reviewNote, no findings file) is read as a clean review.
CLEAN_FINAL_REVIEW: tuple[Step, ...] = (
    signal(
        {
            "signal": "complete",
            "summary": "final review: the branch matches the design; nothing to change",
            "reviewNote": {"summary": "whole branch reviewed", "risks": [], "rollback": "revert the branch"},
        }
    ),
)
FINAL_REVIEW_TASK = FINAL_REVIEW_STEP
DEFAULT_SCRIPTS: dict[str | tuple[str, str], Sequence[Step]] = {
    "tester": NO_EDGE_CASES,
    (FINAL_REVIEW_TASK, "reviewer"): CLEAN_FINAL_REVIEW,
}


@dataclass
class ScriptedTeam:
    """Routes pm-agent sessions to scripts keyed by (task, role); `("*", role)` matches any task.

    A session with neither falls back to `defaults`, by (task, role) then role (DEFAULT_SCRIPTS: a tester that adds
    nothing, a final reviewer that approves)."""

    scripts: dict[tuple[str, str], Sequence[Step]] = field(default_factory=dict)
    log: list[tuple[str, str, int]] = field(default_factory=list)  # (task, role, step) per answered request
    defaults: dict[str | tuple[str, str], Sequence[Step]] = field(default_factory=lambda: dict(DEFAULT_SCRIPTS))

    def __call__(self, request: ModelRequest) -> Turn | None:
        """Answer one request (None: not a pm-agent session request)."""
        info = parse_session_header(request.system_text())
        if info is None or not request.messages:
            return None
        if _last_tool_name(request) == SIGNAL_TOOL and "error" not in request.tool_result_text().lower()[:40]:
            return Turn(text="Signal sent; stopping now.")
        script = (
            self.scripts.get((info.task, info.role))
            or self.scripts.get(("*", info.role))
            or self.defaults.get((info.task, info.role))
            or self.defaults.get(info.role)
        )
        if script is None:
            return Turn(text=f"(no script for {info.task}/{info.role})")
        index = _tool_turns(request)
        self.log.append((info.task, info.role, index))
        if index >= len(script):
            return Turn(text="(script finished)")
        return script[index](info, request)


def dumps(payload: Mapping[str, Any]) -> str:
    """Compact JSON (for assertions on recorded requests)."""
    return json.dumps(payload, sort_keys=True)
