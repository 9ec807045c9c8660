"""Answers from GitHub comments, against the fake GitHub server and a real store."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pm_agent.config import GitHubConfig
from pm_agent.github.answers import IGNORED, REFUSED, TAKEN, UNUSED, AnswerPoller
from pm_agent.github.bridge import Bridge
from pm_agent.github.client import GitHubClient
from pm_agent.github.outbox import Backoff, Sender
from pm_agent.github.rows import outbox_rows
from pm_agent.plan.models import Plan, Task
from pm_agent.store import EscalationRecord, EscalationStatus, SqliteStore, open_store
from pm_agent.store.outbox import register_hook, unregister_hook
from pm_agent.testing.fake_github import FakeGitHub

FAST = Backoff(base_s=0.01, cap_s=0.05)


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub("acme/app") as server:
        server.set_permission("alice", "write")
        server.set_permission("mallory", "read")
        yield server


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    path = tmp_path / ".pm-agent" / "state.db"
    register_hook(path, outbox_rows)
    with open_store(path) as opened:
        yield opened
    unregister_hook(path)


class Setup:
    def __init__(self, fake: FakeGitHub, store: SqliteStore) -> None:
        plan = Plan(plan_id="demo", path="plan.md", tasks=[Task(id="1", title="One"), Task(id="2", title="Two")])
        self.run_id = store.create_run(plan, baseline_sha="a" * 40, working_branch="pm/demo", shared_context={},
                                       config={}).id  # fmt: skip
        self.fake, self.store = fake, store
        self.api = GitHubClient("acme/app", fake.url, fake.token)
        self.sender = Sender(self.api, store, self.run_id, backoff=FAST)
        self.send()

    def send(self) -> None:
        while self.sender.pending():
            result = self.sender.send()
            if result.wait_until is not None:
                time.sleep(max(0.0, result.wait_until - time.time()))

    def poller(self, answerers: tuple[str, ...] = ()) -> AnswerPoller:
        return AnswerPoller(self.api, self.store, self.run_id, answerers)

    def ask(self, task_id: str | None) -> EscalationRecord:
        esc = self.store.open_escalation(self.run_id, task_id, source="needs-user-input", problem="JSON or table?",
                                         impact="blocks", options=["JSON", "table"], recommended="table",
                                         blocking=True, session_id=None)  # fmt: skip
        self.send()
        return esc

    def issue(self, task_id: str | None) -> int:
        number = self.sender.issue_number(task_id) if task_id else self.sender.run_issue_number()
        assert number is not None
        return number

    def events(self, kind: str) -> list[dict[str, object]]:
        return [dict(e.payload) for e in self.store.events_of_kind(self.run_id, [kind])]

    def comments(self, number: int) -> list[str]:
        return [c.body for c in self.fake.comment_list if c.issue_number == number]


@pytest.fixture
def s(fake: FakeGitHub, store: SqliteStore) -> Setup:
    return Setup(fake, store)


def test_an_answerers_reply_answers_the_tasks_open_escalation(s: Setup) -> None:
    esc = s.ask("1")
    comment = s.fake.add_comment(s.issue("1"), "a plain table\n", user="alice")
    assert s.poller().poll() == 1
    stored = s.store.get_escalation(esc.id)
    assert (stored.status, stored.answer) == (EscalationStatus.ANSWERED, "a plain table")
    [taken] = s.events(TAKEN)
    assert (taken["comment_id"], taken["author"], taken["escalation_id"]) == (comment, "alice", esc.id)
    s.send()
    told = s.comments(s.issue("1"))[-1]
    assert f"Escalation #{esc.id} was answered on GitHub by @alice" in told
    assert "> a plain table" in told
    assert s.poller().poll() == 0  # a new poller (restart) does not take the comment again


def test_a_non_answerers_comment_is_recorded_and_nothing_else(s: Setup) -> None:
    esc = s.ask("1")
    s.fake.add_comment(s.issue("1"), "abort", user="mallory")
    assert s.poller().poll() == 0
    assert s.store.get_escalation(esc.id).status is EscalationStatus.OPEN
    [ignored] = s.events(IGNORED)
    assert (ignored["author"], ignored["issue"]) == ("mallory", s.issue("1"))
    s.send()
    assert [b for b in s.comments(s.issue("1")) if "pm-agent key=" in b] == s.comments(s.issue("1"))[:1]


def test_the_configured_answerers_replace_write_access(s: Setup) -> None:
    esc = s.ask("1")
    s.fake.add_comment(s.issue("1"), "skip", user="alice")
    assert s.poller(answerers=("bob",)).poll() == 0
    assert s.store.get_escalation(esc.id).status is EscalationStatus.OPEN
    assert [e["author"] for e in s.events(IGNORED)] == ["alice"]


def test_slash_answer_on_the_run_issue_and_chatter_there(s: Setup) -> None:
    esc = s.ask(None)
    assert f"`/answer {esc.id} <answer>` on this issue" in s.comments(s.issue(None))[-1]
    s.fake.add_comment(s.issue(None), "looks good so far", user="alice")
    s.fake.add_comment(s.issue(None), f"/answer {esc.id} retry: use the table", user="alice")
    assert s.poller().poll() == 1
    assert s.store.get_escalation(esc.id).answer == "retry: use the table"
    assert [e["issue"] for e in s.events(UNUSED)] == [s.issue(None)]


def test_an_answer_after_the_terminal_answered_is_refused_and_told(s: Setup) -> None:
    esc = s.ask("1")
    s.store.answer_escalation(esc.id, "JSON")  # the terminal (or `pm-agent answer`) was first
    s.fake.add_comment(s.issue("1"), "a table", user="alice")
    assert s.poller().poll() == 0
    assert s.store.get_escalation(esc.id).answer == "JSON"
    assert [e["escalation_id"] for e in s.events(REFUSED)] == [esc.id]
    s.send()
    bodies = s.comments(s.issue("1"))
    assert any("answered outside GitHub" in b and "> JSON" in b for b in bodies), bodies
    assert any("@alice: escalation" in b and "already answered" in b for b in bodies), bodies


def test_the_bridge_thread_sends_polls_and_flushes(fake: FakeGitHub, store: SqliteStore) -> None:
    plan = Plan(plan_id="demo", path="plan.md", tasks=[Task(id="1", title="One")])
    fake.fail_next(2, 502)
    run_id = store.create_run(plan, baseline_sha="a" * 40, working_branch="pm/demo", shared_context={},
                              config={}).id  # fmt: skip
    db_path = Path(str(store.engine.url.database))
    config = GitHubConfig(repo="acme/app", api_url=fake.url, poll_interval_s=0.2)
    bridge = Bridge(GitHubClient("acme/app", fake.url, fake.token), db_path, run_id, config, backoff=FAST)
    bridge.start()
    try:
        esc = store.open_escalation(run_id, "1", source="q", problem="which?", impact="x", options=["a", "b"],
                                    recommended="a", blocking=True, session_id=None)  # fmt: skip
        deadline = time.monotonic() + 20
        while not any(f"ESCALATION #{esc.id}" in c.body for c in fake.comment_list):
            assert time.monotonic() < deadline, fake.requests[-5:]
            time.sleep(0.05)
        number = next(i.number for i in fake.issues.values() if i.title == "task-1: One")
        fake.add_comment(number, "a", user=fake.owner)
        while store.get_escalation(esc.id).status is EscalationStatus.OPEN:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        left = bridge.stop(flush_s=10)
    assert left == 0
    assert any("answered on GitHub by @" in c.body for c in fake.comment_list)
    assert len(fake.issues) == 2


def test_a_bridge_turned_on_after_the_run_began_catches_up(fake: FakeGitHub, tmp_path: Path) -> None:
    path = tmp_path / "late" / "state.db"
    with open_store(path) as plain:  # no hook: the run starts without the bridge
        plan = Plan(plan_id="demo", path="plan.md", tasks=[Task(id="1", title="One"), Task(id="2", title="Two")])
        run_id = plain.create_run(plan, baseline_sha="a" * 40, working_branch="pm/demo", shared_context={},
                                  config={}).id  # fmt: skip
        esc = plain.open_escalation(run_id, "2", source="q", problem="which?", impact="x", options=["a", "b"],
                                    recommended="a", blocking=True, session_id=None)  # fmt: skip
    config = GitHubConfig(repo="acme/app", api_url=fake.url, poll_interval_s=0.2)
    bridge = Bridge(GitHubClient("acme/app", fake.url, fake.token), path, run_id, config, backoff=FAST)
    bridge.start()
    assert bridge.stop(flush_s=10) == 0
    assert sorted(i.title for i in fake.issues.values()) == sorted([f"pm-agent run {run_id}: demo", "task-1: One",
                                                                     "task-2: Two"])  # fmt: skip
    two = next(i.number for i in fake.issues.values() if i.title == "task-2: Two")
    assert [c.issue_number for c in fake.comment_list if f"ESCALATION #{esc.id}" in c.body] == [two]
    again = Bridge(GitHubClient("acme/app", fake.url, fake.token), path, run_id, config, backoff=FAST)
    again.start()
    assert again.stop(flush_s=10) == 0
    assert len(fake.issues) == 3
    assert len(fake.comment_list) == 1
