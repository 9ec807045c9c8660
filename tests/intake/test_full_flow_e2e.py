"""Seed 004's whole flow in one walk, through the public CLI, with the real Claude Code CLI and the
scripted model (issue 12's first real-CLI test):

`pm-agent new` -> the analyst asks a question -> `pm-agent answer` + `pm-agent resume` -> the requirements
are locked -> the planner's first plan names a task that does not exist and is sent back with file:line
-> the corrected plan waits for approval -> `pm-agent answer ... approve` + `pm-agent resume` -> both
documents are committed -> task 1's developer passes the gates -> the tester adds an edge-case test the
code fails -> the developer fixes the code -> the gates pass -> the reviewer approves -> the final
review reports a high finding -> remediation task r1 runs -> the second final-review round is clean ->
the release manifest.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from pm_agent.agents.header import SessionHeader
from pm_agent.intake import IntakePaths, requirements_hash
from pm_agent.reports.manifest import parse_manifest
from pm_agent.store import EscalationRecord, EscalationStatus, Store, default_store_path, open_store
from pm_agent.testing.scenario import ModelRequest, Turn
from pm_agent.testing.team import Step, bash, line_of, write
from pm_agent.testing.team import signal as signal_step

from .conftest import CRITERION, FMT, PLAN_HEAD, PLAN_TAIL, REQUEST, REQUIREMENTS, TEST_FMT, Target, paths_for_new

pytestmark = [pytest.mark.claude, pytest.mark.slow]

QUESTION = "Should rows be separated by newlines or by commas?"
ANSWER = "newlines, one row a line"
# A NORMAL task, so the tester (default tester_tiers: normal, critical) runs after its gates.
PLAN_BAD = PLAN_HEAD + "**Depends on:** Task 7\n**Tier:** normal\n" + PLAN_TAIL  # no task 7: sent back
PLAN_GOOD = PLAN_HEAD + "**Depends on:** none\n**Tier:** normal\n" + PLAN_TAIL
# The developer's first render passes its own test but fails on no rows; the tester finds that.
SIGNATURE = '"""fmt."""\n\n\ndef render(rows: list[str]) -> str:\n'
BUGGY = SIGNATURE + '    return rows[0] + "".join("\\n" + r for r in rows[1:])\n'
EDGE = '\n\ndef test_render_of_no_rows() -> None:\n    assert render([]) == ""\n'
DOCUMENTED = SIGNATURE + '    """Each row on its own line."""\n    return "\\n".join(rows)\n'


def review_file(paths: IntakePaths) -> str:
    return f"docs/reviews/{paths.plan_id}-final-review.md"


FINDING = "render() has no docstring"
HIGH = f"""\
# Final review

One problem.

```yaml
findings:
  - id: F1
    severity: high
    file: src/calc/fmt.py
    line: 4
    finding: {FINDING}
    fix: say what render returns
```
"""
CLEAN = "# Final review\n\nThe change does what the requirements ask.\n\n```yaml\nfindings: []\n```\n"
NOTE = {"summary": "done", "risks": [], "rollback": "git revert"}


def done(summary: str) -> Step:
    return signal_step({"signal": "complete", "summary": summary, "selfAssessment": "confident"})


def developer_done(code: str, **extra: object) -> Step:
    mapping = [{"criterion": CRITERION, "location": f"src/calc/fmt.py:{line_of(code, 'return')}"}]
    return signal_step(
        {"signal": "complete", "summary": "render joins rows", "criteriaMapping": mapping, "reviewNote": NOTE, **extra}
    )


def by_attempt(first: Step, later: Step) -> Step:
    """`first` in a task's first session (or review round 1), `later` in the ones after it."""
    return lambda s, r: (first if s.attempt <= 1 else later)(s, r)


def overwrite(path: str, content: str) -> str:
    """A shell command that rewrites `path` (the Write tool refuses a file the session has not read)."""
    return f"cat > {path} <<'EOF'\n{content}EOF"


