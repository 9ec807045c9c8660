"""The scripted model server alone, spoken to over HTTP the way Claude Code speaks to it."""

from __future__ import annotations

import http.client
import json
import threading
import time
from typing import Any

import pytest

from pm_agent.testing.model_server import Fail, Hang, ModelRequest, ModelServer, Scenario, ToolCall, Turn, marker


def _post(
    server: ModelServer, body: dict[str, Any], path: str = "/v1/messages?beta=true", timeout: float = 10
) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=timeout)
    try:
        conn.request("POST", path, json.dumps(body), {"content-type": "application/json"})
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


def _events(text: str) -> list[dict[str, Any]]:
    out = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        event = json.loads(lines["data"])
        assert event["type"] == lines["event"]
        out.append(event)
    return out


def _body(text: str, *, stream: bool = True, session: str = "s") -> dict[str, Any]:
    return {
        "model": "claude-test",
        "stream": stream,
        "system": [{"type": "text", "text": "You are a test."}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
        "metadata": {"user_id": json.dumps({"session_id": session})},
    }


def test_streams_text_and_tool_use_as_the_api_does(model_server: ModelServer) -> None:
    call = ToolCall("Write", {"file_path": "/x/a.txt", "content": "hello " * 30})
    model_server.add(Scenario("one", [Turn(text="writing it", tool_calls=[call])]))
    status, text = _post(model_server, _body("do it " + marker("one")))
    assert status == 200
    events = _events(text)
    kinds = [e["type"] for e in events]
    assert kinds[0] == "message_start"
    assert kinds[-2:] == ["message_delta", "message_stop"]
    assert events[-2]["delta"]["stop_reason"] == "tool_use"
    assert events[-2]["usage"]["output_tokens"] > 0
    starts = [e for e in events if e["type"] == "content_block_start"]
    assert [s["content_block"]["type"] for s in starts] == ["text", "tool_use"]
    assert starts[1]["content_block"]["input"] == {}  # the input comes as input_json_delta fragments
    fragments = [
        e["delta"]["partial_json"]
        for e in events
        if e["type"] == "content_block_delta" and e["delta"]["type"] == "input_json_delta"
    ]
    assert len(fragments) > 1
    assert json.loads("".join(fragments)) == call.input
    text_out = "".join(
        e["delta"]["text"] for e in events if e["type"] == "content_block_delta" and e["delta"]["type"] == "text_delta"
    )
    assert text_out == "writing it"


def test_routes_by_marker_and_advances_per_request(model_server: ModelServer) -> None:
    model_server.add(Scenario("a", [Turn(text="a1"), Turn(text="a2")]))
    model_server.add(Scenario("b", [Turn(text="b1")]))
    replies = []
    for name in ("a", "b", "a", "a"):
        _, text = _post(model_server, _body(marker(name), stream=False))
        replies.append(json.loads(text)["content"][0]["text"])
    assert replies == ["a1", "b1", "a2", "(end of scenario)"]
    assert [r.turn_index for r in model_server.requests_for("a")] == [0, 1]
    assert len(model_server.requests) == 4


def test_unrouted_requests_get_a_short_answer_and_advance_nothing(model_server: ModelServer) -> None:
    model_server.add(Scenario("a", [Turn(text="a1")]))
    _, text = _post(model_server, _body("no marker here", stream=False))
    assert json.loads(text)["content"][0]["text"] == "ok"
    assert model_server.position("a") == 0


def test_per_session_scripts_play_independently(model_server: ModelServer) -> None:
    model_server.add(Scenario("same", [Turn(text="first"), Turn(text="second")], per_session=True))
    headers_a = {"x-claude-code-session-id": "A"}
    out = []
    for session in ("A", "B", "A"):
        conn = http.client.HTTPConnection("127.0.0.1", model_server.port, timeout=10)
        headers = {"content-type": "application/json", **headers_a, "x-claude-code-session-id": session}
        conn.request("POST", "/v1/messages", json.dumps(_body(marker("same"), stream=False)), headers)
        out.append(json.loads(conn.getresponse().read())["content"][0]["text"])
        conn.close()
    assert out == ["first", "first", "second"]


def test_a_turn_can_be_a_function_of_the_request(model_server: ModelServer) -> None:
    seen: list[ModelRequest] = []

    def echo(request: ModelRequest) -> Turn:
        seen.append(request)
        return Turn(text="you said: " + request.last_user_text())

    model_server.add(Scenario("echo", [echo]))
    _, text = _post(model_server, _body("hello " + marker("echo"), stream=False))
    assert json.loads(text)["content"][0]["text"] == "you said: hello " + marker("echo")
    assert seen[0].body["model"] == "claude-test"
    assert seen[0].system_text() == "You are a test."


def test_error_turns_answer_with_the_status(model_server: ModelServer) -> None:
    model_server.add(Scenario("err", [Fail(529, "busy"), Fail(500), Turn(text="fine")]))
    status1, text1 = _post(model_server, _body(marker("err")))
    status2, _ = _post(model_server, _body(marker("err")))
    status3, _ = _post(model_server, _body(marker("err")))
    assert (status1, status2, status3) == (529, 500, 200)
    assert json.loads(text1)["error"]["type"] == "overloaded_error"


def test_count_tokens_and_connectivity_check(model_server: ModelServer) -> None:
    status, text = _post(model_server, _body("x"), path="/v1/messages/count_tokens?beta=true")
    assert status == 200
    assert json.loads(text)["input_tokens"] > 0
    conn = http.client.HTTPConnection("127.0.0.1", model_server.port, timeout=5)
    conn.request("HEAD", "/api/hello")
    assert conn.getresponse().status == 200
    conn.close()


def test_hang_never_answers_and_stop_releases_it() -> None:
    server = ModelServer([Scenario("hang", [Hang()])]).start()
    outcome: dict[str, Any] = {}

    def client() -> None:
        try:
            outcome["reply"] = _post(server, _body(marker("hang")), timeout=30)
        except (OSError, http.client.HTTPException) as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=client)
    thread.start()
    time.sleep(0.6)
    assert thread.is_alive()  # no answer
    started = time.monotonic()
    server.stop()
    thread.join(10)
    assert not thread.is_alive()
    assert time.monotonic() - started < 5
    assert "reply" not in outcome


def test_concurrent_requests_are_all_recorded(model_server: ModelServer) -> None:
    model_server.add(Scenario("many", [Turn(text=str(i)) for i in range(20)]))
    threads = [threading.Thread(target=_post, args=(model_server, _body(marker("many")))) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    indexes = sorted(r.turn_index for r in model_server.requests_for("many") if r.turn_index is not None)
    assert indexes == list(range(20))


def test_port_needs_a_started_server() -> None:
    with pytest.raises(RuntimeError, match="not started"):
        _ = ModelServer().port
