"""The signal_back MCP server: one stdio server process per agent session, one tool.

Claude Code starts it from the `--mcp-config` that `tokens.mcp_config` writes; the environment
carries the store path (`PM_AGENT_DB`) and the session token (`PM_AGENT_SESSION_TOKEN`), which the
model never sees. This module is only the MCP wiring: the tool's schema and description, and the
stdio transport. Each call goes to `pm_agent.signals.desk`, which checks it and records it, accepted
or refused, before the tool answers. A refusal is an error result whose text says why, so the agent
can correct itself.

The transport is MCP's stdio framing (one JSON-RPC 2.0 message per line) written out here rather than
taken from the `mcp` package: a tools-only server needs `initialize`, `ping`, `tools/list` and
`tools/call`, and importing `mcp` cost every agent session about a second of CPU before its first
turn. The tests talk to it with the official MCP client. For the same reason the tool's schema is
assembled from each signal kind's fields written out in `_tool_fields` (checked against the pydantic
models by a test), so the server builds only the models of the signal it validates.

Run it as `python -m pm_agent.signals.server`.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Callable, Iterable
from copy import deepcopy
from functools import cache
from typing import IO, Any

from pm_agent import __version__
from pm_agent.errors import PmAgentError
from pm_agent.lifecycle.roles import Role
from pm_agent.signals.desk import Reply, SignalDesk, allowed_kinds, desk_from_env, role_of
from pm_agent.signals.models import SIGNAL_KINDS, SIGNAL_MODELS, WIRE_FIELD_ORDER, target_role_names
from pm_agent.signals.tokens import SERVER_NAME, TOOL
from pm_agent.store.records import SessionRecord

__all__ = [
    "SignalServer",
    "input_schema",
    "kind_fields",
    "main",
    "model_kind_fields",
    "tool_description",
    "tool_fields_source",
    "tool_result",
]

log = logging.getLogger(__name__)

INSTRUCTIONS = "Call signal_back exactly once, when you stop, to report to pm-agent."
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602


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


KindFields = list[tuple[str, dict[str, Any], bool]]


def model_kind_fields(kind: str) -> KindFields:
    """One signal kind's wire fields as the tool schema shows them, from its pydantic model:
    (name, inlined JSON schema, required) in the model's order."""
    schema = SIGNAL_MODELS[kind].model_json_schema(by_alias=True)
    defs = schema.get("$defs", {})
    required = set(schema.get("required", []))
    return [(name, _inline(prop, defs), name in required) for name, prop in schema["properties"].items()]


def tool_fields_source() -> str:
    """The text of `pm_agent/signals/_tool_fields.py`: every kind's `model_kind_fields`, written out."""
    from importlib.metadata import version

    lines = [
        '"""Each signal kind\'s fields as the signal_back tool schema shows them, written out by',
        "`server.tool_fields_source()` from the pydantic models (a test compares): generating them cost every",
        'signal server the build of every signal model before its first answer."""',
        "# ruff: noqa: E501",
        "",
        "from __future__ import annotations",
        "",
        "from typing import Any",
        "",
        f"PYDANTIC = {version('pydantic')!r}",
        "FIELDS: dict[str, list[tuple[str, dict[str, Any], bool]]] = {",
        *(f"    {kind!r}: {model_kind_fields(kind)!r}," for kind in SIGNAL_KINDS),
        "}",
        "",
    ]
    return "\n".join(lines)


@cache
def _written_fields() -> dict[str, KindFields] | None:
    """The written-out fields, when they were made with the installed pydantic (its schemas may differ)."""
    from importlib.metadata import version

    from pm_agent.signals import _tool_fields as written

    return written.FIELDS if version("pydantic") == written.PYDANTIC else None


def kind_fields(kind: str) -> KindFields:
    """`model_kind_fields(kind)`, read from `_tool_fields` when it can be (see `_written_fields`)."""
    written = _written_fields()
    return deepcopy(written[kind]) if written is not None else model_kind_fields(kind)


def input_schema(
    kinds: list[str] | None = None, fields: Callable[[str], KindFields] = kind_fields
) -> dict[str, Any]:
    """The flat JSON schema the model sees: `signal` (an enum) plus every field any signal takes.

    Validation proper happens in `parse_signal`; this schema only shows the model what exists and
    which signal each field belongs to. `fields` gives each kind's fields (`model_kind_fields` builds
    them from the models; the default reads them written out).
    """
    kinds = kinds or list(SIGNAL_KINDS)
    properties: dict[str, Any] = {}
    used_by: dict[str, list[str]] = {}
    for kind in kinds:
        for name, prop, required in fields(kind):
            used_by.setdefault(name, []).append(kind + (" (required)" if required else ""))
            properties.setdefault(name, prop)
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


