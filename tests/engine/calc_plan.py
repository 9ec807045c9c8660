"""The calc target's plan and scripted work, shared by the real-CLI end-to-end tests.

PLAN = plan(ADDITION, section(2, "Negation", create=["src/calc/neg.py"], ...))
t.team.scripts = {("task-1", "developer"): [write(...), complete(files, criteria)], ("*", "reviewer"): REVIEW}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pm_agent.testing.team import Step, line_of, signal

NOTE: dict[str, Any] = {"summary": "done", "risks": [], "rollback": "git revert the task commit"}

# The reviewer of every task approves.
REVIEW: list[Step] = [signal({"signal": "complete", "summary": "approved", "reviewNote": NOTE})]

ADD = '"""add."""\n\n\ndef add(a: int, b: int) -> int:\n    return a + b\n'
TEST_ADD = "from calc.add import add\n\n\ndef test_add() -> None:\n    assert add(1, 2) == 3\n"


def section(
    number: int,
    title: str,
    *,
    criteria: Sequence[str],
    create: Sequence[str] = (),
    modify: Sequence[str] = (),
    test: str | None = None,
    depends_on: Sequence[int] = (),
    tier: str | None = None,
    ownership: str | None = None,
) -> str:
    """One `### Task N: Title` section of a plan, fields in the order the parser's fixtures use."""
    fields = [f"**Depends on:** {', '.join(f'Task {n}' for n in depends_on)}"] if depends_on else []
    fields += [f"**Tier:** {tier}"] if tier else []
    fields += [f"**Ownership:** {ownership}"] if ownership else []
    files = [f"- Create: `{p}`" for p in create] + [f"- Modify: `{p}`" for p in modify]
    files += [f"- Test: `{test}`"] if test else []
    blocks = [f"### Task {number}: {title}", "\n".join(fields), "\n".join(["**Files:**", *files])]
    blocks.append("\n".join(["**Acceptance criteria:**", *(f"- {c}" for c in criteria)]))
    return "\n\n".join(b for b in blocks if b) + "\n"


def plan(*sections: str, goal: str | None = None) -> str:
    """A plan named calc: an optional goal line, then the sections."""
    head = "# calc\n\n" + (f"**Goal:** {goal}\n\n" if goal else "")
    return head + "\n".join(sections)


ADDITION = section(
    1, "Addition", create=["src/calc/add.py"], test="tests/test_add.py", criteria=["add(a, b) returns the sum"]
)


def complete(
    files: Mapping[str, str],
    criteria: Sequence[tuple[str, str, str]],
    *,
    summary: str = "done",
    note: Mapping[str, Any] = NOTE,
    **extra: Any,
) -> Step:
    """A developer's complete signal: each (criterion, path, needle) mapped to the needle's line in `files`."""
    mapping = [{"criterion": c, "location": f"{p}:{line_of(files[p], needle)}"} for c, p, needle in criteria]
    payload = {"signal": "complete", "summary": summary, "criteriaMapping": mapping, "reviewNote": dict(note)}
    return signal({**payload, **extra})


def claimed(files: Mapping[str, str], criteria: Sequence[tuple[str, str, str]], **extra: Any) -> Step:
    """`complete` that also claims the files created and a passing test run, as most scripted developers do."""
    return complete(files, criteria, filesCreated=sorted(files), testEvidence=["all passed"], **extra)
