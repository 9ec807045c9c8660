"""The sender against the fake GitHub server: issues and comments once each, through 5xx, rate limits and kill -9."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pm_agent.github.client import GitHubClient
from pm_agent.github.outbox import Backoff, Sender
from pm_agent.github.rows import outbox_rows
from pm_agent.plan.models import Dependency, Plan, Task, Tier
from pm_agent.store import SqliteStore, open_store
from pm_agent.store.outbox import Outbox, register_hook, unregister_hook
from pm_agent.testing.fake_github import FakeGitHub

FAST = Backoff(base_s=0.01, cap_s=0.05)


def _plan() -> Plan:
    tasks = [
        Task(
            id="1",
            title="Parser",
            tier=Tier.CRITICAL,
            tier_reason="touches the public API",
            acceptance_criteria=["parses a line"],
            depends_on=[Dependency(task_id="2")],
        ),
        Task(id="2", title="Lexer", tier=Tier.LOW, acceptance_criteria=["splits words"]),
    ]
    return Plan(plan_id="demo", path="docs/plans/plan.md", tasks=tasks, queue=["2", "1"])


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub("acme/app") as server:
        yield server


@pytest.fixture
def db_path(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / ".pm-agent" / "state.db"
    register_hook(path, outbox_rows)
    yield path
    unregister_hook(path)


@pytest.fixture
def store(db_path: Path) -> Iterator[SqliteStore]:
    with open_store(db_path) as opened:
        yield opened


def _client(fake: FakeGitHub) -> GitHubClient:
    return GitHubClient("acme/app", fake.url, fake.token)


def _run(store: SqliteStore) -> str:
    return store.create_run(_plan(), baseline_sha="a" * 40, working_branch="pm/demo", shared_context={}, config={}).id


def _drain(sender: Sender, timeout: float = 20) -> None:
    """Send until nothing is pending, waiting out backoffs and rate limits."""
    deadline = time.monotonic() + timeout
    while sender.pending():
        assert time.monotonic() < deadline, sender.outbox.summary(sender.run_id)
        result = sender.send()
        if result.wait_until is not None:
            time.sleep(max(0.0, result.wait_until - time.time()))


def _titles(fake: FakeGitHub) -> list[str]:
    return sorted(issue.title for issue in fake.issues.values())


def test_one_issue_per_task_with_labels_marker_and_dependency_links(fake: FakeGitHub, store: SqliteStore) -> None:
    run_id = _run(store)
    sender = Sender(_client(fake), store, run_id, backoff=FAST)
    _drain(sender)
    assert _titles(fake) == sorted([f"pm-agent run {run_id}: demo", "task-1: Parser", "task-2: Lexer"])
    parser = next(i for i in fake.issues.values() if i.title == "task-1: Parser")
    lexer = next(i for i in fake.issues.values() if i.title == "task-2: Lexer")
    assert parser.labels == ["pm-agent", "tier:critical", "state:received"]
    assert f"**Depends on:** #{lexer.number}" in parser.body
    assert "**Tier:** critical (touches the public API)" in parser.body
    assert "- parses a line" in parser.body
    assert f"<!-- pm-agent run={run_id} task=1 -->" in parser.body
    assert sender.issue_number("1") == parser.number
    assert len(fake.calls("POST", "/issues")) == 3
    _drain(Sender(_client(fake), store, run_id, backoff=FAST))  # a second sender: nothing left to do
    assert len(fake.calls("POST", "/issues")) == 3


def test_labels_follow_the_state_and_completion_comments_and_closes(fake: FakeGitHub, store: SqliteStore) -> None:
    run_id = _run(store)
    sender = Sender(_client(fake), store, run_id, backoff=FAST)
    _drain(sender)
    number = sender.issue_number("2")
    assert number is not None
    fake.issues[number].labels.append("help wanted")  # a human's label stays
    for before, after in (("received", "implementing"), ("implementing", "reviewing_code")):
        store.transition(run_id, "2", from_state=before, to_state=after, reason="go", iteration=0,
                         workflow_context={})  # fmt: skip
    _drain(sender)
    assert fake.issues[number].labels == ["pm-agent", "tier:low", "state:reviewing_code", "help wanted"]
    assert len(fake.calls("PATCH", f"/issues/{number}")) == 1  # the superseded label change was not sent
    store.record_commit(run_id, "2", sha="b" * 40, branch="pm/demo", message="task-2")
    store.transition(run_id, "2", from_state="reviewing_code", to_state="completed", reason="done", iteration=0,
                     workflow_context={})  # fmt: skip
    _drain(sender)
    issue = fake.issues[number]
    assert (issue.state, issue.labels[:3]) == ("closed", ["pm-agent", "tier:low", "state:completed"])
    [done] = [c for c in fake.comment_list if c.issue_number == number]
    assert f"Completed in commit {'b' * 40}." in done.body


def test_502s_then_success_lose_and_duplicate_nothing(fake: FakeGitHub, store: SqliteStore) -> None:
    run_id = _run(store)
    sender = Sender(_client(fake), store, run_id, backoff=FAST)
    fake.fail_next(3, 502)
    first = sender.send()
    assert (first.sent, first.failed, first.wait_until is not None) == (0, 1, True)
    assert "502" in (sender.outbox.summary(run_id)[1] or "")
    _drain(sender)
    assert len(fake.issues) == 3
    assert sender.outbox.summary(run_id) == (0, None)


def test_a_write_that_landed_although_the_reply_failed_is_not_repeated(fake: FakeGitHub, store: SqliteStore) -> None:
    run_id = _run(store)
    sender = Sender(_client(fake), store, run_id, backoff=FAST)
    fake.fail_next(1, 502, after_effect=True)  # the run issue is created, the reply is a 502
    _drain(sender)
    assert _titles(fake) == sorted([f"pm-agent run {run_id}: demo", "task-1: Parser", "task-2: Lexer"])
    esc = store.open_escalation(run_id, "1", source="q", problem="JSON or table?", impact="blocks",
                                options=["JSON", "table"], recommended="table", blocking=True,
                                session_id=None)  # fmt: skip
    fake.fail_next(1, 502, after_effect=True)
    _drain(sender)
    number = sender.issue_number("1")
    comments = [c for c in fake.comment_list if c.issue_number == number]
    assert len(comments) == 1
    assert f"ESCALATION #{esc.id}" in comments[0].body
    assert "Problem:" in comments[0].body
    assert "JSON or table?" in comments[0].body
    assert f"`/answer {esc.id} <answer>` on the run issue #{sender.run_issue_number()}" in comments[0].body


def test_a_rate_limit_window_is_waited_out(fake: FakeGitHub, store: SqliteStore) -> None:
    run_id = _run(store)
    sender = Sender(_client(fake), store, run_id, backoff=FAST)
    reset = fake.rate_limit(1.5)
    result = sender.send()
    assert result.wait_until is not None
    assert result.wait_until >= reset - 1  # GitHub's reset header has whole seconds
    before = len(fake.requests)
    assert sender.send().sent == 0
    assert len(fake.requests) == before, "a call was made inside the rate-limit window"
    _drain(sender)
    assert len(fake.issues) == 3


def test_a_refused_action_is_recorded_and_the_others_go_on(fake: FakeGitHub, store: SqliteStore) -> None:
    run_id = _run(store)
    sender = Sender(_client(fake), store, run_id, backoff=FAST)
    fake.fail_next(1, 422)  # the run issue is refused for good
    result = sender.send()
    assert (result.sent, result.failed) == (2, 1)
    pending, error = sender.outbox.summary(run_id)
    assert pending == 1
    assert error is not None
    assert "422" in error
    assert sender.pending() == 0  # not retried by this process


_CRASH = """
import os, signal, sys
from pm_agent.github.client import GitHubClient
from pm_agent.github.outbox import Sender
from pm_agent.github.rows import outbox_rows
from pm_agent.plan.models import Plan, Task
from pm_agent.store import open_store
from pm_agent.store.outbox import register_hook
path, url, token = sys.argv[1:4]
register_hook(path, outbox_rows)
store = open_store(path)
plan = Plan(plan_id="demo", path="plan.md", tasks=[Task(id="1", title="One")])
run = store.create_run(plan, baseline_sha="a" * 40, working_branch="pm/demo", shared_context={}, config={})
sender = Sender(GitHubClient("acme/app", url, token), store, run.id)
sender.load_issues()
print(run.id, flush=True)
sys.stdin.readline()  # the test arms the fake: the next write lands, its reply fails
sender.send()
os.kill(os.getpid(), signal.SIGKILL)  # before the row is retried or marked sent
"""


def test_kill_9_after_github_created_the_issue_creates_no_second_one(fake: FakeGitHub, db_path: Path) -> None:
    args = [sys.executable, "-c", textwrap.dedent(_CRASH), str(db_path), fake.url, fake.token]
    pipe = subprocess.PIPE
    proc = subprocess.Popen(args, stdin=pipe, stdout=pipe, stderr=pipe, text=True)
    assert proc.stdout is not None
    assert proc.stdin is not None
    run_id = proc.stdout.readline().strip()
    fake.fail_next(1, 502, after_effect=True)
    proc.stdin.write("go\n")
    proc.stdin.flush()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL, err
    assert [i.title for i in fake.issues.values()] == [f"pm-agent run {run_id}: demo"]
    with open_store(db_path) as store:
        pending = Outbox(store.engine, store.now).pending(run_id)
        assert [(r.kind, r.attempts) for r in pending] == [("run_issue", 1), ("task_issue", 0)]
        _drain(Sender(_client(fake), store, run_id, backoff=FAST))
    assert _titles(fake) == sorted([f"pm-agent run {run_id}: demo", "task-1: One"])
    assert len(fake.calls("POST", "/issues")) == 2


def test_a_task_read_from_an_issue_keeps_it_and_its_labels(fake: FakeGitHub, store: SqliteStore) -> None:
    number = fake.add_issue("Lexer", "splits words", ("ready", "help wanted"), user="alice")
    plan = Plan(plan_id="demo", path="plan.md",
                tasks=[Task(id=str(number), title="Lexer", source=f"github:acme/app#{number}")])  # fmt: skip
    run_id = store.create_run(plan, baseline_sha="a" * 40, working_branch="pm/demo", shared_context={}, config={}).id
    sender = Sender(_client(fake), store, run_id, backoff=FAST)
    _drain(sender)
    assert sender.issue_number(str(number)) == number
    assert [i.title for i in fake.issues.values()] == ["Lexer", f"pm-agent run {run_id}: demo"]
    assert fake.issues[number].labels == ["pm-agent", "tier:normal", "state:received", "ready", "help wanted"]
    assert fake.issues[number].body == "splits words"
