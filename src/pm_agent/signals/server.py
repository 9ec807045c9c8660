"""The signal_back MCP server: one stdio server process per agent session, one tool.

Claude Code starts it from the `--mcp-config` that `tokens.mcp_config` writes; the environment
carries the store path (`PM_AGENT_DB`) and the session token (`PM_AGENT_SESSION_TOKEN`), which the
model never sees. This module is only the MCP wiring: the tool's schema and description, and the
stdio server. Each call goes to `pm_agent.signals.desk`, which checks it and records it, accepted
or refused, before the tool answers. A refusal is an error result whose text says why, so the agent
can correct itself: an exception raised in an `mcp` tool would reach the model only as "Error
executing tool".

Run it as `python -m pm_agent.signals.server`.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import anyio
import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import ConfigDict

from pm_agent.errors import PmAgentError
from pm_agent.lifecycle.roles import Role
from pm_agent.signals.desk import Reply, SignalDesk, allowed_kinds, desk_from_env, role_of
from pm_agent.signals.models import SIGNAL_KINDS, SIGNAL_MODELS, WIRE_FIELD_ORDER, target_role_names
from pm_agent.signals.tokens import SERVER_NAME, TOOL
from pm_agent.store.records import SessionRecord

__all__ = ["build_server", "input_schema", "main", "tool_description", "tool_result"]

log = logging.getLogger(__name__)


def _inline(schema: Any, defs: dict[str, Any]) -> Any:
    """Resolve local `$ref`s and drop pydantic's titles, so the tool schema is one plain object."""
    if isinstance(schema, list):
        return [_inline(item, defs) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        name = str(schema["$ref"]).rsplit("/", 1)[-1]
        return _inline({**defs[name], **{k: v for k, v in schema.items() if k != "$ref"}}, defs)
    out = {k: _inline(v, defs) for k, v in schema.items() if k not in ("title", "$defs")}
    options = out.get("anyOf")
    if isinstance(options, list):
        real = [o for o in options if o != {"type": "null"}]
        if len(real) == 1 and len(real) < len(options):
            out.pop("anyOf")
            out = {**real[0], **out}
    return out


def input_schema(kinds: list[str] | None = None) -> dict[str, Any]:
    """The flat JSON schema the model sees: `signal` (an enum) plus every field any signal takes.

    Validation proper happens in `parse_signal`; this schema only shows the model what exists and
    which signal each field belongs to.
    """
    kinds = kinds or list(SIGNAL_KINDS)
    properties: dict[str, Any] = {}
    used_by: dict[str, list[str]] = {}
    for kind in kinds:
        model = SIGNAL_MODELS[kind]
        schema = model.model_json_schema(by_alias=True)
        defs = schema.get("$defs", {})
        required = set(schema.get("required", []))
        for name, prop in schema["properties"].items():
            used_by.setdefault(name, []).append(kind + (" (required)" if name in required else ""))
            properties.setdefault(name, _inline(prop, defs))
    properties["signal"] = {
        "type": "string",
        "enum": kinds,
        "description": "Which signal: " + ", ".join(kinds) + ".",
    }
    if "targetRole" in properties:
        properties["targetRole"] = {**properties["targetRole"], "enum": target_role_names()}
    for name, prop in properties.items():
        if name != "signal":
            prop["description"] = (
                f"{prop.get('description', '').strip()} Used by: {', '.join(used_by[name])}."
            )
    ordered = {name: properties[name] for name in WIRE_FIELD_ORDER if name in properties}
    return {
        "type": "object",
        "properties": ordered,
        "required": ["signal", "stepId"],
        "additionalProperties": False,
    }


def tool_description(role: Role | None, kinds: list[str]) -> str:
    """What the model reads about signal_back."""
    who = f" You are the {role.value}; you may send: {', '.join(kinds)}." if role is not None else ""
    return (
        "Report back to pm-agent, the project manager running you. Call this exactly once when you stop, "
        "then end your turn: pm-agent reads only this signal, not your final message." + who + " "
        "complete: the task is done (add evidence: files, key test/lint/typecheck output lines, "
        "criteriaMapping to path:line, reviewNote). partially-complete: out of context, say where to "
        "continue. needs-user-input: a question only a human can answer. needs-role-followup: another "
        "role must act first. An error result lists what to correct; fix it and call again."
    )


def tool_result(reply: Reply) -> CallToolResult:
    """The desk's reply as an MCP tool result (an error result when refused)."""
    return CallToolResult(content=[TextContent(type="text", text=reply.text)], is_error=not reply.accepted)


class _RawArguments(ArgModelBase):
    """Takes the arguments as sent, unknown keys included: `parse_signal` does the validation."""

    model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True)

    def model_dump_one_level(self) -> dict[str, Any]:
        return {"arguments": dict(self.model_extra or {})}


def build_server(desk: SignalDesk) -> MCPServer[Any]:
    """The MCP server with its one tool, `signal_back`, answering through `desk`."""
    session: SessionRecord | None = None
    try:
        session = desk.session()
    except Exception as exc:  # the schema is only narrowed by role; each call reports the problem
        log.warning("could not read the session at start-up: %s", exc)
    role = role_of(session) if session is not None else None
    kinds = allowed_kinds(role) if role is not None else list(SIGNAL_KINDS)
    lock = anyio.Lock()

    async def signal_back(arguments: dict[str, Any]) -> CallToolResult:
        async with lock:  # one call at a time, so each gets its own seq
            try:
                reply = await anyio.to_thread.run_sync(desk.receive, arguments)
            # Never raise: the agent must read why, and a raised error reaches it as a bare "Error".
            except Exception as exc:
                log.exception("signal_back failed")
                reason = str(exc) if isinstance(exc, PmAgentError) else f"{type(exc).__name__}: {exc}"
                reply = Reply(
                    False, f"pm-agent could not record the signal ({reason}). Call signal_back again."
                )
        return tool_result(reply)

    tool = Tool(
        fn=signal_back,
        name=TOOL,
        title="Signal pm-agent",
        description=tool_description(role, kinds),
        parameters=input_schema(kinds),
        fn_metadata=FuncMetadata(arg_model=_RawArguments),
        is_async=True,
        context_kwarg=None,
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False),
    )
    return MCPServer(
        name=SERVER_NAME,
        instructions="Call signal_back exactly once, when you stop, to report to pm-agent.",
        tools=[tool],
    )


def main() -> None:
    """Serve signal_back over stdio for the session in the environment."""
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="pm-agent signals: %(message)s")
    build_server(desk_from_env()).run("stdio")


if __name__ == "__main__":
    main()
