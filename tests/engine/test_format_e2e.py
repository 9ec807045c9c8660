"""The format check with the real Claude Code CLI: a repository that runs `ruff format --check` in its CI.

A file already unformatted on the baseline is the baseline's (a clean task is committed despite it); a task
that leaves its new file unformatted goes to the fixer with that file named as the one new finding; the fixer
runs the formatter and the formatted file is what gets committed. The release manifest reports the check.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable

import pytest

from pm_agent.engine.api import drive_run
from pm_agent.reports.manifest import parse_manifest
from pm_agent.store import default_store_path, open_store
from pm_agent.testing.team import bash, signal

from .calc_plan import NOTE
from .conftest import Target, git
from .test_loop_e2e import claimed, module, pytest_source, work
from .test_ratchet_e2e import ADD, PLAN, SUB  # SUB: what ruff format makes of SUB_UNFORMATTED

pytestmark = [pytest.mark.claude, pytest.mark.slow]

PY = sys.executable
LEGACY = module("legacy", "def legacy()->int:\n    return 1\n")  # unformatted before the run
SUB_UNFORMATTED = module("sub", "def sub(a:int,b:int)->int:\n    return a-b\n")


def test_an_unformatted_new_file_is_the_one_new_finding_and_the_fixer_formats_it(
    target: Callable[[str], Target],
) -> None:
    t = target(PLAN)
    (t.repo / "src" / "calc" / "legacy.py").write_text(LEGACY, encoding="utf-8")
    git(t.repo, "add", "-A")
    git(t.repo, "commit", "-q", "-m", "legacy code")
    sub_criteria = [("sub(a, b) returns the difference", "src/calc/sub.py", "return")]
    add = {"src/calc/add.py": ADD, "tests/test_add.py": pytest_source("add", "add", "add(2, 3)", "5")}
    t.team.scripts.update(
        {
            ("task-1", "developer"): work(add, [("add(a, b) returns the sum", "src/calc/add.py", "return")]),
            ("task-2", "developer"): work(
                {
                    "src/calc/sub.py": SUB_UNFORMATTED,
                    "tests/test_sub.py": pytest_source("sub", "sub", "sub(5, 3)", "2"),
                },
                sub_criteria,
            ),
            # The fixer does what the evidence says: runs the project's formatter on the file it names.
            ("task-2", "fixer"): [
                bash(f"{PY} -m ruff format --no-cache src/calc/sub.py"),
                claimed({"src/calc/sub.py": SUB}, sub_criteria),
            ],
            ("*", "reviewer"): [signal({"signal": "complete", "summary": "approved", "reviewNote": NOTE})],
        }
    )
    environment = {
        **t.config().environment.model_dump(),
        "lint_command": f"{PY} -m ruff check --no-cache src tests",
        "format_command": f"{PY} -m ruff format --check --no-cache src tests",
    }
    rc = t.start(environment=environment)
    result = asyncio.run(drive_run(rc, 0.2))
    branch = rc.run.working_branch

    assert result.final is not None, result.outcome
    assert result.final.passed, (result.final, result.outcome)
    assert [s for s in t.log(branch) if s.startswith("feat")] == ["feat(calc): subtraction", "feat(calc): addition"]
    assert git(t.repo, "show", f"{branch}:src/calc/sub.py") == SUB
    assert git(t.repo, "show", f"{branch}:src/calc/legacy.py") == LEGACY, "pre-existing: not the task's to change"

    store = open_store(default_store_path(t.repo))
    try:
        events = store.events(rc.run_id)
        baseline = next(e for e in events if e.kind == "run.baseline").payload["environment"]
        fmt = next(c for c in baseline["commands"] if c["key"] == "format_command")
        # legacy.py and the target's own tests/test_smoke.py (single quotes), both the baseline's.
        assert (fmt["exit_code"], fmt["findings"], fmt["parser"]) == (1, 2, "ruff-format"), fmt["output"]
        fixes = [e.payload["evidence"] for e in store.events(rc.run_id, "2") if e.kind == "fix.requested"]
        assert len(fixes) == 1, "one fix round, for the one new finding"
        assert {g.gate: g.passed for g in store.gate_results(rc.run_id, "1")}["4-lint-typecheck"] is True
    finally:
        store.close()
    new_part, _, old_part = fixes[0].partition("pre-existing findings")
    assert "NEW findings (1)" in new_part
    assert "src/calc/sub.py: format would be reformatted" in new_part
    assert "legacy.py" not in new_part
    assert "src/calc/legacy.py" in old_part

    manifest_file = result.final.manifest_file
    assert manifest_file is not None
    checks = {c.name: c for c in parse_manifest(git(t.repo, "show", f"{branch}:{manifest_file}")).environment}
    assert (checks["format"].rule, checks["format"].new_findings, checks["format"].preexisting_findings) == (
        "findings",
        0,
        2,
    )
