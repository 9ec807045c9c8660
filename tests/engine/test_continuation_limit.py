"""A task whose sessions keep running out of context escalates naming the continuation limit, with the real CLI."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pm_agent.store import default_store_path, open_store
from pm_agent.testing.team import signal

from .conftest import Target

pytestmark = [pytest.mark.claude, pytest.mark.slow]

PLAN = """\
# calc

### Task 1: Addition

**Files:**
- Create: `src/calc/add.py`

**Acceptance criteria:**
- add(a, b) returns the sum
"""


def test_too_many_partially_complete_sessions_escalate_naming_the_continuation_limit(
    target: Callable[[str], Target],
) -> None:
    t = target(PLAN)
    out_of_context = signal(
        {"signal": "partially-complete", "progress": "read the code", "continuationPoint": "write add.py"}
    )
    t.team.scripts = {("task-1", "developer"): [out_of_context]}
    rc = t.start(max_continuations=1, retry_budget=2)
    t.drive(rc)
    store = open_store(default_store_path(t.repo))
    try:
        developer_sessions = [s for s in store.list_sessions(rc.run_id, "1") if s.role == "developer"]
        assert len(developer_sessions) == 2  # the first, and one continuation
        (esc,) = [e for e in store.list_escalations(rc.run_id) if e.task_id == "1"]
        assert esc.problem == (
            "task-1: 2 partially-complete sessions in implementing; "
            "continuation limit of 1 (max_continuations) reached"
        )
        assert "retry budget" not in esc.problem
        assert store.get_task(rc.run_id, "1").state == "waiting_for_human_input"
    finally:
        store.close()
