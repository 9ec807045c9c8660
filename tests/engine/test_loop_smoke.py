"""The PM loop end to end with the real Claude Code CLI: the smallest plan that exercises every phase."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pm_agent.testing.team import bash, line_of, signal, write

from .conftest import Target, git

pytestmark = pytest.mark.claude

PLAN = """\
# calc

**Goal:** a tiny calculator.

### Task 1: Addition

**Files:**
- Create: `src/calc/add.py`
- Test: `tests/test_add.py`

**Acceptance criteria:**
- add(a, b) returns the sum

### Task 2: Document usage in the README

**Tier:** low
**Ownership:** docs

**Files:**
- Modify: `README.md`

**Acceptance criteria:**
- README shows how to call add
"""

ADD = 'def add(a: int, b: int) -> int:\n    """Sum."""\n    return a + b\n'
TEST_ADD = "from calc.add import add\n\n\ndef test_add() -> None:\n    assert add(2, 3) == 5\n"
README = "# calc\n\nUsage: `from calc.add import add; add(2, 3)`\n"
NOTE = {"summary": "adds add()", "risks": [], "rollback": "revert the commit"}


def test_two_tasks_run_gate_commit(target: Callable[[str], Target]) -> None:
    t = target(PLAN)
    t.team.scripts = {
        ("task-1", "developer"): [
            write("src/calc/add.py", ADD),
            write("tests/test_add.py", TEST_ADD),
            bash("python -m pytest -q"),
            signal(
                {
                    "signal": "complete",
                    "summary": "add implemented",
                    "filesCreated": ["src/calc/add.py", "tests/test_add.py"],
                    "testEvidence": ["2 passed"],
                    "criteriaMapping": [
                        {
                            "criterion": "add(a, b) returns the sum",
                            "location": f"src/calc/add.py:{line_of(ADD, 'return')}",
                        }
                    ],
                    "reviewNote": NOTE,
                }
            ),
        ],
        ("task-1", "reviewer"): [signal({"signal": "complete", "summary": "looks right", "reviewNote": NOTE})],
        ("task-2", "developer"): [
            write("README.md", README),
            signal(
                {
                    "signal": "complete",
                    "summary": "usage documented",
                    "filesModified": ["README.md"],
                    "criteriaMapping": [{"criterion": "README shows how to call add", "location": "README.md:3"}],
                    "reviewNote": {"summary": "docs", "risks": [], "rollback": "revert"},
                }
            ),
        ],
    }
    rc = t.start()
    outcome = t.drive(rc)
    print("\n".join(f"{k}: {m}" for k, m, _ in t.listener.events))
    assert outcome.all_done, (outcome, t.listener.events[-10:])
    assert t.log(rc.run.working_branch)[:2] == ["docs(docs): document usage in the README", "feat(calc): addition"]
    assert (
        git(t.repo, "log", "-1", "--format=%B", rc.run.working_branch)
        .strip()
        .endswith("Refs: task-2\nReview: docs/reviews/task-2-review.md")
    )
    assert git(t.repo, "rev-parse", "main") == git(t.repo, "rev-parse", rc.run.baseline_sha)
    # The run keeps its folder's marker that ends ESLint's search for settings there (statefile.mark_state_dir).
    assert (t.repo / ".pm-agent" / ".eslintrc.json").read_text(encoding="utf-8") == '{"root": true}\n'
    assert git(t.repo, "status", "--porcelain").strip() == ""
