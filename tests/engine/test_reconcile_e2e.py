"""Issue 12 part 4 end to end: the plan file is edited while a run goes on (real Claude Code CLI, scripted model).

One run covers the cases: while task 1 works, the plan gains task 4, task 2's criteria change (it is
queued: it runs with the new text) and task 3 goes (queued: cancelled). While task 2 works, an edit
that does not parse is refused and the run goes on. While task 4 works, completed task 1 changes:
an escalation, task 1 and its commit untouched; the human answers re-open and the follow-up task-1-r1
runs on top of task 1. The cancelled task holds no release: the final gate passes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from pm_agent.agents.header import SessionHeader
from pm_agent.engine.api import drive_run
from pm_agent.engine.reconcile import RECONCILED, REFUSED
from pm_agent.human.channels import ScriptedChannel
from pm_agent.reports.progress_data import progress_text
from pm_agent.testing.scenario import ModelRequest, Turn
from pm_agent.testing.team import Step, bash, write

from .calc_plan import ADD, ADDITION, REVIEW, TEST_ADD, claimed, plan, section
from .conftest import Target, git

pytestmark = [pytest.mark.claude, pytest.mark.slow]

SUB_OLD = "sub(a, b) returns the difference"
SUB_NEW = "sub(a, b) returns a minus b, as its docstring says"
ADD_NEW = "add(a, b) returns the sum of a and b"


def sub_section(criterion: str) -> str:
    return section(
        2, "Subtraction", create=["src/calc/sub.py"], test="tests/test_sub.py", criteria=[criterion], depends_on=[1]
    )


MUL = section(
    3, "Multiplication", create=["src/calc/mul.py"], criteria=["mul(a, b) returns the product"], depends_on=[1]
)
NEG = section(
    4, "Negation", create=["src/calc/neg.py"], test="tests/test_neg.py", criteria=["neg(a) returns -a"], depends_on=[2]
)
V1 = plan(ADDITION, sub_section(SUB_OLD), MUL)
V2 = plan(ADDITION, sub_section(SUB_NEW), NEG)
BROKEN = V2.replace("**Depends on:** Task 2", "**Depends on:** Task 9")
V4 = V2.replace("add(a, b) returns the sum", ADD_NEW)

SUB = '"""sub."""\n\n\ndef sub(a: int, b: int) -> int:\n    """a minus b."""\n    return a - b\n'
TEST_SUB = "from calc.sub import sub\n\n\ndef test_sub() -> None:\n    assert sub(5, 3) == 2\n"
ADD_FLOAT = '"""add."""\n\n\ndef add(a: float, b: float) -> float:\n    """The sum of a and b."""\n    return a + b\n'
TEST_ADD_FLOAT = "from calc.add import add\n\n\ndef test_add() -> None:\n    assert add(1.5, 2) == 3.5\n"
NEG_SRC = '"""neg."""\n\n\ndef neg(a: int) -> int:\n    return -a\n'
TEST_NEG = "from calc.neg import neg\n\n\ndef test_neg() -> None:\n    assert neg(2) == -2\n"


def editing(path: Path, text: str, then: Step, seen: list[str] | None = None) -> Step:
    """A step that saves the plan as the user would (and keeps the prompt it was asked with), then works."""

    def step(s: SessionHeader, r: ModelRequest) -> Turn:
        if seen is not None:
            seen.append(r.conversation_text())
        path.write_text(text, encoding="utf-8")
        return then(s, r)

    return step


def work(files: dict[str, str], criterion: str, needle: str, path: str) -> list[Step]:
    steps: list[Step] = [write(p, text) for p, text in files.items()]
    return [*steps, bash("python -m pytest -q || true"), claimed(files, [(criterion, path, needle)])]


@pytest.mark.timeout(600)  # 6 real sessions; a hang guard, not a speed check
def test_plan_edited_during_the_run(target: Callable[[str], Target]) -> None:
    t = target(V1)
    prompts: list[str] = []
    add = work(
        {"src/calc/add.py": ADD, "tests/test_add.py": TEST_ADD},
        "add(a, b) returns the sum",
        "return",
        "src/calc/add.py",
    )
    sub = work({"src/calc/sub.py": SUB, "tests/test_sub.py": TEST_SUB}, SUB_NEW, "return", "src/calc/sub.py")
    neg = work(
        {"src/calc/neg.py": NEG_SRC, "tests/test_neg.py": TEST_NEG}, "neg(a) returns -a", "return", "src/calc/neg.py"
    )
    t.team.scripts = {
        ("task-1", "developer"): [editing(t.plan, V2, add[0]), *add[1:]],
        ("task-2", "developer"): [editing(t.plan, BROKEN, sub[0], prompts), *sub[1:]],
        ("task-4", "developer"): [editing(t.plan, V4, neg[0]), *neg[1:]],
        ("task-1-r1", "developer"): work(
            {"src/calc/add.py": ADD_FLOAT, "tests/test_add.py": TEST_ADD_FLOAT}, ADD_NEW, "return", "src/calc/add.py"
        ),
        ("*", "reviewer"): REVIEW,
    }
    rc = t.start(ScriptedChannel(lambda e: "re-open" if e.source == "plan-change:task-1" else None))
    result = asyncio.run(drive_run(rc, 0.2))
    outcome = result.outcome
    events = "\n".join(f"{k}: {m}" for k, m, _ in t.listener.events)
    assert sorted(outcome.completed) == ["1", "1-r1", "2", "4"], events
    assert (outcome.cancelled, outcome.failed) == (["3"], []), events
    # A task removed from the plan holds no release: the final gate passed and wrote the manifest.
    assert result.final is not None
    assert result.final.passed, (result.final.problems, events)
    store, run_id = rc.store, rc.run_id

    # Task 2 was still queued: it ran with the new text, and the old one is gone from its prompt.
    assert SUB_NEW in prompts[0]
    assert SUB_OLD not in prompts[0]
    assert store.get_task(run_id, "2").task().acceptance_criteria == [SUB_NEW]
    # Task 3 was queued: cancelled, never dispatched.
    assert [tr.reason for tr in store.transitions(run_id, "3")] == ["removed from the plan"]
    assert store.list_sessions(run_id, "3") == []
    # Task 4 was added and ran on top of task 2.
    log = t.log(rc.run.working_branch)
    assert log[0] == "chore(release): release manifest for calc"
    assert log[-3:] == ["feat(calc): subtraction", "feat(calc): addition", "initial"], events
    assert sorted(log[1:3]) == ["feat(calc): addition", "feat(calc): negation"], events  # task-1-r1 and task-4

    edits = store.events_of_kind(run_id, [RECONCILED, REFUSED])
    kinds = [e.kind for e in edits]
    assert kinds == [RECONCILED, REFUSED, RECONCILED, RECONCILED], events
    first, refused, last, answer = edits
    assert (first.payload["added"], first.payload["updated"], first.payload["cancelled"]) == (["4"], ["2"], ["3"])
    line = BROKEN.splitlines().index("### Task 4: Negation") + 1
    assert refused.payload["error"] == f"{t.plan}:{line}: Task 4 depends on Task 9, which is not in the plan"
    assert f"plan edit refused: {t.plan}:{line}" in events

    # Completed task 1 changed: escalated, its contract and commit untouched.
    [esc] = [e for e in store.list_escalations(run_id) if e.source == "plan-change:task-1"]
    assert last.payload["escalated"] == {"1": esc.id}
    assert "task-1 changed in the plan while it is completed" in esc.problem
    assert store.get_task(run_id, "1").task().acceptance_criteria == ["add(a, b) returns the sum"]
    assert store.get_task(run_id, "1").commit_sha is not None
    # The human answered re-open: task-1-r1 took the new text, after task 1, and its work landed.
    assert (esc.status.value, esc.answer) == ("applied", "re-open")
    assert answer.payload["added"] == ["1-r1"]
    follow = store.get_task(run_id, "1-r1").task()
    assert (follow.acceptance_criteria, follow.dependency_ids()) == ([ADD_NEW], ["1"])
    assert "The sum of a and b" in git(t.repo, "show", f"{rc.run.working_branch}:src/calc/add.py")
    # The user's edits stay in the main checkout: the checkout guard leaves the plan alone.
    assert t.plan.read_text(encoding="utf-8") == V4
    assert not [e for e in store.list_escalations(run_id) if e.source == "checkout-guard"]
    report = progress_text(rc.db_path, run_id, rc.run.plan_id)
    assert "Plan edits: 3 applied, 1 refused (last 1 added)" in report, report
