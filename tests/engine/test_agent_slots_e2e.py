"""A slot is an agent's (engine/agentslots.py), with the real Claude Code CLI and one slot.

When a task's agent finishes, the next task's agent starts while pm-agent checks the finished one (its
gates here take two seconds); never two agents at once; a task that needs its fixer after failed gates
waits for the slot and gets it before a task not started yet.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable

import pytest

from pm_agent.store import default_store_path, open_store

from .calc_plan import plan, section
from .conftest import Target
from .test_loop_e2e import module, pytest_source, work

pytestmark = [pytest.mark.claude, pytest.mark.slow]

PY = sys.executable
PLAN = plan(
    section(1, "Addition", tier="low", ownership="calc-add", create=["src/calc/add.py"], test="tests/test_add.py",
            criteria=["add(a, b) returns the sum"]),
    section(2, "Negation", tier="low", ownership="calc-neg", create=["src/calc/neg.py"], test="tests/test_neg.py",
            criteria=["neg(a) returns -a"]),
    section(3, "Doubling", tier="low", ownership="calc-dbl", create=["src/calc/dbl.py"], test="tests/test_dbl.py",
            criteria=["dbl(a) returns 2 * a"]),
)  # fmt: skip
TEST_ADD = pytest_source("add", "add", "add(2, 3)", "5")
ADD_BAD = {"src/calc/add.py": module("add", "def add(a: int, b: int) -> int:\n    return a - b\n"),
           "tests/test_add.py": TEST_ADD}  # fmt: skip
ADD = {"src/calc/add.py": module("add", "def add(a: int, b: int) -> int:\n    return a + b\n"),
       "tests/test_add.py": TEST_ADD}  # fmt: skip
NEG = {"src/calc/neg.py": module("neg", "def neg(a: int) -> int:\n    return -a\n"),
       "tests/test_neg.py": pytest_source("neg", "neg", "neg(2)", "-2")}  # fmt: skip
DBL = {"src/calc/dbl.py": module("dbl", "def dbl(a: int) -> int:\n    return 2 * a\n"),
       "tests/test_dbl.py": pytest_source("dbl", "dbl", "dbl(2)", "4")}  # fmt: skip
# pm-agent's gates take two seconds at least: long enough for the next agent to be seen working meanwhile.
SLOW_TESTS = f"{PY} -c 'import time; time.sleep(2)' && {PY} -m pytest -q -p no:cacheprovider"


def test_one_slot_serves_the_next_agent_while_pm_agent_checks_and_the_fixer_comes_before_new_work(
    target: Callable[[str], Target],
) -> None:
    t = target(PLAN)
    t.team.scripts = {
        ("task-1", "developer"): work(ADD_BAD, [("add(a, b) returns the sum", "src/calc/add.py", "return")]),
        ("task-1", "fixer"): work(ADD, [("add(a, b) returns the sum", "src/calc/add.py", "return")]),
        ("task-2", "developer"): work(NEG, [("neg(a) returns -a", "src/calc/neg.py", "return")]),
        ("task-3", "developer"): work(DBL, [("dbl(a) returns 2 * a", "src/calc/dbl.py", "return")]),
    }  # fmt: skip
    environment = {"test_command": SLOW_TESTS, "lint_command": f"{PY} -m ruff check --no-cache src tests",
                   "gate_timeout_s": 120}  # fmt: skip
    rc = t.start(max_parallel_agents=1, environment=environment)
    outcome = t.drive(rc)
    assert outcome.all_done, (outcome, t.listener.events[-12:])

    store = open_store(default_store_path(t.repo))
    try:
        sessions = sorted(store.list_sessions(rc.run_id), key=lambda s: (s.started_at, s.id))
        committed = {c.task_id: c.created_at for c in store.commits(rc.run_id)}
    finally:
        store.close()
    assert [(s.task_id, s.role) for s in sessions] == [
        ("1", "developer"),
        ("2", "developer"),  # as soon as task 1's agent ended, before task 1's gates were done
        ("1", "fixer"),  # task 1's gates failed: its fixer waited for the slot and went before task 3
        ("3", "developer"),
    ]
    for before, after in itertools.pairwise(sessions):
        assert before.ended_at is not None
        assert after.started_at >= before.ended_at, "two agents worked at once in one slot"
    assert sessions[1].started_at < committed["1"], "task 2's agent waited for task 1's commit"