def scripts(sent_back: list[str], paths: IntakePaths) -> dict[tuple[str, str], list[Step]]:
    def fix(s: SessionHeader, r: ModelRequest) -> Turn:
        sent_back.append(r.conversation_text())
        return bash(overwrite("src/calc/fmt.py", FMT))(s, r)

    created = {"filesCreated": ["src/calc/fmt.py", "tests/test_fmt.py"], "testEvidence": ["all passed"]}
    remediation_criterion = f"final review finding F1 is fixed: {FINDING}"
    return {
        ("task-requirements", "analyst"): [
            signal_step({"signal": "needs-user-input", "question": QUESTION, "context": "the request does not say"}),
            write(paths.design_rel, REQUIREMENTS),
            done("S1 written"),
        ],
        ("task-plan", "planner"): [
            write(paths.plan_rel, PLAN_BAD),
            done("one task"),
            write(paths.plan_rel, PLAN_GOOD),
            done("one task, dependency fixed"),
        ],
        ("task-1", "developer"): [
            by_attempt(write("src/calc/fmt.py", BUGGY), fix),
            by_attempt(write("tests/test_fmt.py", TEST_FMT), bash("python -m pytest -q || true")),
            by_attempt(developer_done(BUGGY, **created), developer_done(FMT, filesModified=["src/calc/fmt.py"])),
        ],
        ("task-1", "tester"): [
            bash(f"cat >> tests/test_fmt.py <<'EOF'\n{EDGE}EOF"),
            signal_step(
                {
                    "signal": "complete",
                    "summary": "added test_render_of_no_rows",
                    "filesModified": ["tests/test_fmt.py"],
                }
            ),
        ],
        ("task-r1", "developer"): [
            bash(overwrite("src/calc/fmt.py", DOCUMENTED)),
            signal_step(
                {
                    "signal": "complete",
                    "summary": "docstring added",
                    "criteriaMapping": [
                        {"criterion": remediation_criterion, "location": "src/calc/fmt.py:5"},
                    ],
                    "reviewNote": NOTE,
                    "filesModified": ["src/calc/fmt.py"],
                }
            ),
        ],
        ("task-final-review", "reviewer"): [
            by_attempt(write(review_file(paths), HIGH), write(review_file(paths), CLEAN)),
            signal_step({"signal": "complete", "summary": "final review written"}),
        ],
        ("*", "reviewer"): [signal_step({"signal": "complete", "summary": "approved", "reviewNote": NOTE})],
    }


