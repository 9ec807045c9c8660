"""Less travelled paths of the PM loop, with the real CLI: an integration conflict sent back to the
fixer, and a task that never converges ending in REQUIRES_HUMAN_INTERVENTION with an escalation."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pm_agent.store import default_store_path, open_store
from pm_agent.testing.team import Step, line_of, signal, write

from .conftest import Target, git

pytestmark = [pytest.mark.claude, pytest.mark.slow]

NOTE = {"summary": "done", "risks": [], "rollback": "git revert"}


def complete(path: str, text: str, needle: str, criterion: str) -> Step:
    mapping = [{"criterion": criterion, "location": f"{path}:{line_of(text, needle)}"}]
    return signal({"signal": "complete", "summary": "ok", "criteriaMapping": mapping, "reviewNote": NOTE})


CONFLICT_PLAN = """\
# calc

### Task 1: Install section in the README

**Tier:** low
**Ownership:** install-docs

**Files:**
- Modify: `README.md`

**Acceptance criteria:**
- README says how to install

### Task 2: Usage section in the README

**Tier:** low
**Ownership:** usage-docs
**Depends on:** none (both README edits run side by side, to conflict)

**Files:**
- Modify: `README.md`

**Acceptance criteria:**
- README says how to use it
"""

INSTALL = "# calc\n\nInstall: `pip install calc`\n"
USAGE = "# calc\n\nUsage: `from calc import add`\n"
MERGED = "# calc\n\nInstall: `pip install calc`\n\nUsage: `from calc import add`\n"


def test_integration_conflict_goes_back_to_the_fixer(target: Callable[[str], Target]) -> None:
    t = target(CONFLICT_PLAN)
    t.team.scripts = {
        ("task-1", "developer"): [
            write("README.md", INSTALL),
            complete("README.md", INSTALL, "Install", "README says how to install"),
        ],
        ("task-2", "developer"): [
            write("README.md", USAGE),
            complete("README.md", USAGE, "Usage", "README says how to use it"),
        ],
        ("task-1", "fixer"): [
            write("README.md", MERGED),
            complete("README.md", MERGED, "Install", "README says how to install"),
        ],
        ("task-2", "fixer"): [
            write("README.md", MERGED),
            complete("README.md", MERGED, "Usage", "README says how to use it"),
        ],
    }
    rc = t.start()
    outcome = t.drive(rc)
    events = "\n".join(f"{k}: {m}" for k, m, _ in t.listener.events)
    assert sorted(outcome.completed) == ["1", "2"], events
    assert "integration conflict" in events
    # Exactly one of the two went through the fixer, with the conflict as its evidence.
    store = open_store(default_store_path(t.repo))
    try:
        fixed = [x for x in store.list_tasks(rc.run_id) if x.retry_count == 1]
        assert len(fixed) == 1
        requests = [e for e in store.events(rc.run_id, fixed[0].task_id) if e.kind == "fix.requested"]
        assert "integration conflict with the working branch in: README.md" in requests[0].payload["evidence"]
    finally:
        store.close()
    assert git(t.repo, "show", f"{rc.run.working_branch}:README.md") == MERGED
    assert len(t.log(rc.run.working_branch)) == 3


LOOP_PLAN = """\
# calc

### Task 1: Addition

**Files:**
- Create: `src/calc/add.py`

**Acceptance criteria:**
- add(a, b) returns the sum
"""

ADD = '"""add."""\n\n\ndef add(a: int, b: int) -> int:\n    return a + b\n'


def test_a_task_that_never_converges_requires_human_intervention(target: Callable[[str], Target]) -> None:
    t = target(LOOP_PLAN)
    never_happy = signal(
        {
            "signal": "needs-role-followup",
            "targetRole": "spiritmender",
            "reason": "src/calc/add.py:5 still not good enough",
            "context": "style",
            "resume": False,
        }
    )
    t.team.scripts = {
        ("task-1", "developer"): [
            write("src/calc/add.py", ADD),
            complete("src/calc/add.py", ADD, "return", "add(a, b) returns the sum"),
        ],
        ("task-1", "fixer"): [
            write("src/calc/add.py", ADD),
            complete("src/calc/add.py", ADD, "return", "add(a, b) returns the sum"),
        ],
        ("task-1", "reviewer"): [never_happy],
    }
    rc = t.start(retry_budget=10, max_iterations=10)
    outcome = t.drive(rc)
    events = "\n".join(f"{k}: {m}" for k, m, _ in t.listener.events)
    assert outcome.failed == ["1"], events
    store = open_store(default_store_path(t.repo))
    try:
        task = store.get_task(rc.run_id, "1")
        assert task.state == "requires_human_intervention"
        assert task.iteration_count == 11  # max_iterations (10) transitions, then the stop
        states = [tr.to_state for tr in store.transitions(rc.run_id, "1")]
        assert states[-2:] == ["reviewing_code", "requires_human_intervention"]
        assert states.count("fixing_issues") == 2
        esc = [e for e in store.list_escalations(rc.run_id) if e.task_id == "1"]
        assert [e.source for e in esc] == ["loop-detection"]
        assert "reached max_iterations (10)" in esc[0].problem
    finally:
        store.close()
    assert t.log(rc.run.working_branch) == ["initial"]
    assert rc.worktree_path("1").is_dir(), "a task that stops keeps its worktree for inspection"


SLICE_PLAN = """\
# calc

### Task 1: Arithmetic

**Files:**
- Create: `src/calc/add.py`
- Create: `src/calc/sub.py`

**Acceptance criteria:**
- add(a, b) returns the sum
"""

SUB = '"""sub."""\n\n\ndef sub(a: int, b: int) -> int:\n    return a - b\n'
SLICES = """\
- title: Addition
  files: [src/calc/add.py]
  acceptance_criteria: ["add(a, b) returns the sum"]
