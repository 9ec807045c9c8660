"""Issue 4's end-to-end run: a 7-task plan through the real Claude Code CLI and the scripted model.

Parallel LOW tasks in separate worktrees, a CRITICAL task alone, a gate failure repaired by the
fixer, an agent's claim of passing tests refuted by pm-agent's own run, and a fix loop that
exhausts its budget and escalates. The git log, review artifacts, tags and branches are asserted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from pm_agent.engine.api import drive_run
from pm_agent.store import default_store_path, open_store
from pm_agent.testing.team import Step, bash, write

from .calc_plan import ADD, ADDITION, REVIEW, claimed, plan
from .conftest import Target, git

pytestmark = [pytest.mark.claude, pytest.mark.slow]

PLAN = plan(
    ADDITION,
    """\
### Task 2: Subtraction

**Files:**
- Create: `src/calc/sub.py`
- Test: `tests/test_sub.py`

**Acceptance criteria:**
- sub(a, b) returns the difference

### Task 3: Multiplication

**Files:**
- Create: `src/calc/mul.py`
- Test: `tests/test_mul.py`

**Acceptance criteria:**
- mul(a, b) returns the product

### Task 4: Safe division with input validation

**Tier:** critical

**Files:**
- Create: `src/calc/div.py`
- Test: `tests/test_div.py`

**Acceptance criteria:**
- div(a, b) raises ValueError when b is zero

### Task 5: Power

**Files:**
- Create: `src/calc/power.py`
- Test: `tests/test_power.py`

**Acceptance criteria:**
- power(a, b) returns a to the b

### Task 8: Power examples

**Depends on:** Task 5

**Files:**
- Create: `docs/power.md`

**Acceptance criteria:**
- the page shows power(2, 3)

### Task 6: Usage docs in the README

**Tier:** low
**Ownership:** docs

**Files:**
- Modify: `README.md`

**Acceptance criteria:**
- README shows an example

### Task 7: Editor config

**Tier:** low
**Ownership:** config

**Files:**
- Create: `.editorconfig`