def pm(repo: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """One pm-agent command, as a user types it, to its end; never prompting."""
    exe = shutil.which("pm-agent", path=str(Path(sys.executable).parent))
    assert exe is not None
    return subprocess.run(
        [exe, *args, "-C", str(repo)],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def in_store(repo: Path, read: Callable[[Store], EscalationRecord]) -> EscalationRecord:
    store = open_store(default_store_path(repo))
    try:
        return read(store)
    finally:
        store.close()


def open_escalation(store: Store) -> EscalationRecord:
    run = store.latest_run()
    assert run is not None
    (esc,) = [e for e in store.list_escalations(run.id) if e.status is EscalationStatus.OPEN]
    return esc


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


@pytest.mark.timeout(420)
def test_a_request_walks_to_its_release(calc: Callable[[], Target]) -> None:
    t = calc()
    paths = paths_for_new("walk")
    sent_back: list[str] = []
    t.team.scripts.update(scripts(sent_back, paths))

    # 1. The request; the analyst asks; pm-agent stops and says how to answer.
    asked = pm(t.repo, "new", REQUEST, "--slug", "walk", "--no-input")
    assert asked.returncode == 3, asked.stdout + asked.stderr
    assert "pm-agent answer ID TEXT" in asked.stdout
    question = in_store(t.repo, open_escalation)
    assert (question.source, question.task_id) == ("intake-question", "requirements")
    assert QUESTION in question.problem
    assert pm(t.repo, "answer", str(question.id), ANSWER, timeout=60).returncode == 0

    # 2. The analyst continues with the answer; the planner's plan is sent back once; the approval waits.
    approving = pm(t.repo, "resume", "--no-input")
    assert approving.returncode == 3, approving.stdout + approving.stderr
    approval = in_store(t.repo, open_escalation)
    assert approval.source == "intake-approval", approval.problem
    assert "task-1: Output format [normal; after: none; files: src/calc/fmt.py, tests/test_fmt.py]" in approval.problem
    assert pm(t.repo, "answer", str(approval.id), "approve", timeout=60).returncode == 0

    # 3. The plan runs to its release.
    released = pm(t.repo, "resume", "--no-input")
    out = released.stdout + released.stderr
    assert released.returncode == 0, out
    assert f"Final review: {review_file(paths)}" in out
    # The final review's task row is pm-agent's record, not plan work: 2 tasks (1 and r1) everywhere.
    assert ": 2 completed, 0 waiting for an answer, 0 failed" in out
    assert "Tasks: 2/2 completed" in out  # the handoff
    status = pm(t.repo, "status")
    assert "Completed 2/2 tasks" in status.stdout, status.stdout + status.stderr

    store = open_store(default_store_path(t.repo))
    try:
        intake, plan_run = (r for r in sorted(store.list_runs(), key=lambda r: r.created_at))
        assert intake.status.value == "completed"
        # The analyst's one conversation, resumed with the human's answer.
        analyst = store.list_sessions(intake.id, "requirements")
        assert len(analyst) == 2
        assert analyst[1].resumed_from == analyst[0].id
        assert analyst[0].agent_session_id == analyst[1].agent_session_id
        # The planner's parse error went back with the file and line, to the same conversation.
        sent = [e.payload["problems"] for e in store.events(intake.id, "plan") if e.kind == "intake.sent_back"]
        assert sent == [
            [
                f"{t.repo}/.pm-agent/worktrees/{intake.id}/intake/{paths.plan_rel}:5: "
                "Task 1 depends on Task 7, which is not in the plan"
            ]
        ]
        planner = store.list_sessions(intake.id, "plan")
        assert [s.resumed_from for s in planner] == [None, planner[0].id]
        locked = [e.payload["sha256"] for e in store.events(intake.id) if e.kind == "requirements.locked"]
        assert locked == [requirements_hash(REQUIREMENTS)]
        answers = [(e.source, e.answer, e.status.value) for e in store.list_escalations(intake.id)]
        assert answers == [("intake-question", ANSWER, "applied"), ("intake-approval", "approve", "applied")]

        # Task 1: developer, tester (its edge case fails), the developer again, the reviewer.
        assert [s.role for s in store.list_sessions(plan_run.id, "1")] == ["developer", "tester", "developer",
                                                                            "reviewer"]  # fmt: skip
        fixes = [e.payload for e in store.events(plan_run.id, "1") if e.kind == "fix.requested"]
        assert [f["source"] for f in fixes] == ["the tester's edge-case tests fail (2-tests-added, 3-tests-run)"]
        assert "test_render_of_no_rows" in fixes[0]["evidence"]
        tasks = {r.task_id: r.state for r in store.list_tasks(plan_run.id)}
        assert tasks == {"1": "completed", "r1": "completed", "final-review": "completed"}
        assert [(s.role, s.attempt) for s in store.list_sessions(plan_run.id, "final-review")] == [
            ("reviewer", 1),
            ("reviewer", 2),
        ]
        kinds = [e.kind for e in store.events(plan_run.id)]
        assert kinds.count("final_review.round") == 2
        assert "final_review.resolved" in kinds
        assert store.list_escalations(plan_run.id) == []
    finally:
        store.close()
    # The developer sent back read the tester's failing test.
    assert sent_back, "the developer was never sent back"
    assert "test_render_of_no_rows" in sent_back[0]

    branch = f"pm/{paths.plan_id}/work"
    subjects = git(t.repo, "log", "--format=%s", f"main..{branch}").splitlines()
    assert subjects[-2:] == [f"Plan: {REQUEST}", f"Requirements: {REQUEST}"]
    bodies = git(t.repo, "log", "--format=%B", f"main..{branch}")
    for trailer in (f"Pm-Intake: {intake.id}", "Refs: task-1", "Refs: task-r1", f"Refs: release-{paths.plan_id}"):
        assert trailer in bodies.splitlines(), trailer
    assert git(t.repo, "show", f"{branch}:{paths.design_rel}") == REQUIREMENTS
    assert git(t.repo, "show", f"{branch}:{paths.plan_rel}") == PLAN_GOOD
    # The tester's test is in the released tree; the code is the fixed, then documented, render.
    assert git(t.repo, "show", f"{branch}:tests/test_fmt.py") == TEST_FMT + EDGE
    assert git(t.repo, "show", f"{branch}:src/calc/fmt.py") == DOCUMENTED
    review = git(t.repo, "show", f"{branch}:{review_file(paths)}")
    assert f"| F1 | high | src/calc/fmt.py:4 | {FINDING} | say what render returns | remediated by task-r1 |" in review
    assert "No findings." in review.split("## Round 2", 1)[1].split("##", 1)[0]
    manifest = parse_manifest(git(t.repo, "show", f"{branch}:docs/releases/{paths.plan_id}-release.yaml"))
    assert manifest.plan_id == paths.plan_id
    assert manifest.final_review == review_file(paths)
    assert [(x.task_id, x.tier) for x in manifest.tasks] == [("task-1", "normal"), ("task-r1", "normal")]
    assert manifest.design_doc.endswith(Path(paths.design_rel).name)
    assert manifest.tests_run == manifest.tests_passed == 3  # smoke, the developer's test, the tester's
    assert manifest.risks == []
