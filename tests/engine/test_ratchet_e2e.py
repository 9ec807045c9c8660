"""Issue 8's everyday case with the real Claude Code CLI: a repository whose lint and type check already fail.

The pre-existing ruff and mypy findings are the baseline: a clean task is committed despite them, a
task that adds one new finding is sent to the fixer with only that finding named as new, and the
release manifest reports baseline against final for each command.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from pm_agent.engine.api import drive_run
from pm_agent.human.channels import ScriptedChannel
from pm_agent.reports.manifest import parse_manifest
from pm_agent.store import EscalationRecord, default_store_path, open_store
from pm_agent.testing.team import signal

from .calc_plan import ADDITION, NOTE, plan, section
from .conftest import Target, git
from .test_loop_e2e import module, pytest_source, work

pytestmark = [pytest.mark.claude, pytest.mark.slow]

PY = sys.executable

PLAN = plan(
    ADDITION,
    section(
        2,
        "Subtraction",
        create=["src/calc/sub.py"],
        test="tests/test_sub.py",
        criteria=["sub(a, b) returns the difference"],
    ),
)

# What the repository already has wrong: one unused import (ruff F401) and one type error (mypy).
LEGACY = '"""Old code nobody cleaned up."""\n\nimport os\n\n\ndef legacy() -> int:\n    return "one"\n'
ADD = module("add", "def add(a: int, b: int) -> int:\n    return a + b\n")
SUB_NEW_FINDING = module("sub", "import sys\n\n\ndef sub(a: int, b: int) -> int:\n    return a - b\n")
SUB = module("sub", "def sub(a: int, b: int) -> int:\n    return a - b\n")


def test_pre_existing_findings_are_the_baseline_and_only_new_ones_fail(target: Callable[[str], Target]) -> None:
    t = target(PLAN)
    (t.repo / "src" / "calc" / "legacy.py").write_text(LEGACY, encoding="utf-8")
    git(t.repo, "add", "-A")
    git(t.repo, "commit", "-q", "-m", "legacy code")
    review = [signal({"signal": "complete", "summary": "approved", "reviewNote": NOTE})]
    add = {"src/calc/add.py": ADD, "tests/test_add.py": pytest_source("add", "add", "add(2, 3)", "5")}
    sub_test = pytest_source("sub", "sub", "sub(5, 3)", "2")
    t.team.scripts.update(
        {
            ("task-1", "developer"): work(add, [("add(a, b) returns the sum", "src/calc/add.py", "return")]),
            ("task-2", "developer"): work(
                {"src/calc/sub.py": SUB_NEW_FINDING, "tests/test_sub.py": sub_test},
                [("sub(a, b) returns the difference", "src/calc/sub.py", "return")],
            ),
            ("task-2", "fixer"): work(
                {"src/calc/sub.py": SUB}, [("sub(a, b) returns the difference", "src/calc/sub.py", "return")]
            ),
            ("*", "reviewer"): review,
        }
    )
    environment = {
        **t.config().environment.model_dump(),
        "lint_command": f"{PY} -m ruff check --no-cache src tests",
        "typecheck_command": f"{PY} -m mypy --cache-dir=/dev/null src",
    }
    rc = t.start(environment=environment)
    result = asyncio.run(drive_run(rc, 0.2))
    branch = rc.run.working_branch

    assert result.final is not None, result.outcome
    assert result.final.passed, (result.final, result.outcome)
    subjects = t.log(branch)
    assert [s for s in subjects if s.startswith("feat")] == ["feat(calc): subtraction", "feat(calc): addition"]

    store = open_store(default_store_path(t.repo))
    try:
        baseline = next(e for e in store.events(rc.run_id) if e.kind == "run.baseline").payload["environment"]
        by_key = {c["key"]: c for c in baseline["commands"]}
        assert (by_key["lint_command"]["exit_code"], by_key["lint_command"]["findings"]) == (1, 1)
        assert by_key["typecheck_command"]["exit_code"] == 1
        assert by_key["typecheck_command"]["findings"] == 1
        fixes = [e.payload["evidence"] for e in store.events(rc.run_id, "2") if e.kind == "fix.requested"]
        assert fixes == [fixes[0]], "exactly one fix round, for the one new finding"
        task1_gates = {g.gate: g.passed for g in store.gate_results(rc.run_id, "1")}
        assert task1_gates["4-lint-typecheck"] is True
    finally:
        store.close()
    evidence = fixes[0]
    new_part, _, old_part = evidence.partition("pre-existing findings")
    assert "NEW findings (1)" in new_part
    assert "src/calc/sub.py" in new_part
    assert "F401" in new_part
    assert "legacy.py" not in new_part.split("NEW findings (1)")[1]
    assert "src/calc/legacy.py" in old_part, "the pre-existing finding is listed as such"

    review_artifact = git(t.repo, "show", f"{branch}:docs/reviews/task-1-review.md")
    assert "pre-existing findings (1)" in review_artifact

    manifest_file = result.final.manifest_file
    assert manifest_file is not None
    manifest = parse_manifest(git(t.repo, "show", f"{branch}:{manifest_file}"))
    checks = {c.name: c for c in manifest.environment}
    assert checks["lint"].baseline == "exit 1, 1 finding(s) (ruff)"
    assert checks["lint"].final == "exit 1"
    assert (checks["lint"].rule, checks["lint"].new_findings, checks["lint"].preexisting_findings) == (
        "findings",
        0,
        1,
    )
    assert checks["typecheck"].preexisting_findings == 1
    assert checks["full test suite"].rule == "clean"
    assert manifest.lint_clean is False, "the manifest does not pass the baseline's findings off as clean"
    assert "Pre-existing: lint" in (result.final.handoff or "")
    assert yaml.safe_load(git(t.repo, "show", f"{branch}:{manifest_file}"))["environment"][0]["name"]



def test_an_environment_failure_in_a_gate_is_escalated_at_once_not_sent_to_the_fixer(
    target: Callable[[str], Target], tmp_path: Path
) -> None:
    """The type checker starts hanging mid-run (the environment changed, not the code): a human is asked,
    no fixer attempt is spent, and `retry` re-runs the gates once the environment is fixed."""
    t = target(PLAN.split("### Task 2")[0])
    add = {"src/calc/add.py": ADD, "tests/test_add.py": pytest_source("add", "add", "add(2, 3)", "5")}
    t.team.scripts.update(
        {
            ("task-1", "developer"): work(add, [("add(a, b) returns the sum", "src/calc/add.py", "return")]),
            ("*", "reviewer"): [signal({"signal": "complete", "summary": "approved", "reviewNote": NOTE})],
        }
    )
    broken = tmp_path / "environment-broken"
    hang = f"import os, time; time.sleep(120 if os.path.exists({str(broken)!r}) else 0)"
    asked: list[EscalationRecord] = []

    def answer(esc: EscalationRecord) -> str:
        asked.append(esc)
        broken.unlink()  # the human fixes the environment, then says retry
        return "retry"

    environment = {
        **t.config().environment.model_dump(),
        "typecheck_command": f'{PY} -c "{hang}"',
        "gate_timeout_s": 20,
    }
    rc = t.start(channel=ScriptedChannel(answer), environment=environment)
    broken.touch()  # after the baseline: the environment breaks during the run
    result = asyncio.run(drive_run(rc, 0.2))

    assert result.final is not None
    assert result.final.passed, result.outcome
    assert [e.source for e in asked] == ["environment"]
    assert "timed out after 20s" in asked[0].problem
    assert [role for task, role, _ in t.team.log if task == "task-1" and role == "fixer"] == []
    store = open_store(default_store_path(t.repo))
    try:
        assert [e for e in store.events(rc.run_id, "1") if e.kind == "fix.requested"] == []
        record = store.get_task(rc.run_id, "1")
        assert (record.state, record.retry_count) == ("completed", 0)
        moves = [(x.from_state, x.to_state) for x in store.transitions(rc.run_id, "1")]
        assert ("running_tests", "waiting_for_human_input") in moves
        assert ("human_input_received", "running_tests") in moves
    finally:
        store.close()