**Acceptance criteria:**
- indent style is spaces
""",
    goal="a small calculator library.",
)


def module(name: str, body: str) -> str:
    return f'"""{name}."""\n\n\n{body}'


def work(files: dict[str, str], criteria: Sequence[tuple[str, str, str]], **extra: Any) -> list[Step]:
    steps: list[Step] = [write(path, text) for path, text in files.items()]
    done = claimed(files, criteria, **extra)
    return [*steps, bash("python -m pytest -q || true"), done]


SUB_TODO = module("sub", "def sub(a: int, b: int) -> int:\n    # TODO handle overflow\n    return a - b\n")
SUB = module("sub", "def sub(a: int, b: int) -> int:\n    return a - b\n")
MUL_BAD = module("mul", "def mul(a: int, b: int) -> int:\n    return a + b\n")
MUL = module("mul", "def mul(a: int, b: int) -> int:\n    return a * b\n")
DIV = module(
    "div",
    "def div(a: float, b: float) -> float:\n    if b == 0:\n        raise ValueError('division by zero')\n"
    "    return a / b\n",
)
POW_BAD = module("power", "def power(a: int, b: int) -> int:\n    return a * b\n")


def pytest_source(mod: str, fn: str, call: str, expected: str) -> str:
    return f"from calc.{mod} import {fn}\n\n\ndef test_{fn}() -> None:\n    assert {call} == {expected}\n"


TEST_DIV = (
    "import pytest\n\nfrom calc.div import div\n\n\ndef test_div() -> None:\n    assert div(6, 3) == 2\n"
    "    with pytest.raises(ValueError):\n        div(1, 0)\n"
)


def scripts() -> dict[tuple[str, str], list[Step]]:
    review = REVIEW
    add = {"src/calc/add.py": ADD, "tests/test_add.py": pytest_source("add", "add", "add(2, 3)", "5")}
    sub_t = pytest_source("sub", "sub", "sub(5, 3)", "2")
    mul_t = pytest_source("mul", "mul", "mul(2, 3)", "6")
    pow_t = pytest_source("power", "power", "power(2, 3)", "8")
    div = {"src/calc/div.py": DIV, "tests/test_div.py": TEST_DIV}
    return {
        ("task-1", "developer"): work(add, [("add(a, b) returns the sum", "src/calc/add.py", "return")]),
        ("task-1", "reviewer"): review,
        ("task-2", "developer"): work(
            {"src/calc/sub.py": SUB_TODO, "tests/test_sub.py": sub_t},
            [("sub(a, b) returns the difference", "src/calc/sub.py", "return")],
        ),
        ("task-2", "fixer"): work(
            {"src/calc/sub.py": SUB}, [("sub(a, b) returns the difference", "src/calc/sub.py", "return")]
        ),
        ("task-2", "reviewer"): review,
        ("task-3", "developer"): work(
            {"src/calc/mul.py": MUL_BAD, "tests/test_mul.py": mul_t},
            [("mul(a, b) returns the product", "src/calc/mul.py", "return")],
            testsClaimedPassing=True,
        ),
        ("task-3", "fixer"): work(
            {"src/calc/mul.py": MUL}, [("mul(a, b) returns the product", "src/calc/mul.py", "return")]
        ),
        ("task-3", "reviewer"): review,
        ("task-4", "developer"): work(
            div, [("div(a, b) raises ValueError when b is zero", "src/calc/div.py", "raise")]
        ),
        ("task-4", "reviewer"): review,
        ("task-5", "developer"): work(
            {"src/calc/power.py": POW_BAD, "tests/test_power.py": pow_t},
            [("power(a, b) returns a to the b", "src/calc/power.py", "return")],
        ),
        # The fixer never gets it right: the budget (2) runs out and the PM escalates.
        ("task-5", "fixer"): work(
            {"src/calc/power.py": POW_BAD}, [("power(a, b) returns a to the b", "src/calc/power.py", "return")]
        ),
        ("task-6", "developer"): work(
            {"README.md": "# calc\n\nExample: `add(2, 3)`\n"}, [("README shows an example", "README.md", "Example")]
        ),
        ("task-7", "developer"): work(
            {".editorconfig": "root = true\n\n[*]\nindent_style = space\n"},
            [("indent style is spaces", ".editorconfig", "indent_style")],
        ),
    }


@pytest.mark.timeout(600)  # 17 real sessions; a hang guard, not a speed check (2 busy cores can take 3+ minutes)
def test_seven_task_plan(target: Callable[[str], Target]) -> None:
    t = target(PLAN)
    t.team.scripts = scripts()
    rc = t.start()
    outcome = t.drive(rc)
    events = "\n".join(f"{k}: {m}" for k, m, _ in t.listener.events)
    assert sorted(outcome.completed) == ["1", "2", "3", "4", "6", "7"], events
    assert outcome.waiting == ["5"], events
    assert outcome.blocked == ["8"], events

    branch = rc.run.working_branch
    assert branch == "pm/calc/work"
    log = t.log(branch)
    # CRITICAL first, alone; NORMAL in plan order; after three completions anti-starvation lets the
    # independent LOW pair in (in parallel, so their order is free); then the rest.
    assert log[0] == "feat(calc): multiplication"
    assert set(log[1:3]) == {"docs(docs): usage docs in the README", "chore(config): editor config"}
    assert log[3:] == [
        "feat(calc): subtraction",
        "feat(calc): addition",
        "feat(calc): safe division with input validation",
        "initial",
    ]
    assert git(t.repo, "rev-parse", "main").strip() == rc.run.baseline_sha
    # Checkpoint tag only for the CRITICAL task, on its commit.
    tags = git(t.repo, "tag", "--list", "pm/*").split()
    assert tags == ["pm/calc/checkpoint-task-4"]
    tagged = git(t.repo, "rev-list", "-n1", "pm/calc/checkpoint-task-4").strip()
    assert git(t.repo, "log", "-1", "--format=%s", tagged).strip() == "feat(calc): safe division with input validation"
    # Task branches of completed tasks are gone; the escalated task's worktree and branch are kept.
    branches = sorted(git(t.repo, "branch", "--format=%(refname:short)").split())
    assert branches == ["feat/calc/task-5-power", "main", "pm/calc/work"]
    assert rc.worktree_path("5").is_dir()
    # Review artifacts are committed with each task.
    for ref in ("task-1", "task-2", "task-3", "task-4", "task-6", "task-7"):
        text = git(t.repo, "show", f"{branch}:docs/reviews/{ref}-review.md")
        assert "## Gates" in text
        assert "FAIL" not in text.split("## Gates")[1].split("## Risks")[0]
    sub_review = git(t.repo, "show", f"{branch}:docs/reviews/task-2-review.md")
    assert "- Attempts: 2" in sub_review
    store = open_store(default_store_path(t.repo))
    try:
        gates2 = {(g.attempt, g.gate): g.passed for g in store.gate_results(rc.run_id, "2")}
        assert any(not passed for (a, gate), passed in gates2.items() if gate == "5-no-orphan-todos")
        mul_gates = [g for g in store.gate_results(rc.run_id, "3") if g.gate == "3-tests-run" and not g.passed]
        assert mul_gates
        assert "agent claimed pass but tests failed" in mul_gates[0].evidence
        task5 = store.get_task(rc.run_id, "5")
        assert (task5.state, task5.retry_count) == ("waiting_for_human_input", 2)
        esc = [e for e in store.list_escalations(rc.run_id) if e.task_id == "5"]
        assert len(esc) == 1
        assert esc[0].source == "retry-budget"
        assert esc[0].status.value == "open"
        # The two LOW tasks ran at the same time, each in its own worktree.
        low = [s for s in store.list_sessions(rc.run_id) if s.task_id in ("6", "7")]
        assert len(low) == 2
        assert low[0].workdir != low[1].workdir
        first, second = sorted(low, key=lambda s: s.started_at)
        assert second.started_at < (first.ended_at or second.started_at), "LOW tasks did not overlap"
        # The CRITICAL task ran alone: no other session overlaps its sessions.
        crit = [s for s in store.list_sessions(rc.run_id) if s.task_id == "4"]
        others = [s for s in store.list_sessions(rc.run_id) if s.task_id != "4"]
        for c in crit:
            for o in others:
                assert o.ended_at is not None
                assert c.ended_at is not None
                assert o.ended_at <= c.started_at or o.started_at >= c.ended_at
    finally:
        store.close()

    # The human skips task 5: it fails, task 8 can never start, and the PM presents the blockers.
    store = open_store(default_store_path(t.repo))
    try:
        esc = next(e for e in store.list_escalations(rc.run_id) if e.task_id == "5")
        store.answer_escalation(esc.id, "skip")
    finally:
        store.close()
    result = asyncio.run(drive_run(rc, 0.2))
    assert result.outcome.failed == ["5"]
    assert result.outcome.blocked == ["8"]
    assert result.final is None
    assert result.exit_code == 1
    blockers = [e for e in rc.store.list_escalations(rc.run_id) if e.source == "all-blocked"]
    assert len(blockers) == 1
    assert "task-8 waits on task-5 (failed)" in blockers[0].problem
