"""Seed 001 section 7 with the real CLI: a failing final gate opens remediation tasks that then pass;
the manifest validates and its SHAs are real; reports fire on their triggers; a CRITICAL task's open
risk holds the release until a human accepts it."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable

import pytest
import yaml

from pm_agent.engine.api import drive_run
from pm_agent.human.channels import ScriptedChannel
from pm_agent.reports.manifest import ReleaseManifest, parse_manifest
from pm_agent.store import EscalationRecord, default_store_path, open_store
from pm_agent.testing.team import Step, bash, write

from .calc_plan import ADD, NOTE, REVIEW, TEST_ADD, complete, plan, section
from .conftest import Target, git

pytestmark = [pytest.mark.claude, pytest.mark.slow]

PLAN = plan(
    section(
        1,
        "Addition",
        tier="critical",
        create=["src/calc/add.py"],
        test="tests/test_add.py",
        criteria=["add(a, b) returns the sum"],
    ),
    """\
### Task 2: Constants

**Files:**
- Create: `src/calc/consts.py`

**Acceptance criteria:**
- ZERO is 0
""",
)

CONSTS = '"""consts."""\n\nZERO = 0\n'
API = '"""The public API."""\n\nfrom calc.add import add\n\n__all__ = ["add"]\n'


def done(path: str, text: str, needle: str, criterion: str, risks: list[str] | None = None) -> Step:
    note = {**NOTE, "risks": risks or []}
    return complete({path: text}, [(criterion, path, needle)], summary="ok", note=note)


def scripts() -> dict[tuple[str, str], list[Step]]:
    return {
        ("task-1", "developer"): [
            write("src/calc/add.py", ADD),
            write("tests/test_add.py", TEST_ADD),
            done("src/calc/add.py", ADD, "return", "add(a, b) returns the sum", ["integer overflow is not handled"]),
        ],
        ("task-2", "developer"): [
            write("src/calc/consts.py", CONSTS),
            done("src/calc/consts.py", CONSTS, "ZERO", "ZERO is 0"),
        ],
        # The remediation task the final gate opens: the build check needs calc.api.
        ("task-r1", "developer"): [
            write("src/calc/api.py", API),
            bash("python -c 'import sys; sys.path.insert(0, \"src\"); import calc.api'"),
            done("src/calc/api.py", API, "import add", "build passes on the working branch"),
        ],
        ("*", "reviewer"): REVIEW,
    }


def test_final_gate_remediates_then_releases(target: Callable[[str], Target]) -> None:
    t = target(PLAN)
    t.team.scripts = scripts()
    answers: list[EscalationRecord] = []

    def accept(esc: EscalationRecord) -> str:
        answers.append(esc)
        return "accept"

    # Passes on the baseline (no calc.add yet) and fails once calc.add exists without calc.api: a failure
    # the run made, so the ratchet does not take it for the baseline's.
    check = "import os, sys; sys.exit(os.path.exists('src/calc/add.py') and not os.path.exists('src/calc/api.py'))"
    build = f'{sys.executable} -c "{check}"'
    rc = t.start(
        channel=ScriptedChannel(accept),
        environment={**t.config().environment.model_dump(), "build_command": build},
        progress_report_task_interval=2,
    )
    result = asyncio.run(drive_run(rc, 0.2))
    events = "\n".join(f"{k}: {m}" for k, m, _ in t.listener.events)
    assert result.final is not None, events
    assert result.final.passed, events
    assert result.exit_code == 0
    kinds = t.listener.kinds()
    # The first final gate failed on the build and opened task r1; the second one passed.
    assert kinds.count("final.failed") == 1
    assert kinds.count("final.passed") == 1
    store = open_store(default_store_path(t.repo))
    try:
        tasks = {x.task_id: x for x in store.list_tasks(rc.run_id)}
        # task-final-review holds the final review's session (every reviewer approves: a clean review).
        assert sorted(tasks) == ["1", "2", "final-review", "r1"]
        assert [s.role for s in store.list_sessions(rc.run_id, "final-review")] == ["reviewer"]
        assert tasks["r1"].state == "completed"
        assert "build" in tasks["r1"].title
        # The open risk of the CRITICAL task held the release until the scripted human accepted it.
        assert [e.source for e in answers] == ["risk-audit"]
        assert [(r.description, r.status.value) for r in store.list_risks(rc.run_id)] == [
            ("integer overflow is not handled", "accepted")
        ]
        reports = store.list_reports(rc.run_id)
        progress = [r.text for r in reports if r.kind == "progress"]
        # After the CRITICAL task (which resets the count), then after 2 more completed tasks.
        assert [p.splitlines()[1] for p in progress] == ["Completed: 1/2 tasks", "Completed: 3/3 tasks"]
        assert progress[0].startswith("PROGRESS — calc\n")
        handoff = [r.text for r in reports if r.kind == "handoff"]
        assert len(handoff) == 1
        assert handoff[0].startswith("RELEASE SUMMARY — calc")
        assert "Tasks: 3/3 completed" in handoff[0]
    finally:
        store.close()
    # The manifest is committed on the working branch, validates, and every SHA is a real commit there.
    branch = rc.run.working_branch
    text = git(t.repo, "show", f"{branch}:docs/releases/calc-release.yaml")
    manifest = parse_manifest(text)
    assert list(yaml.safe_load(text)) == list(ReleaseManifest.model_fields)
    assert [x.task_id for x in manifest.tasks] == ["task-1", "task-2", "task-r1"]
    for entry in manifest.tasks:
        assert git(t.repo, "cat-file", "-t", entry.commit_sha).strip() == "commit"
        assert git(t.repo, "merge-base", "--is-ancestor", entry.commit_sha, branch) == ""
        assert f"Refs: {entry.task_id}" in git(t.repo, "log", "-1", "--format=%B", entry.commit_sha)
        assert git(t.repo, "show", f"{branch}:{entry.review_artifact}").startswith(f"# Review: {entry.task_id}")
    assert manifest.tests_run == manifest.tests_passed == 2
    assert (manifest.lint_clean, manifest.typecheck_clean, manifest.build_clean) == (True, True, True)
    assert [r.status for r in manifest.risks] == ["accepted"]
    assert manifest.final_review == "docs/reviews/calc-final-review.md"
    review = git(t.repo, "show", f"{branch}:docs/reviews/calc-final-review.md")
    assert "## Round 1" in review
    assert "No findings." in review
    assert git(t.repo, "log", "-1", "--format=%s", branch).strip() == "chore(release): release manifest for calc"
    assert git(t.repo, "rev-parse", "main").strip() == rc.run.baseline_sha, "pm-agent must never touch main"