- title: Subtraction
  files: [src/calc/sub.py]
  acceptance_criteria: ["sub(a, b) returns the difference"]
"""


def test_a_task_over_the_patch_size_limit_is_sliced_into_subtasks(target: Callable[[str], Target]) -> None:
    t = target(SLICE_PLAN)
    t.team.scripts = {
        ("task-1", "planner"): [signal({"signal": "complete", "summary": SLICES})],
        ("task-1.1", "developer"): [
            write("src/calc/add.py", ADD),
            complete("src/calc/add.py", ADD, "return", "add(a, b) returns the sum"),
        ],
        ("task-1", "developer"): [
            write("src/calc/sub.py", SUB),
            complete("src/calc/sub.py", SUB, "return", "sub(a, b) returns the difference"),
        ],
        ("*", "reviewer"): [signal({"signal": "complete", "summary": "approved", "reviewNote": NOTE})],
    }
    rc = t.start(patch_size_limit_files=1)
    outcome = t.drive(rc)
    events = "\n".join(f"{k}: {m}" for k, m, _ in t.listener.events)
    assert sorted(outcome.completed) == ["1", "1.1"], events
    assert t.log(rc.run.working_branch) == ["feat(calc): arithmetic", "feat(calc): addition", "initial"]
    store = open_store(default_store_path(t.repo))
    try:
        sub = store.get_task(rc.run_id, "1.1").task()
        assert sub.expected_files.create == ["src/calc/add.py"]
        parent = store.get_task(rc.run_id, "1").task()
        assert parent.expected_files.create == ["src/calc/sub.py"]
        assert parent.acceptance_criteria == ["sub(a, b) returns the difference"]
        assert parent.dependency_ids() == ["1.1"]
        roles = [(s.task_id, s.role) for s in store.list_sessions(rc.run_id)]
        assert roles == [
            ("1", "planner"),
            ("1.1", "developer"),
            ("1.1", "reviewer"),
            ("1", "developer"),
            ("1", "reviewer"),
        ]
    finally:
        store.close()
    # The sliced task restarted from the working branch that already holds its first slice.
    assert git(t.repo, "show", f"{rc.run.working_branch}:src/calc/add.py") == ADD


VAGUE_PLAN = """\
# calc

### Task 1: Make it nicer
"""


def test_vague_requirements_go_to_the_analyst_who_asks_the_human(target: Callable[[str], Target]) -> None:
    t = target(VAGUE_PLAN)
    question = {"signal": "needs-user-input", "question": "Nicer how?", "context": "the task says nothing"}
    t.team.scripts = {
        ("task-1", "analyst"): [
            signal(question),
            signal({"signal": "complete", "summary": "add a module docstring to calc", "selfAssessment": "confident"}),
        ],
        ("task-1", "developer"): [
            write("src/calc/nice.py", '"""Nicer calc: documented."""\n'),
            signal({"signal": "complete", "summary": "docstring", "reviewNote": NOTE}),
        ],
        ("*", "reviewer"): [signal({"signal": "complete", "summary": "approved", "reviewNote": NOTE})],
    }
    answers: list[str] = []

    def answer(esc: object) -> str:
        answers.append(str(getattr(esc, "problem", "")))
        return "a docstring is enough"

    from pm_agent.human.channels import ScriptedChannel

    rc = t.start(channel=ScriptedChannel(answer))
    outcome = t.drive(rc)
    events = "\n".join(f"{k}: {m}" for k, m, _ in t.listener.events)
    assert outcome.completed == ["1"], events
    assert len(answers) == 1
    assert "Nicer how?" in answers[0]
    store = open_store(default_store_path(t.repo))
    try:
        states = [tr.to_state for tr in store.transitions(rc.run_id, "1")]
        assert states[:7] == [
            "planning_approach",
            "analyzing_requirements",
            "requirements_unclear",
            "waiting_for_requirements_clarification",
            "requirements_clarified",
            "analyzing_requirements",
            "planning_approach",
        ]
        assert states[-1] == "completed"
        analyst = [s for s in store.list_sessions(rc.run_id, "1") if s.role == "analyst"]
        assert analyst[1].resumed_from == analyst[0].id
    finally:
        store.close()


SCHEMA_PLAN = """\
# calc

### Task 1: Users table migration

**Files:**
- Create: `migrations/001_users.sql`

**Acceptance criteria:**
- the users table has an id primary key
"""

SQL = "create table users (\n    id integer primary key\n);\n"


def test_a_high_blast_radius_task_keeps_its_branch_and_lands_as_a_merge(target: Callable[[str], Target]) -> None:
    t = target(SCHEMA_PLAN)
    t.team.scripts = {
        ("task-1", "developer"): [
            write("migrations/001_users.sql", SQL),
            complete("migrations/001_users.sql", SQL, "primary key", "the users table has an id primary key"),
        ],
        ("*", "reviewer"): [signal({"signal": "complete", "summary": "approved", "reviewNote": NOTE})],
    }
    rc = t.start()
    outcome = t.drive(rc)
    assert outcome.completed == ["1"]
    task = rc.store.get_task(rc.run_id, "1")
    assert task.tier.value == "critical"
    assert task.task().security_flags.touches_schema
    branch = rc.run.working_branch
    held = "feat/calc/task-1-users-table-migration"
    assert t.log(branch) == [
        f"Merge {held} into {branch}",
        "feat(migrations): users table migration",
        "initial",
    ]
    assert held in git(t.repo, "branch", "--format=%(refname:short)").split()
    assert git(t.repo, "rev-parse", held).strip() == task.commit_sha
    assert git(t.repo, "tag", "--list", "pm/*").split() == ["pm/calc/checkpoint-task-1"]
