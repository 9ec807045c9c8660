"""An Agent OS 1.x spec's tasks.md run by the real Claude Code CLI: each parent task with its sub-tasks is one task
(not each sub-task, as Kiro's items are), run in order, committed with its trailer; a checked-off parent is not
run; the spec's documents are named to the developer; the release checks every sub-task off."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pm_agent.testing.team import write

from .calc_plan import ADD, REVIEW, claimed
from .conftest import Target, git
from .test_ordered_forms_e2e import released_in_order

pytestmark = [pytest.mark.claude, pytest.mark.slow]

SPEC = ".agent-os/specs/2026-03-02-arithmetic"
TASKS = f"""\
# Spec Tasks

These are the tasks to be completed for the spec detailed in @{SPEC}/spec.md

> Created: 2026-03-02
> Status: Ready for Implementation

## Tasks

- [x] 1. Package layout
  - [x] 1.1 Agree on the package layout

- [ ] 2. Addition
  - [ ] 2.1 Implement add() in `src/calc/add.py`
  - [ ] 2.2 Return the sum of two integers

- [ ] 3. Subtraction
  - [ ] 3.1 Implement sub() in `src/calc/sub.py`
"""
FILES = {
    f"{SPEC}/spec.md": "# Spec Requirements Document\n\n> Spec: Arithmetic\n\n## Overview\n\nAdd and subtract.\n",
    f"{SPEC}/spec-lite.md": "# Spec Summary (Lite)\n\nAdd and subtract two integers.\n",
    f"{SPEC}/sub-specs/technical-spec.md": "# Technical Specification\n\nOne module per operation.\n",
}
SUB = '"""sub."""\n\n\ndef sub(a: int, b: int) -> int:\n    return a - b\n'


@pytest.mark.timeout(600)  # a hang guard, not a speed check
def test_an_agent_os_spec_runs_parent_by_parent(target: Callable[..., Target]) -> None:
    t = target(TASKS, at=f"{SPEC}/tasks.md", files=FILES)
    add_criteria = ("Implement add() in `src/calc/add.py`", "Return the sum of two integers")
    t.team.scripts = {
        ("*", "reviewer"): REVIEW,
        ("task-2", "developer"): [
            write("src/calc/add.py", ADD),
            claimed({"src/calc/add.py": ADD}, [(c, "src/calc/add.py", "return") for c in add_criteria]),
        ],
        ("task-3", "developer"): [
            write("src/calc/sub.py", SUB),
            claimed({"src/calc/sub.py": SUB}, [("Implement sub() in `src/calc/sub.py`", "src/calc/sub.py", "-")]),
        ],
    }
    rc = t.start(parallel_tiers=["low", "normal"], max_parallel_agents=3)
    assert rc.run.plan_id == "arithmetic"
    assert rc.run.design_doc is not None
    assert rc.run.design_doc.endswith(f"{SPEC}/spec.md")
    released_in_order(t, rc, ["2", "3"])  # through the release, which checks the sub-tasks off
    trailers = git(t.repo, "log", "--format=%(trailers:key=Refs,valueonly)", rc.run.working_branch).split()
    assert trailers == ["release-arithmetic", "task-3", "task-2"]
    prompts = "\n".join(r.conversation_text() for r in t.server.requests)
    assert f"`{SPEC}/`, also holds spec.md, spec-lite.md and sub-specs/" in prompts
    released = git(t.repo, "show", f"{rc.run.working_branch}:{SPEC}/tasks.md")
    assert released == TASKS.replace("[ ]", "[x]")
    assert (t.repo / SPEC / "tasks.md").read_text(encoding="utf-8") == TASKS  # the user's checkout as it was
