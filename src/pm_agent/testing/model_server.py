"""A scripted Anthropic Messages API server on 127.0.0.1 for driving the real Claude Code CLI offline.

A *scenario* is a list of assistant turns. A request is routed to a scenario by a marker
``[scenario:NAME]`` anywhere in its system prompt or messages (the first match wins, system
first), and each routed request plays the scenario's next turn. A turn is a `Turn` (text and/or
tool calls), `Hang` (never answers), `Fail` (HTTP error status), or a function of the request
that returns one of these, so a turn can inspect what the CLI sent (a tool result, an answer).

Requests without a marker (auxiliary calls) and requests after the script ran out get a short
text answer that does not advance any script. Every request body is recorded for assertions.

    with ModelServer([Scenario("hello", [Turn(text="hi")])]) as server:
        env = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "test"}
"""

from __future__ import annotations

import itertools
import json
import socket
import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from pm_agent.testing.scenario import (
    MARKER_RE,
    Fail,
    Hang,
    ModelRequest,
    Scenario,
    ToolCall,
    Turn,
    TurnLike,
    marker,
)

__all__ = [
    "MARKER_RE",
    "Fail",
    "Hang",
    "ModelRequest",
    "ModelServer",
    "Scenario",
    "ToolCall",
    "Turn",
    "TurnLike",
    "marker",
]


# The Messages API's error type for each status (its documented errors); any other status is an api_error.
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


