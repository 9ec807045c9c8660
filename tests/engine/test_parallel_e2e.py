"""Issue 11 with the real Claude Code CLI: once task 1 of a diamond plan (1 -> {2, 3, 4} -> 5) completes,
its three NORMAL dependents run side by side in three slots under `parallel_tiers: [low, normal]`."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pm_agent.store import default_store_path, open_store
from pm_agent.testing.team import Step, bash, write

from .calc_plan import ADD, ADDITION, REVIEW, claimed, plan, section
from .conftest import Target

pytestmark = [pytest.mark.claude, pytest.mark.slow]

OPS = {"2": "sub", "3": "mul", "4": "neg"}


def op_section(number: str) -> str:
    name = OPS[number]
    return section(
        int(number),
        f"Operation {name}",
        create=[f"src/calc/{name}.py"],
        test=f"tests/test_{name}.py",
        depends_on=[1],
        tier="normal",
        ownership=f"calc-{name}",
        criteria=[f"{name} returns its result"],
    )


PLAN = plan(
    ADDITION,
    *(op_section(n) for n in OPS),
    section(
        5,
        "All operations",
        create=["src/calc/ops.py"],
        depends_on=[2, 3, 4],
        tier="normal",
        ownership="calc-ops",
        criteria=["ops lists every operation"],
    ),
)


def module(name: str, body: str) -> str:
    return f'"""{name}."""\n\n\n{body}'


SOURCES = {
    "sub": module("sub", "def sub(a: int, b: int) -> int:\n    return a - b\n"),
    "mul": module("mul", "def mul(a: int, b: int) -> int:\n    return a * b\n"),
    "neg": module("neg", "def neg(a: int) -> int:\n    return -a\n"),
}
CALLS = {"sub": ("sub(5, 3)", "2"), "mul": ("mul(2, 3)", "6"), "neg": ("neg(2)", "-2")}
OPS_MODULE = module(
    "ops",
    "from calc.add import add\nfrom calc.mul import mul\nfrom calc.neg import neg\nfrom calc.sub import sub\n\n"
    "OPERATIONS = [add, sub, mul, neg]\n",
)


def op_work(number: str) -> list[Step]:
    name = OPS[number]
    call, expected = CALLS[name]
    test = f"from calc.{name} import {name}\n\n\ndef test_{name}() -> None:\n    assert {call} == {expected}\n"
    files = {f"src/calc/{name}.py": SOURCES[name], f"tests/test_{name}.py": test}
    # The sleep keeps each session open long enough that the three overlap even on a loaded machine.
    steps: list[Step] = [write(path, text) for path, text in files.items()]
    criteria = [(f"{name} returns its result", f"src/calc/{name}.py", "return")]
    return [*steps, bash("sleep 15"), claimed(files, criteria)]


def scripts() -> dict[tuple[str, str], list[Step]]:
    add_test = "from calc.add import add\n\n\ndef test_add() -> None:\n    assert add(2, 3) == 5\n"
    add = {"src/calc/add.py": ADD, "tests/test_add.py": add_test}
    ops = {"src/calc/ops.py": OPS_MODULE}
    result: dict[tuple[str, str], list[Step]] = {
        ("task-1", "developer"): [
            *(write(p, t) for p, t in add.items()),
            claimed(add, [("add(a, b) returns the sum", "src/calc/add.py", "return")]),
        ],
        ("task-5", "developer"): [
            *(write(p, t) for p, t in ops.items()),
            claimed(ops, [("ops lists every operation", "src/calc/ops.py", "OPERATIONS")]),
        ],
        ("*", "reviewer"): REVIEW,
    }
    result.update({(f"task-{n}", "developer"): op_work(n) for n in OPS})
    return result


@pytest.mark.timeout(600)  # a hang guard, not a speed check
def test_diamond_middle_layer_runs_in_parallel(target: Callable[[str], Target]) -> None:
    t = target(PLAN)
    t.team.scripts = scripts()
    rc = t.start(parallel_tiers=["low", "normal"], max_parallel_agents=3)
    outcome = t.drive(rc)
    events = "\n".join(f"{k}: {m}" for k, m, _ in t.listener.events)
    assert sorted(outcome.completed) == ["1", "2", "3", "4", "5"], events

    store = open_store(default_store_path(t.repo))
    try:
        sessions = store.list_sessions(rc.run_id)
    finally:
        store.close()
    middle = [s for s in sessions if s.task_id in OPS and s.role == "developer"]
    assert sorted(s.task_id for s in middle) == ["2", "3", "4"], events
    assert all(s.ended_at is not None for s in middle)
    # Every pair overlaps, so one instant has all three running: the latest start precedes the earliest end.
    latest_start = max(s.started_at for s in middle)
    earliest_end = min(s.ended_at for s in middle if s.ended_at is not None)
    assert latest_start < earliest_end, [(s.task_id, s.started_at, s.ended_at) for s in middle]
    # The diamond's ends ran alone: 1 ended before any of the middle started, 5 started after all ended.
    root = [s for s in sessions if s.task_id == "1"]
    tail = [s for s in sessions if s.task_id == "5"]
    assert all(r.ended_at is not None and r.ended_at <= min(s.started_at for s in middle) for r in root)
    assert all(x.started_at >= max(s.ended_at or x.started_at for s in middle) for x in tail)
    # Each middle task worked in its own worktree.
    assert len({s.workdir for s in middle}) == 3
