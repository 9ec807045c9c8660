"""The final review (issue 12 part 3) with the real CLI: a finding fixed by a remediation task and
reviewed again; a finding a human accepts; a review refused for its form and corrected; a kill -9
of pm-agent while the reviewer works, then `pm-agent resume`."""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pm_agent.agents.header import SessionHeader
from pm_agent.engine.api import drive_run
from pm_agent.human.channels import ScriptedChannel
from pm_agent.reports.manifest import parse_manifest
from pm_agent.store import EscalationRecord, default_store_path, open_store
from pm_agent.testing.scenario import ModelRequest, Turn
from pm_agent.testing.team import Step, bash, write
from pm_agent.testing.team import signal as signal_step

from .calc_plan import ADD, ADDITION, REVIEW, TEST_ADD, claimed, plan
from .conftest import Target, git
from .test_crash_resume import pm, prepare

pytestmark = [pytest.mark.claude, pytest.mark.slow]

PLAN = plan(ADDITION)
REVIEW_FILE = "docs/reviews/calc-final-review.md"
CLEAN = "# Final review\n\nThe change does what the plan asks.\n\n```yaml\nfindings: []\n```\n"
DOCSTRING = "add() has no docstring"
HIGH = f"""\
# Final review

One problem.

```yaml
findings:
  - id: F1
    severity: high
    file: src/calc/add.py
    line: 4
    finding: {DOCSTRING}
    fix: say what add returns
```
"""
LOW = """\
# Final review

```yaml
findings:
  - id: F1
    severity: minor
    file: README.md
    finding: the README does not mention add()
```
"""
NO_SEVERITY = "# Final review\n\n```yaml\nfindings:\n  - finding: the README does not mention add()\n```\n"
ADD_DOCUMENTED = (
    '"""add."""\n\n\ndef add(a: int, b: int) -> int:\n    """Return the sum of a and b."""\n    return a + b\n'
)
REPORT = {"signal": "complete", "summary": "final review written"}


def by_round(first: Step, later: Step) -> Step:
    """`first` in review round 1 (the session's attempt), `later` in the rounds after it."""

    def step(s: SessionHeader, r: ModelRequest) -> Turn:
        return (first if s.attempt == 1 else later)(s, r)

    return step


def report() -> Step:
    return signal_step(REPORT)


def developer() -> list[Step]:
    files = {"src/calc/add.py": ADD}
    return [
        write("src/calc/add.py", ADD),
        write("tests/test_add.py", TEST_ADD),
        claimed(files, [("add(a, b) returns the sum", "src/calc/add.py", "return")]),
    ]


def test_a_finding_is_remediated_then_reviewed_again(target: Callable[[str], Target]) -> None:
    t = target(PLAN)
    fixed = {"src/calc/add.py": ADD_DOCUMENTED}
    criterion = f"final review finding F1 is fixed: {DOCSTRING}"
    t.team.scripts = {
        ("task-1", "developer"): developer(),
        ("task-r1", "developer"): [
            write("src/calc/add.py", ADD_DOCUMENTED),
            claimed(fixed, [(criterion, "src/calc/add.py", "Return the sum")]),
        ],
        ("task-final-review", "reviewer"): [
            bash("git log --oneline"),
            by_round(write(REVIEW_FILE, HIGH), write(REVIEW_FILE, CLEAN)),
            report(),
        ],
        ("*", "reviewer"): REVIEW,
    }
    rc = t.start()
    result = asyncio.run(drive_run(rc, 0.2))
    events = "\n".join(f"{k}: {m}" for k, m, _ in t.listener.events)
    assert result.final is not None, events
    assert result.final.passed, events
    assert result.exit_code == 0
    store = open_store(default_store_path(t.repo))
    try:
        tasks = {x.task_id: x for x in store.list_tasks(rc.run_id)}
        assert sorted(tasks) == ["1", "final-review", "r1"]
        assert tasks["r1"].state == "completed"
        assert tasks["r1"].title == f"Fix final review finding F1: {DOCSTRING}"
        assert tasks["r1"].task().acceptance_criteria == [criterion]
        sessions = store.list_sessions(rc.run_id, "final-review")
        assert [(s.role, s.attempt) for s in sessions] == [("reviewer", 1), ("reviewer", 2)]
        assert store.list_escalations(rc.run_id) == []
    finally:
        store.close()
    branch = rc.run.working_branch
    assert git(t.repo, "show", f"{branch}:src/calc/add.py") == ADD_DOCUMENTED
    manifest = parse_manifest(git(t.repo, "show", f"{branch}:docs/releases/calc-release.yaml"))
    assert manifest.final_review == REVIEW_FILE
    assert [x.task_id for x in manifest.tasks] == ["task-1", "task-r1"]
    review = git(t.repo, "show", f"{branch}:{REVIEW_FILE}")
    assert f"| F1 | high | src/calc/add.py:4 | {DOCSTRING} | say what add returns | remediated by task-r1 |" in review
    round_two = review.split("## Round 2", 1)[1]
    assert "No findings." in round_two.split("##", 1)[0]
    assert "```yaml\nfindings: []\n```" in review  # the last review as the reviewer wrote it
    assert t.listener.kinds().count("final.passed") == 1


