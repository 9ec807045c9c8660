"""A task's first delivery does not search the branches for a commit of its own (none can exist: pm-agent commits for
a task only in CREATING_PR); a later one, or one after a restart, does (test_crash_resume.py shows why it must)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from pm_agent.engine.decisions import Decision
from pm_agent.engine.taskflow import TaskFlow
from pm_agent.lifecycle import IssueState as S
from pm_agent.store import default_store_path, open_store
from pm_agent.vcs import Git

from .conftest import Target
from .test_crash_resume import PLAN, scripts


@pytest.mark.claude
def test_first_deliveries_do_not_search_and_the_run_ends_with_one_commit_per_task(
    target: Callable[[str], Target], monkeypatch: pytest.MonkeyPatch
) -> None:
    t = target(PLAN)
    t.team.scripts = scripts()
    searched: list[str] = []
    original = Git.find_commit_on_any

    def spy(self: Git, ref: str, *args: Any, **kwargs: Any) -> str | None:
        searched.append(ref)
        return original(self, ref, *args, **kwargs)

    monkeypatch.setattr(Git, "find_commit_on_any", spy)
    rc = t.start()
    outcome = t.drive(rc)
    rc.store.close()
    assert outcome.all_done, outcome
    assert searched == []
    assert rc.first_deliveries == set()  # each taken by its delivery
    store = open_store(default_store_path(t.repo))
    try:
        run = store.latest_run()
        assert run is not None
        assert [c.task_id for c in store.commits(run.id)] == ["1", "2"]
        log = Git(t.repo).run("log", "--format=%B", run.working_branch)
        assert log.count("Refs: task-1") == 1
        assert log.count("Refs: task-2") == 1
    finally:
        store.close()


def test_only_the_first_entry_into_creating_pr_ever_is_a_first_delivery(target: Callable[[str], Target]) -> None:
    t = target(PLAN)
    rc = t.start()
    flow = TaskFlow(rc, "1")
    path = [S.PLANNING_APPROACH, S.IMPLEMENTING, S.RUNNING_TESTS, S.REVIEWING_CODE, S.CREATING_PR]
    for state in path:
        flow._store(Decision(state, "test"), None)
        assert ("1" in rc.first_deliveries) is (state is S.CREATING_PR)
    rc.first_deliveries.clear()  # as the delivery takes it
    for state in (S.FIXING_ISSUES, S.RUNNING_TESTS, S.REVIEWING_CODE, S.CREATING_PR):  # back after a conflict
        flow._store(Decision(state, "test"), None)
    assert rc.first_deliveries == set()
    rc.store.close()
