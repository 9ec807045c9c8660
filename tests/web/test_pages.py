"""The HTML pages: what they show, that agent output stays text, and the inbox's answer form."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from fastapi.testclient import TestClient

from pm_agent.store import EscalationStatus, default_store_path, open_store
from pm_agent.web.app import create_app
from pm_agent.web.auth import csrf_token, load_or_create_token

if TYPE_CHECKING:
    from tests.web.conftest import Project


def test_board_page_has_every_card_in_its_column(client: TestClient, waiting_project: Project) -> None:
    html = client.get(f"/runs/{waiting_project.run_id}").text
    done = html.split('id="col-done"')[1].split("</section>")[0]
    waiting = html.split('id="col-waiting"')[1].split("</section>")[0]
    assert 'id="card-1"' in done
    assert 'id="card-3"' in done
    assert 'id="card-2"' in waiting
    assert 'src="/static/board.js"' in html
    assert f'data-run="{waiting_project.run_id}"' in html


def test_agent_output_is_shown_as_text_never_as_markup(client: TestClient, waiting_project: Project) -> None:
    html = client.get(f"/runs/{waiting_project.run_id}/tasks/1").text
    assert waiting_project.markup not in html
    assert "&lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt;" in html
    assert "<script" not in html.replace('<script src="/static/board.js"></script>', "")


def test_task_page_shows_gate_evidence_and_the_review(client: TestClient, waiting_project: Project) -> None:
    html = client.get(f"/runs/{waiting_project.run_id}/tasks/1").text
    assert "3-tests-run" in html
    assert "pm-agent ran 1 command(s): all passed" in html
    assert "# Review: task-1" in html
    assert "notes/n1.md" in html
    assert "developer signalled complete; pm-agent checks it" in html


def test_reports_page_draws_the_cost_chart(client: TestClient, waiting_project: Project) -> None:
    html = client.get(f"/runs/{waiting_project.run_id}/reports").text
    bars = re.findall(r'<rect x="140" y="\d+" width="([\d.]+)"', html)
    assert bars == ["360.0", "360.0"]  # one role, one model: each the longest bar
    assert "$0.0300" in html


def test_runs_page_links_the_run(client: TestClient, waiting_project: Project) -> None:
    html = client.get("/").text
    assert f'href="/runs/{waiting_project.run_id}"' in html
    assert "2/3" in html


def test_inbox_form_answers_through_pm_agent_answer_and_the_run_resumes_with_it(fresh_project: Project) -> None:
    token = load_or_create_token(fresh_project.repo)
    esc = fresh_project.escalation_id
    with TestClient(create_app(fresh_project.repo, token)) as client:
        page = client.get("/inbox", params={"token": token}).text
        assert fresh_project.question in page
        assert f'value="{csrf_token(token)}"' in page
        empty = client.post(f"/inbox/{esc}/answer", data={"answer": "  ", "csrf_token": csrf_token(token)})
        assert empty.status_code == 400
        assert "the answer is empty" in empty.text
        sent = client.post(
            f"/inbox/{esc}/answer", data={"answer": "quiet, please", "csrf_token": csrf_token(token)},
            follow_redirects=False,
        )  # fmt: skip
        assert sent.status_code == 303
        assert "No open escalations" in client.get(sent.headers["location"]).text
        again = client.post(
            f"/api/escalations/{esc}/answer", json={"answer": "loud"}, headers={"X-CSRF-Token": csrf_token(token)}
        )
        assert again.status_code == 409  # answered already: the store refuses, as `pm-agent answer` would
    store = open_store(default_store_path(fresh_project.repo))
    try:
        stored = store.get_escalation(esc)
        assert (stored.status, stored.answer) == (EscalationStatus.ANSWERED, "quiet, please")
    finally:
        store.close()
    resumed = fresh_project.pm("resume")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    # task 2's agent resumed its own session with the answer in its prompt, and wrote that prompt into the note
    note = fresh_project.git("show", "pm/notes/work:notes/n2.md")
    assert "quiet, please" in note
    with TestClient(create_app(fresh_project.repo, token)) as client:  # the run released: manifest and handoff
        client.get("/", params={"token": token})
        reports = client.get(f"/api/runs/{fresh_project.run_id}/reports").json()
        assert reports["manifest"] == fresh_project.git("show", "pm/notes/work:docs/releases/notes-release.yaml")
        assert "notes" in reports["handoff"]
        html = client.get(f"/runs/{fresh_project.run_id}/reports").text
        assert "(no manifest yet" not in html
        assert "(no handoff yet)" not in html
    store = open_store(default_store_path(fresh_project.repo))
    try:
        asked, resumed = store.list_sessions(fresh_project.run_id, "2")
        assert resumed.resumed_from == asked.id
        assert resumed.agent_session_id == asked.agent_session_id  # the same conversation, continued
    finally:
        store.close()


def test_the_json_answer_endpoint_stores_the_answer(fresh_project: Project) -> None:
    token = load_or_create_token(fresh_project.repo)
    with TestClient(create_app(fresh_project.repo, token)) as client:
        client.get("/", params={"token": token})
        answered = client.post(
            f"/api/escalations/{fresh_project.escalation_id}/answer",
            json={"answer": "skip"},
            headers={"X-CSRF-Token": csrf_token(token)},
        )
        assert answered.status_code == 200
        assert answered.json() == {"id": fresh_project.escalation_id, "status": "answered", "answer": "skip"}
        assert client.get("/api/escalations").json() == []
