"""The dashboard's endpoints on a real run's store: what each returns, compared with the store itself."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from fastapi.testclient import TestClient

from pm_agent.store import EscalationStatus, SqliteStore, default_store_path, open_store
from pm_agent.web.groups import GROUPS

if TYPE_CHECKING:
    from tests.web.conftest import Project


@pytest.fixture
def store(waiting_project: Project) -> Iterator[SqliteStore]:
    opened = open_store(default_store_path(waiting_project.repo))
    yield opened
    opened.close()


def test_runs_lists_the_run_with_its_counts(client: TestClient, waiting_project: Project) -> None:
    [run] = client.get("/api/runs").json()
    assert run["id"] == waiting_project.run_id
    assert (run["done"], run["total"], run["open_escalations"]) == (2, 3, 1)
    assert run["status"] == "stopped"


def test_board_puts_each_task_in_its_states_column(
    client: TestClient, waiting_project: Project, store: SqliteStore
) -> None:
    board = client.get(f"/api/runs/{waiting_project.run_id}/board").json()
    assert [c["group"] for c in board["columns"]] == [name for name, _ in GROUPS]
    where = {card["task_id"]: col["group"] for col in board["columns"] for card in col["cards"]}
    assert where == {"1": "done", "2": "waiting", "3": "done"}
    header = board["header"]
    cost = sum(s.cost_usd for s in store.list_sessions(waiting_project.run_id))
    assert cost > 0
    assert header["cost_usd"] == pytest.approx(cost)
    assert (header["done"], header["total"], header["open_escalations"], header["slots_in_use"]) == (2, 3, 1, 0)
    assert board["last_event_id"] == store.events(waiting_project.run_id)[-1].id
    [waiting] = [c for col in board["columns"] for c in col["cards"] if c["task_id"] == "2"]
    assert waiting["state"] == "waiting_for_human_input"
    assert waiting["slot"] is None
    spent = sum(s.cost_usd for s in store.list_sessions(waiting_project.run_id, "2"))
    assert waiting["cost_usd"] == pytest.approx(spent)


def test_task_shows_transitions_sessions_signals_gates_diff_and_review(
    client: TestClient, waiting_project: Project, store: SqliteStore
) -> None:
    task = client.get(f"/api/runs/{waiting_project.run_id}/tasks/task-1").json()
    stored = store.transitions(waiting_project.run_id, "1")
    assert [(t["from_state"], t["to_state"], t["reason"]) for t in task["transitions"]] == [
        (t.from_state, t.to_state, t.reason) for t in stored
    ]
    [session] = task["sessions"]
    assert (session["role"], session["status"], session["turns"]) == ("developer", "signalled", 3)
    assert session["cost_usd"] > 0
    assert session["duration_s"] > 0
    assert waiting_project.markup in session["last_lines"]
    assert [s["kind"] for s in task["signals"]] == ["complete"]
    gates = {g["gate"]: g for g in task["gates"]}
    assert {g.gate for g in store.gate_results(waiting_project.run_id, "1")} == set(gates)
    assert gates["3-tests-run"]["passed"] is True
    assert "`true`" in gates["3-tests-run"]["evidence"]
    assert "notes/n1.md" in task["diff_stat"]
    assert task["review_artifact"].startswith("# Review: task-1")


def test_a_task_not_committed_says_so(client: TestClient, waiting_project: Project) -> None:
    task = client.get(f"/api/runs/{waiting_project.run_id}/tasks/2").json()
    assert task["commit_sha"] is None
    assert task["diff_stat"] == task["review_artifact"] == "(not committed yet)"
    assert [s["kind"] for s in task["signals"]] == ["needs-user-input"]


@pytest.mark.parametrize(
    "path", ["/api/runs/nope/board", "/api/runs/nope/tasks/1", "/api/runs/{run}/tasks/99", "/api/runs/nope/reports"]
)
def test_unknown_ids_are_404(client: TestClient, waiting_project: Project, path: str) -> None:
    response = client.get(path.format(run=waiting_project.run_id))
    assert response.status_code == 404
    assert "nope" in response.text or "99" in response.text


def test_inbox_shows_the_open_escalation_as_the_terminal_does(client: TestClient, waiting_project: Project) -> None:
    [esc] = client.get("/api/escalations").json()
    assert esc["id"] == waiting_project.escalation_id
    assert waiting_project.question in esc["text"]
    assert "skip" in esc["answer_words"]
    terminal = waiting_project.pm("escalations").stdout
    # seed 001's block, line for line as `pm-agent escalations` prints it
    block = esc["text"].rsplit("\n(about", 1)[0]
    assert block in terminal


def test_reports_sum_cost_per_role_and_model(client: TestClient, waiting_project: Project, store: SqliteStore) -> None:
    reports = client.get(f"/api/runs/{waiting_project.run_id}/reports").json()
    sessions = store.list_sessions(waiting_project.run_id)
    [developer] = reports["by_role"]
    assert developer["key"] == "developer"
    assert developer["sessions"] == len(sessions)
    assert developer["cost_usd"] == pytest.approx(sum(s.cost_usd for s in sessions))
    assert developer["input_tokens"] == sum(s.input_tokens for s in sessions)
    assert sum(line["sessions"] for line in reports["by_model"]) == len(sessions)
    assert reports["manifest"] == ""  # the release gate has not run: the run waits for an answer


def _events(text: str) -> list[dict[str, object]]:
    return [json.loads(line[len("data: ") :]) for line in text.splitlines() if line.startswith("data: ")]


def test_event_stream_replays_the_events_table(
    client: TestClient, waiting_project: Project, store: SqliteStore
) -> None:
    run = waiting_project.run_id
    response = client.get(f"/api/runs/{run}/events", params={"follow": "false"})
    assert response.headers["content-type"].startswith("text/event-stream")
    stored = store.events(run)
    assert [e["id"] for e in _events(response.text)] == [e.id for e in stored]
    assert f"id: {stored[0].id}\n" in response.text
    middle = stored[len(stored) // 2].id
    after = _events(client.get(f"/api/runs/{run}/events", params={"follow": "false", "after": middle}).text)
    assert [e["id"] for e in after] == [e.id for e in stored if e.id > middle]


def test_event_stream_resumes_after_last_event_id(
    client: TestClient, waiting_project: Project, store: SqliteStore
) -> None:
    run = waiting_project.run_id
    stored = store.events(run)
    seen = stored[-3].id
    response = client.get(
        f"/api/runs/{run}/events", params={"follow": "false", "after": 0}, headers={"Last-Event-ID": str(seen)}
    )
    assert [e["id"] for e in _events(response.text)] == [e.id for e in stored[-2:]]


def test_openapi_describes_every_json_endpoint(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert set(paths) == {
        "/api/runs",
        "/api/runs/{run_id}/board",
        "/api/runs/{run_id}/tasks/{task_id}",
        "/api/runs/{run_id}/reports",
        "/api/runs/{run_id}/events",
        "/api/escalations",
        "/api/escalations/{escalation_id}/answer",
    }
    assert "text/event-stream" in paths["/api/runs/{run_id}/events"]["get"]["responses"]["200"]["content"]


def test_an_empty_store_shows_no_runs(tmp_path: Path) -> None:
    from pm_agent.web.app import create_app

    with TestClient(create_app(tmp_path, "t0k")) as client:
        assert client.get("/api/runs", params={"token": "t0k"}).json() == []
        assert client.get("/api/escalations").json() == []
        assert "No runs yet" in client.get("/").text
        assert client.get("/api/runs/x/board").status_code == 404
    assert not default_store_path(tmp_path).exists()  # reading never creates a store


def test_answered_escalations_leave_the_inbox(fresh_project: Project) -> None:
    from pm_agent.web.app import create_app
    from pm_agent.web.auth import load_or_create_token

    token = load_or_create_token(fresh_project.repo)
    with TestClient(create_app(fresh_project.repo, token)) as client:
        client.get("/", params={"token": token})
        assert fresh_project.pm("answer", str(fresh_project.escalation_id), "quiet").returncode == 0
        assert client.get("/api/escalations").json() == []
        assert "No open escalations" in client.get("/inbox").text
    store = open_store(default_store_path(fresh_project.repo))
    try:
        assert store.get_escalation(fresh_project.escalation_id).status is EscalationStatus.ANSWERED
    finally:
        store.close()