@cache
def _schema(kinds: tuple[str, ...]) -> dict[str, Any]:
    """`input_schema(kinds)`, made once per set of kinds: every agent session's server offers one (~2 ms each
    made anew). Only read: it goes out as JSON."""
    return input_schema(list(kinds))


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


def tool_result(reply: Reply) -> dict[str, Any]:
    """The desk's reply as an MCP tool result (an error result when refused)."""
    return {"content": [{"type": "text", "text": reply.text}], "isError": not reply.accepted}


class SignalServer:
    """MCP over stdio with the one tool, `signal_back`, answering through `desk`; one message at a time,
    so each call gets its own seq."""

    def __init__(self, desk: SignalDesk) -> None:
        self.desk = desk
        session: SessionRecord | None = None
        try:
            session = desk.session()
        except Exception as exc:  # the schema is only narrowed by role; each call reports the problem
            log.warning("could not read the session at start-up: %s", exc)
        role = role_of(session) if session is not None else None
        kinds = allowed_kinds(role) if role is not None else list(SIGNAL_KINDS)
        self.tool = {
            "name": TOOL,
            "title": "Signal pm-agent",
            "description": tool_description(role, kinds),
            "inputSchema": _schema(tuple(kinds)),
            "annotations": {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False},
        }

    def handle(self, message: Any) -> dict[str, Any] | None:
        """The response to one JSON-RPC message; None for a notification (or a response sent to us)."""
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return _error(None, INVALID_REQUEST, "not a JSON-RPC 2.0 message")
        if "id" not in message:
            return None  # notifications/initialized, notifications/cancelled, ...
        ident, method = message["id"], message.get("method")
        if not isinstance(method, str):
            return None if "result" in message or "error" in message else _error(ident, INVALID_REQUEST, "no method")
        params = message.get("params") or {}
        if method == "initialize":
            # Our one tool means the same in every protocol version: take the client's.
            version = params.get("protocolVersion") if isinstance(params, dict) else None
            return _result(
                ident,
                {
                    "protocolVersion": version if isinstance(version, str) else "2025-06-18",
                    "capabilities": {"tools": {"listChanged": False}},
                    "serverInfo": {"name": SERVER_NAME, "version": __version__},
                    "instructions": INSTRUCTIONS,
                },
            )
        if method == "ping":
            return _result(ident, {})
        if method == "tools/list":
            return _result(ident, {"tools": [self.tool]})
        if method == "tools/call":
            if not isinstance(params, dict) or params.get("name") != TOOL:
                name = params.get("name") if isinstance(params, dict) else None
                return _error(ident, INVALID_PARAMS, f"unknown tool {name!r}: the only tool is {TOOL}")
            arguments = params.get("arguments")
            return _result(ident, tool_result(self.call(arguments if isinstance(arguments, dict) else {})))
        return _error(ident, METHOD_NOT_FOUND, f"method not found: {method}")

    def call(self, arguments: dict[str, Any]) -> Reply:
        """One signal_back call; never raises: the agent must read why, and correct itself."""
        try:
            return self.desk.receive(arguments)
        except Exception as exc:
            log.exception("signal_back failed")
            reason = str(exc) if isinstance(exc, PmAgentError) else f"{type(exc).__name__}: {exc}"
            return Reply(False, f"pm-agent could not record the signal ({reason}). Call signal_back again.")

    def serve(self, lines: Iterable[bytes], out: IO[bytes]) -> None:
        """Answer each message line until the client closes stdin."""
        for line in lines:
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                response: dict[str, Any] | None = _error(None, PARSE_ERROR, "not JSON")
            else:
                response = self.handle(message)
            if response is not None:
                out.write(json.dumps(response, ensure_ascii=False).encode("utf-8") + b"\n")
                out.flush()


def _result(ident: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "result": result}


def _error(ident: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}


def main() -> None:
    """Serve signal_back over stdio for the session in the environment."""
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="pm-agent signals: %(message)s")
    SignalServer(desk_from_env()).serve(sys.stdin.buffer, sys.stdout.buffer)
    # The client closed stdin: every call is answered and committed. Leave at once: the interpreter's
    # teardown took ~70 ms, and the agent's stderr, which pm-agent reads to its end, is shared with us.
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
