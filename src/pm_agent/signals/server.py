"""The signal_back MCP server: one stdio server process per agent session, one tool.

Claude Code starts it from the `--mcp-config` that `tokens.mcp_config` writes; the environment
carries the store path (`PM_AGENT_DB`) and the session token (`PM_AGENT_SESSION_TOKEN`), which the
model never sees. Each call is checked (token, live session, current attempt, the task it names,
what the role may send, the payload) and then recorded in the store, accepted or refused, before
the tool answers. A refusal is an error result whose text says why, so the agent can correct
itself: an exception raised in an `mcp` tool would reach the model only as "Error executing tool".

Run it as `python -m pm_agent.signals.server`.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

import anyio
import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import ConfigDict

from pm_agent.errors import PmAgentError
from pm_agent.lifecycle.roles import ALLOWED_SIGNALS, Role, resolve_role
from pm_agent.signals.models import (
    SIGNAL_KINDS,
    SIGNAL_MODELS,
    WIRE_FIELD_ORDER,
    AnySignal,
    NeedsRoleFollowupSignal,
    SignalPayloadError,
    parse_signal,
    signal_payload,
    target_role_names,
)
from pm_agent.signals.tokens import DB_ENV, RUN_ENV, SERVER_NAME, TASK_ENV, TOKEN_ENV, TOOL
from pm_agent.store import open_store
from pm_agent.store.records import SessionRecord, SessionStatus, SignalRecord, TaskRecord

__all__ = [
    "LIVE_STATUSES",
    "Reply",
    "SignalDesk",
    "build_server",
    "desk_from_env",
    "input_schema",
    "main",
    "same_task",
    "task_key",
]

log = logging.getLogger(__name__)

LIVE_STATUSES: Final[frozenset[SessionStatus]] = frozenset({SessionStatus.STARTING, SessionStatus.RUNNING})
STOP: Final = "Stop now: end your turn without further tool calls."


class SignalStore(Protocol):
    """What the server needs from the store (pm_agent.store's SqliteStore provides it)."""

    def session_by_token(self, token: str) -> SessionRecord | None: ...

    def signals_for_session(self, session_id: int) -> list[SignalRecord]: ...

    def get_task(self, run_id: str, task_id: str) -> TaskRecord: ...

    def record_signal(
        self,
        *,
        run_id: str,
        task_id: str,
        session_id: int | None,
        attempt: int,
        seq: int,
        kind: str,
        payload: dict[str, Any],
        accepted: bool,
        reason: str,
    ) -> SignalRecord: ...


@dataclass(frozen=True)
class Reply:
    """What signal_back answers: accepted or refused, and the text the agent reads."""

    accepted: bool
    text: str
    record: SignalRecord | None = None

    def result(self) -> CallToolResult:
        """As an MCP tool result (an error result when refused)."""
        return CallToolResult(content=[TextContent(type="text", text=self.text)], is_error=not self.accepted)


# ---- checks ------------------------------------------------------------------------------------

_TASK_PREFIX = re.compile(r"^(?:task|step)[\s_\-#:]*", re.IGNORECASE)


def task_key(value: str) -> str:
    """A task id as agents write it, reduced to compare: "Task 3", "task-3", "#3" and "3" are all "3"."""
    text = value.strip().lower()
    text = _TASK_PREFIX.sub("", text).lstrip("#").strip()
    return text


def same_task(step_id: str, task_id: str) -> bool:
    """True when the agent's stepId names the task `task_id`."""
    return step_id.strip() == task_id or task_key(step_id) == task_key(task_id)


def _role_of(session: SessionRecord) -> Role | None:
    try:
        return resolve_role(session.role)
    except ValueError:
        return None


def allowed_kinds(role: Role | None) -> list[str]:
    """The signal kinds `role` may send, in seed 004's order (none for an unknown role)."""
    if role is None:
        return []
    return [kind for kind in SIGNAL_KINDS if kind in ALLOWED_SIGNALS[role]]


def _next_step(signal: AnySignal) -> str:
    if signal.signal == "complete":
        return "pm-agent now runs its gates on your work."
    if signal.signal == "partially-complete":
        return "A fresh session of your role will continue from your continuation point."
    if signal.signal == "needs-user-input":
        return "Your question goes to a human; this session is resumed with the answer."
    assert isinstance(signal, NeedsRoleFollowupSignal)
    if signal.resume:
        return f"The {signal.target_role} role acts first; then this session is resumed."
    return f"The {signal.target_role} role takes over; this session will not be resumed."


class SignalDesk:
    """Checks and records signal_back calls for one session token."""

    def __init__(
        self,
        store: SignalStore | None,
        token: str | None,
        *,
        setup_problem: str | None = None,
        audit: tuple[str, str] | None = None,
    ) -> None:
        """`audit` is the (run_id, task_id) under which calls with an unknown token are recorded."""
        self.store = store
        self.token = token
        self.setup_problem = setup_problem
        self.audit = audit

    def session(self) -> SessionRecord | None:
        """The session this server speaks for, if the token names one."""
        if self.store is None or not self.token:
            return None
        return self.store.session_by_token(self.token)

    def receive(self, arguments: dict[str, Any]) -> Reply:
        """Check one call and record it (accepted or refused) before answering."""
        if self.store is None:
            reason = self.setup_problem or "pm-agent's signal server has no store"
            log.error("signal refused, nothing recorded: %s", reason)
            return Reply(False, f"Signal refused: {reason}. Nothing was recorded; tell the user and stop.")
        if not self.token:
            return self._refuse_unknown(arguments, f"no session token ({TOKEN_ENV} is not set)")
        session = self.store.session_by_token(self.token)
        if session is None:
            return self._refuse_unknown(arguments, "the session token is unknown to pm-agent")
        return self._receive_for(session, arguments)

    def _receive_for(self, session: SessionRecord, arguments: dict[str, Any]) -> Reply:
        assert self.store is not None
        earlier = self.store.signals_for_session(session.id)
        accepted = [s for s in earlier if s.accepted]
        if accepted:
            first = accepted[0]
            return self._refuse(
                session,
                earlier,
                arguments,
                f"this session already sent its signal ({first.kind}, seq {first.seq}); only one is taken",
                advice=STOP,
            )
        if session.status not in LIVE_STATUSES:
            return self._refuse(
                session,
                earlier,
                arguments,
                f"this session is {session.status.value}, no longer live",
                advice=STOP,
            )
        task = self.store.get_task(session.run_id, session.task_id)
        if session.attempt < task.attempt:
            return self._refuse(
                session,
                earlier,
                arguments,
                f"this session works on attempt {session.attempt} of task {session.task_id}, "
                f"but pm-agent has moved on to attempt {task.attempt}",
                advice=STOP,
            )
        problems = self._problems(session, arguments)
        signal: AnySignal | None = None
        try:
            signal = parse_signal(arguments)
        except SignalPayloadError as exc:
            problems = [*exc.problems, *(p for p in problems if p not in exc.problems)]
        if problems or signal is None:
            what = (
                f"{arguments.get('signal')} signal" if arguments.get("signal") in SIGNAL_KINDS else "signal"
            )
            listed = "\n".join(f"- {p}" for p in problems)
            return self._refuse(
                session,
                earlier,
                arguments,
                f"invalid {what}:\n{listed}",
                advice="Correct these and call signal_back again.",
            )
        payload = {**signal_payload(signal), "stepId": session.task_id}  # canonical, like targetRole
        record = self.store.record_signal(
            run_id=session.run_id,
            task_id=session.task_id,
            session_id=session.id,
            attempt=session.attempt,
            seq=len(earlier) + 1,
            kind=signal.signal,
            payload=payload,
            accepted=True,
            reason="",
        )
        if not record.accepted or record.payload != payload:
            # The store is idempotent on (session, seq): another call took this seq first.
            return Reply(
                False, f"Another signal_back call of this session took seq {record.seq} first; call again."
            )
        text = f"Signal {signal.signal} recorded for task {session.task_id}. {_next_step(signal)} {STOP}"
        return Reply(True, text, record)

    def _problems(self, session: SessionRecord, arguments: dict[str, Any]) -> list[str]:
        """Problems that need the session: the task named by stepId, and what the role may send."""
        problems: list[str] = []
        step_id = arguments.get("stepId")
        if isinstance(step_id, int) and not isinstance(step_id, bool):
            step_id = str(step_id)
        if isinstance(step_id, str) and step_id.strip() and not same_task(step_id, session.task_id):
            problems.append(
                f"stepId: this session works on task {session.task_id!r}, not {step_id.strip()!r}; "
                f'use "{session.task_id}"'
            )
        kind = arguments.get("signal")
        role = _role_of(session)
        may_send = allowed_kinds(role)
        if isinstance(kind, str) and kind in SIGNAL_KINDS and kind not in may_send:
            who = role.value if role is not None else repr(session.role)
            problems.append(
                f"signal: the {who} role may not send {kind}; it may send: {', '.join(may_send) or 'nothing'}"
            )
        return problems

    def _refuse(
        self,
        session: SessionRecord,
        earlier: list[SignalRecord],
        arguments: dict[str, Any],
        reason: str,
        *,
        advice: str,
    ) -> Reply:
        assert self.store is not None
        record: SignalRecord | None = None
        try:
            record = self.store.record_signal(
                run_id=session.run_id,
                task_id=session.task_id,
                session_id=session.id,
                attempt=session.attempt,
                seq=len(earlier) + 1,
                kind=_kind_text(arguments),
                payload=arguments,
                accepted=False,
                reason=reason,
            )
        except PmAgentError as exc:  # the refusal stands; its audit record is what failed
            log.error("could not record a refused signal of session %s: %s", session.id, exc)
        return Reply(False, f"Signal refused: {reason}\n{advice}", record)

    def _refuse_unknown(self, arguments: dict[str, Any], reason: str) -> Reply:
        """A call no session owns: recorded refused (session_id None) under the audit run/task if known."""
        assert self.store is not None
        record: SignalRecord | None = None
        if self.audit is not None:
            run_id, task_id = self.audit
            try:
                record = self.store.record_signal(
                    run_id=run_id,
                    task_id=task_id,
                    session_id=None,
                    attempt=0,
                    seq=0,
                    kind=_kind_text(arguments),
                    payload=arguments,
                    accepted=False,
                    reason=reason,
                )
            except PmAgentError as exc:
                log.warning("could not record a refused signal under %s/%s: %s", run_id, task_id, exc)
        if record is None:
            log.warning("signal refused without a session (%s): %r", reason, _kind_text(arguments))
        return Reply(
            False, f"Signal refused: {reason}. Nothing was accepted; tell the user and stop.", record
        )


def _kind_text(arguments: dict[str, Any]) -> str:
    kind = arguments.get("signal")
    return kind[:64] if isinstance(kind, str) else ""


# ---- the MCP tool ------------------------------------------------------------------------------


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
    role = _role_of(session) if session is not None else None
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
        return reply.result()

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


def desk_from_env(environ: dict[str, str] | None = None) -> SignalDesk:
    """The desk for the session named by the environment (`PM_AGENT_DB`, `PM_AGENT_SESSION_TOKEN`)."""
    env = dict(os.environ) if environ is None else environ
    token = env.get(TOKEN_ENV) or None
    run_id, task_id = env.get(RUN_ENV), env.get(TASK_ENV)
    audit = (run_id, task_id) if run_id and task_id else None
    db = env.get(DB_ENV)
    if not db:
        return SignalDesk(None, token, setup_problem=f"{DB_ENV} is not set")
    path = Path(db)
    if not path.is_file():
        return SignalDesk(None, token, setup_problem=f"the store {path} does not exist")
    try:
        store = open_store(path)
    except Exception as exc:  # reported on every call, so the agent can say why it cannot signal
        return SignalDesk(None, token, setup_problem=f"the store {path} cannot be opened: {exc}")
    return SignalDesk(store, token, audit=audit)


def main() -> None:
    """Serve signal_back over stdio for the session in the environment."""
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="pm-agent signals: %(message)s")
    build_server(desk_from_env()).run("stdio")


if __name__ == "__main__":
    main()
