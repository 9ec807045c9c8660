"""TaskHistory over a real SQLite store: typed reports, pending followups, sessions since a state began."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pm_agent.engine.history import FOLLOWUP_PENDING, FOLLOWUP_RESOLVED, TaskHistory, typed_signal
from pm_agent.lifecycle import IssueState
from pm_agent.plan.models import Plan, Task, TaskStatus
from pm_agent.signals import CompleteSignal, NeedsRoleFollowupSignal
from pm_agent.store import SessionStatus, SqliteStore, open_store
from pm_agent.testing.clock import TickClock

RUN = "run1"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    with open_store(tmp_path / ".pm-agent" / "state.db", clock=TickClock()) as opened:
        plan = Plan(plan_id="demo", path="p.md", design_path="d.md", tasks=[Task(id="1", title="Add a parser")])
        opened.create_run(plan, baseline_sha="a" * 40, working_branch="pm/demo", shared_context={}, config={},
                          run_id=RUN)  # fmt: skip
        yield opened


def session(store: SqliteStore, role: str, *signals: tuple[str, dict[str, Any], bool]) -> int:
    """A finished session of `role` that sent `signals` as (kind, payload, accepted)."""
    s = store.create_session(RUN, "1", role, 1, f"tok-{role}-{len(store.list_sessions(RUN))}", "claude", "/w")
    for seq, (kind, payload, accepted) in enumerate(signals, start=1):
        store.record_signal(run_id=RUN, task_id="1", session_id=s.id, attempt=1, seq=seq, kind=kind,
                            payload={"signal": kind, "stepId": "task-1", **payload}, accepted=accepted)  # fmt: skip
    status = SessionStatus.SIGNALLED if signals else SessionStatus.EXITED
    store.update_session(s.id, status=status)
    return s.id


def move(store: SqliteStore, frm: IssueState, to: IssueState) -> None:
    store.transition(RUN, "1", from_state=frm.value, to_state=to.value, reason="test", iteration=0,
                     workflow_context={}, status=TaskStatus.IN_PROGRESS)  # fmt: skip


def test_latest_report_is_the_newest_accepted_complete_of_the_roles_typed(store: SqliteStore) -> None:
    history = TaskHistory(store, RUN, "1")
    assert history.latest_report() is None
    session(store, "developer", ("complete", {"summary": "first", "selfAssessment": "uncertain"}, True))
    session(store, "fixer", ("complete", {"summary": "refused"}, False))
    session(store, "reviewer", ("complete", {"summary": "looks fine"}, True))
    session(store, "fixer", ("partially-complete", {"progress": "half", "continuationPoint": "rest"}, True))
    report = history.latest_report()
    assert isinstance(report, CompleteSignal)
    assert (report.summary, report.self_assessment) == ("first", "uncertain")
    reviewed = history.latest_report(("reviewer",))
    assert reviewed is not None
    assert reviewed.summary == "looks fine"
    session(store, "fixer", ("complete", {"summary": "fixed", "reviewNote": {"summary": "s", "rollback": "r"}}, True))
    newest = history.latest_report()
    assert newest is not None
    assert newest.summary == "fixed"
    assert newest.review_note is not None
    assert newest.review_note.rollback == "r"


def test_a_pending_followup_names_the_asker_until_it_is_resolved(store: SqliteStore) -> None:
    history = TaskHistory(store, RUN, "1")
    asked = {"targetRole": "planner", "reason": "too big", "context": "split it", "resume": True}
    asker = session(store, "developer", ("needs-role-followup", asked, True))
    assert history.pending_followup() is None
    store.append_event(RUN, FOLLOWUP_PENDING, {"session_id": asker, "return_state": "implementing",
                                               "target": "planner"}, task_id="1")  # fmt: skip
    pending = history.pending_followup()
    assert pending is not None
    assert (pending.session_id, pending.return_state, pending.asker_role) == (
        asker,
        IssueState.IMPLEMENTING,
        "developer",
    )
    assert isinstance(pending.asked, NeedsRoleFollowupSignal)
    assert pending.asked.reason == "too big"
    store.append_event(RUN, FOLLOWUP_RESOLVED, {"session_id": asker}, task_id="1")
    assert history.pending_followup() is None


def test_since_state_entry_counts_only_sessions_of_the_current_state(store: SqliteStore) -> None:
    history = TaskHistory(store, RUN, "1")
    session(store, "developer")  # crashed before the move: not counted
    move(store, IssueState.RECEIVED, IssueState.IMPLEMENTING)
    session(store, "developer")
    session(store, "developer", ("partially-complete", {"progress": "half", "continuationPoint": "rest"}, True))
    session(store, "developer", ("partially-complete", {"progress": "more", "continuationPoint": "end"}, True))
    live = store.create_session(RUN, "1", "developer", 1, "tok-live", "claude", "/w")  # still running
    store.update_session(live.id, status=SessionStatus.RUNNING)
    assert (history.since_state_entry(None), history.since_state_entry("partially-complete")) == (1, 2)
    move(store, IssueState.IMPLEMENTING, IssueState.RUNNING_TESTS)
    assert (history.since_state_entry(None), history.since_state_entry("partially-complete")) == (0, 0)


def test_a_signal_is_read_once_and_signals_of_other_runs_are_not_taken_for_it(tmp_path: Path) -> None:
    # Two store files with the same run id, whose first signal has the same row id: each keeps its own reading.
    summaries = []
    for name in ("a", "b"):
        with open_store(tmp_path / name / "state.db", clock=TickClock()) as opened:
            plan = Plan(plan_id="demo", path="p.md", design_path="d.md", tasks=[Task(id="1", title="Add a parser")])
            run = opened.create_run(plan, baseline_sha="a" * 40, working_branch="pm/demo", shared_context={},
                                    config={}, run_id=RUN)  # fmt: skip
            s = opened.create_session(run.id, "1", "developer", 1, f"tok-{name}", "claude", "/w")
            opened.record_signal(run_id=run.id, task_id="1", session_id=s.id, attempt=1, seq=1, kind="complete",
                                 payload={"signal": "complete", "stepId": "task-1", "summary": name},
                                 accepted=True)  # fmt: skip
            record = opened.signals_for_session(s.id)[0]
            first, again = typed_signal(record), typed_signal(record.model_copy())
            assert isinstance(first, CompleteSignal)
            assert again is first, "read once"
            summaries.append((record.id, first.summary))
    assert summaries == [(1, "a"), (1, "b")]