def test_a_human_accepts_a_finding_after_a_refused_review(target: Callable[[str], Target]) -> None:
    t = target(PLAN)
    t.team.scripts = {
        ("task-1", "developer"): developer(),
        # The first file has no severity: refused with the reason, the session resumed, the file corrected.
        ("task-final-review", "reviewer"): [
            write(REVIEW_FILE, NO_SEVERITY),
            report(),
            write(REVIEW_FILE, LOW),
            report(),
        ],
        ("*", "reviewer"): REVIEW,
    }
    asked: list[EscalationRecord] = []

    def accept(esc: EscalationRecord) -> str:
        asked.append(esc)
        return "accept: the README is fixed in the next release"

    rc = t.start(channel=ScriptedChannel(accept))
    result = asyncio.run(drive_run(rc, 0.2))
    events = "\n".join(f"{k}: {m}" for k, m, _ in t.listener.events)
    assert result.final is not None, events
    assert result.final.passed, events
    refused = [m for k, m, _ in t.listener.events if k == "final.review" and "refused" in m]
    assert len(refused) == 1, events
    assert "no `severity`: one of critical, high, medium, low, info" in refused[0]
    assert [e.source for e in asked] == ["risk-audit"]
    assert "final review findings: F1 (low) README.md: the README does not mention add()" in asked[0].problem
    store = open_store(default_store_path(t.repo))
    try:
        assert sorted(x.task_id for x in store.list_tasks(rc.run_id)) == ["1", "final-review"]
        sessions = store.list_sessions(rc.run_id, "final-review")
        assert len(sessions) == 2
        assert sessions[1].resumed_from == sessions[0].id
        risks = [(r.description, r.status.value) for r in store.list_risks(rc.run_id)]
        assert risks == [("final review F1 (low) README.md: the README does not mention add()", "accepted")]
    finally:
        store.close()
    branch = rc.run.working_branch
    manifest = parse_manifest(git(t.repo, "show", f"{branch}:docs/releases/calc-release.yaml"))
    assert manifest.final_review == REVIEW_FILE
    assert [(r.status, r.description) for r in manifest.risks] == [
        ("accepted", "final review F1 (low) README.md: the README does not mention add()")
    ]
    review = git(t.repo, "show", f"{branch}:{REVIEW_FILE}")
    assert f"accepted by a human (escalation #{asked[0].id})" in review


def test_kill_during_the_final_review_resumes_its_session(target: Callable[[str], Target]) -> None:
    t = target(PLAN)
    t.team.scripts = {
        ("task-1", "developer"): developer(),
        ("task-final-review", "reviewer"): [bash("sleep 20"), write(REVIEW_FILE, CLEAN), report()],
        ("*", "reviewer"): REVIEW,
    }
    prepare(t)
    first = pm(t.repo, "run", str(t.plan))
    db = default_store_path(t.repo)
    deadline = time.monotonic() + 240
    reviewing = False
    while time.monotonic() < deadline and not reviewing and first.poll() is None:
        time.sleep(0.5)
        if not db.exists():
            continue
        store = open_store(db)
        try:
            run = store.latest_run()
            if run is not None and any(t.task_id == "final-review" for t in store.task_rows(run.id)):
                sessions = store.list_sessions(run.id, "final-review")
                reviewing = any(s.status.value == "running" and s.agent_session_id for s in sessions)
        finally:
            store.close()
    assert reviewing, "the final review never started"
    time.sleep(2)  # the reviewer is inside its 20 s Bash call
    first.send_signal(signal.SIGKILL)
    first.communicate(timeout=30)
    second = pm(t.repo, "resume")
    out, _ = second.communicate(timeout=300)
    assert second.returncode == 0, out
    assert "Final review: docs/reviews/calc-final-review.md" in out
    store = open_store(db)
    try:
        run = store.latest_run()
        assert run is not None
        sessions = store.list_sessions(run.id, "final-review")
        assert [s.status.value for s in sessions] == ["killed", "signalled"]
        assert sessions[1].resumed_from == sessions[0].id, "the interrupted review was not resumed"
        assert sessions[1].agent_session_id == sessions[0].agent_session_id
        assert store.unconsumed_signals(run.id) == []
    finally:
        store.close()
    assert "findings: []" in git(t.repo, "show", f"{run.working_branch}:{REVIEW_FILE}")


def test_the_reviewers_worktree_gets_the_setup_command_before_its_session(
    target: Callable[[str], Target], tmp_path: Path
) -> None:
    """Like a task's agent, the reviewer may run the tests: what `setup_command` installs must be there."""
    t = target(PLAN)
    log = tmp_path / "setup.log"
    t.team.scripts = {
        ("task-1", "developer"): developer(),
        ("task-final-review", "reviewer"): [write(REVIEW_FILE, CLEAN), report()],
        ("*", "reviewer"): REVIEW,
    }
    environment = {**t.config().environment.model_dump(), "setup_command": f'echo "$PWD" >> {log}'}
    rc = t.start(environment=environment)
    result = asyncio.run(drive_run(rc, 0.2))
    events = "\n".join(f"{k}: {m}" for k, m, _ in t.listener.events)
    assert result.final is not None, events
    assert result.final.passed, events
    where = log.read_text(encoding="utf-8").splitlines()
    assert [w for w in where if w.endswith("/_final-review-1")], where
    sessions = open_store(default_store_path(t.repo))
    try:
        reviewer = sessions.list_sessions(rc.run_id, "final-review")
        assert [s.workdir for s in reviewer] == [w for w in where if w.endswith("/_final-review-1")]
    finally:
        sessions.close()