class ModelServer:
    """The scripted server; a context manager that serves from a background thread."""

    def __init__(
        self,
        scenarios: list[Scenario] | None = None,
        *,
        model: str = "claude-scripted",
        fallback: Callable[[ModelRequest], Turn | Hang | Fail | None] | None = None,
    ) -> None:
        self.model = model
        self._fallback = fallback
        self._lock = threading.Lock()
        self._scenarios: dict[str, Scenario] = {}
        self._positions: dict[tuple[str, str | None], int] = {}
        self._requests: list[ModelRequest] = []
        self._ids = itertools.count(1)
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        for scenario in scenarios or []:
            self.add(scenario)

    # -- scripting -----------------------------------------------------------------------------
    def add(self, scenario: Scenario) -> None:
        """Register (or replace) a scenario; safe while serving."""
        with self._lock:
            self._scenarios[scenario.name] = scenario
            for key in [k for k in self._positions if k[0] == scenario.name]:
                del self._positions[key]

    @property
    def requests(self) -> list[ModelRequest]:
        """A snapshot of every request received so far."""
        with self._lock:
            return list(self._requests)

    def requests_for(self, scenario: str) -> list[ModelRequest]:
        """The requests that advanced `scenario`'s script."""
        return [r for r in self.requests if r.scenario == scenario and r.turn_index is not None]

    def position(self, scenario: str, session_id: str | None = None) -> int:
        """How many turns of `scenario` were played (for `session_id` when per_session)."""
        with self._lock:
            return self._positions.get((scenario, session_id), 0)

    # -- lifecycle -----------------------------------------------------------------------------
    @property
    def port(self) -> int:
        """The port the server listens on."""
        if self._httpd is None:
            raise RuntimeError("model server not started")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The base URL for ANTHROPIC_BASE_URL."""
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        """The environment that points the Claude Code CLI at this server."""
        return {"ANTHROPIC_BASE_URL": self.url, "ANTHROPIC_API_KEY": "scripted-model-server"}

    def start(self) -> ModelServer:
        """Bind a free port on 127.0.0.1 and serve in a daemon thread."""
        if self._httpd is not None:
            return self
        self._stopping.clear()
        handler = type("_BoundHandler", (_Handler,), {"server_ref": self})
        httpd = _Server(("127.0.0.1", 0), handler)
        httpd.daemon_threads = True
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="model-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, release hanging requests and close the socket."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # -- routing -------------------------------------------------------------------------------
    def _route(self, request: ModelRequest) -> Turn | Hang | Fail:
        """Pick the turn that answers `request` and record the request."""
        name = self._find_marker(request)
        with self._lock:
            self._requests.append(request)
            scenario = self._scenarios.get(name) if name else None
            fallback = self._fallback
        if scenario is None:
            # Unmarked requests go to the fallback router (e.g. the demo's scripted model), else a short answer.
            answer = fallback(request) if fallback is not None else None
            return answer if answer is not None else Turn(text="ok", input_tokens=10, output_tokens=1)
        with self._lock:
            request.scenario = scenario.name
            key = (scenario.name, request.session_id if scenario.per_session else None)
            index = self._positions.get(key, 0)
            if index < len(scenario.turns):
                self._positions[key] = index + 1
                request.turn_index = index
                turn = scenario.turns[index]
            else:
                turn = scenario.after
        return turn(request) if callable(turn) else turn

    @staticmethod
    def _find_marker(request: ModelRequest) -> str | None:
        for text in (request.system_text(), request.conversation_text()):
            found = MARKER_RE.search(text)
            if found:
                return found.group(1)
        return None

    def _next_id(self, prefix: str) -> str:
        with self._lock:
            return f"{prefix}_{next(self._ids):06d}"


class _Server(ThreadingHTTPServer):
    # The stdlib default backlog (5) refuses connections when many sessions call at once on a busy machine.
    request_queue_size = 128


class _Handler(BaseHTTPRequestHandler):
    server_ref: ModelServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the per-request log lines."""

    def _read_body(self) -> Any:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return raw.decode("utf-8", errors="replace")

    def _send_json(self, status: int, payload: Any, extra: Mapping[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _record(self, request: ModelRequest) -> None:
        with self.server_ref._lock:
            self.server_ref._requests.append(request)

    def do_HEAD(self) -> None:
        """Connectivity checks (`HEAD /api/hello`)."""
        self._record(ModelRequest("HEAD", self.path, dict(self.headers.items()), None))
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        """Nothing is served by GET."""
        self._record(ModelRequest("GET", self.path, dict(self.headers.items()), None))
        self._send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})

    def do_POST(self) -> None:
        """`/v1/messages` (streamed or not) and `/v1/messages/count_tokens`."""
        body = self._read_body()
        request = ModelRequest("POST", self.path, dict(self.headers.items()), body)
        endpoint = request.endpoint
        if endpoint.endswith("/count_tokens"):
            self._record(request)
            size = len(json.dumps(body)) if body is not None else 0
            self._send_json(200, {"input_tokens": max(1, size // 4)})
            return
        if not endpoint.endswith("/v1/messages"):
            self._record(request)
            self._send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": endpoint}})
            return
        turn = self.server_ref._route(request)
        if isinstance(turn, Hang):
            self._hang()
            return
        if isinstance(turn, Fail):
            kind = _ERROR_TYPES.get(turn.status, "api_error")
            error = {"type": "error", "error": {"type": kind, "message": turn.message}}
            retry = turn.status >= 429  # a bad key or request fails the same way again
            headers = {"retry-after": "0", "x-should-retry": "true"} if retry else {"x-should-retry": "false"}
            self._send_json(turn.status, error, headers)
            return
        if turn.delay > 0 and self.server_ref._stopping.wait(turn.delay):
            return
        model = body.get("model", self.server_ref.model) if isinstance(body, dict) else self.server_ref.model
        stream = isinstance(body, dict) and bool(body.get("stream"))
        if stream:
            self._stream(turn, str(model))
        else:
            self._send_json(200, self._message(turn, str(model)))

    def _hang(self) -> None:
        self.close_connection = True
        while not self.server_ref._stopping.wait(0.2):
            try:  # stop waiting once the client went away
                if self.connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b"":
                    return
            except BlockingIOError:
                continue
            except OSError:
                return

    def _blocks(self, turn: Turn) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if turn.text is not None:
            blocks.append({"type": "text", "text": turn.text})
        for call in turn.tool_calls:
            call_id = call.id or self.server_ref._next_id("toolu")
            blocks.append({"type": "tool_use", "id": call_id, "name": call.name, "input": dict(call.input)})
        return blocks

    def _message(self, turn: Turn, model: str) -> dict[str, Any]:
        return {
            "id": self.server_ref._next_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": self._blocks(turn),
            "stop_reason": turn.resolved_stop_reason(),
            "stop_sequence": None,
            "usage": {"input_tokens": turn.input_tokens, "output_tokens": turn.output_tokens},
        }

    def _stream(self, turn: Turn, model: str) -> None:
        self.close_connection = True
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        message = self._message(turn, model)
        start = {**message, "content": [], "stop_reason": None}
        start["usage"] = {"input_tokens": turn.input_tokens, "output_tokens": 1}
        events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
        for index, block in enumerate(message["content"]):
            if block["type"] == "text":
                opened: dict[str, Any] = {"type": "text", "text": ""}
                events.append({"type": "content_block_start", "index": index, "content_block": opened})
                for piece in _chunks(block["text"], 64):
                    delta = {"type": "text_delta", "text": piece}
                    events.append({"type": "content_block_delta", "index": index, "delta": delta})
            else:
                opened = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
                events.append({"type": "content_block_start", "index": index, "content_block": opened})
                for piece in _chunks(json.dumps(block["input"]), 48):
                    delta = {"type": "input_json_delta", "partial_json": piece}
                    events.append({"type": "content_block_delta", "index": index, "delta": delta})
            events.append({"type": "content_block_stop", "index": index})
        events.append(
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": turn.output_tokens},
            }
        )
        events.append({"type": "message_stop"})
        try:
            for event in events:
                self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()
        except OSError:
            return
