"""`pm-agent new` end to end with the real Claude Code CLI and the scripted model: the analyst asks a
question the scripted user answers, writes the requirements; the planner's first plan has a parse
error that goes back to the same session with pm-agent's exact message; the corrected plan is
approved; both documents are committed; the plan's task runs to the release manifest."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pm_agent.engine.events import RecordingListener
from pm_agent.engine.final_review import CONTAINER as FINAL_REVIEW
from pm_agent.human.channels import ScriptedChannel
from pm_agent.intake import Phase, new_request, requirements_hash
from pm_agent.store import EscalationRecord, default_store_path, open_store
from pm_agent.testing.team import Step, write
from pm_agent.testing.team import signal as signal_step
from pm_agent.vcs import Git

from .conftest import (
    DAY,
    PATHS,
    PLAN_BAD,
    PLAN_GOOD,
    REQUEST,
    REQUIREMENTS,
    Target,
    config,
    delivery_scripts,
    done,
)

pytestmark = [pytest.mark.claude, pytest.mark.slow]

QUESTION = "Should rows be separated by newlines or by commas?"
ANSWER = "newlines, one row a line"


def scripts() -> dict[tuple[str, str], list[Step]]:
    return {
        ("task-requirements", "analyst"): [
            signal_step({"signal": "needs-user-input", "question": QUESTION, "context": "the request does not say"}),
            write(PATHS.design_rel, REQUIREMENTS),
            done("S1 written"),
        ],
        ("task-plan", "planner"): [
            write(PATHS.plan_rel, PLAN_BAD),
            done("one task"),
            write(PATHS.plan_rel, PLAN_GOOD),
            done("one task, dependency fixed"),
        ],
        **delivery_scripts(),
    }


def user(esc: EscalationRecord) -> str | None:
    if esc.source == "intake-question":
        return ANSWER
    if esc.source == "intake-approval":
        return "approve"
    return None


def test_request_to_release(calc: Callable[[], Target]) -> None:
    t = calc()
    t.team.scripts.update(scripts())
    listener = RecordingListener()
    result = new_request(
        t.repo, REQUEST, listener=listener, channel=ScriptedChannel(user), config=config(), poll_s=0.2, today=DAY
    )
    assert result.intake is Phase.DONE
    assert result.run is not None
    assert result.exit_code == 0, listener.kinds()

    store = open_store(default_store_path(t.repo))
    try:
        intake = store.get_run(result.intake_run)
        sessions = store.list_sessions(intake.id)
        # The analyst: one session, resumed with the answer (the same agent conversation).
        analyst = [s for s in sessions if s.role == "analyst"]
        assert len(analyst) == 2
        assert analyst[1].resumed_from == analyst[0].id
        assert analyst[0].agent_session_id == analyst[1].agent_session_id
        # The planner: its parse error went back, verbatim, to the same conversation.
        planner = [s for s in sessions if s.role == "planner"]
        assert len(planner) == 2
        assert planner[1].resumed_from == planner[0].id
        sent = [e for e in store.events(intake.id, "plan") if e.kind == "intake.sent_back"]
        assert [e.payload["problems"] for e in sent] == [
            [
                f"{t.repo}/.pm-agent/worktrees/{intake.id}/intake/{PATHS.plan_rel}:5: "
                "Task 1 depends on Task 7, which is not in the plan"
            ]
        ]
        locked = [e for e in store.events(intake.id, "requirements") if e.kind == "requirements.locked"]
        assert [e.payload["sha256"] for e in locked] == [requirements_hash(REQUIREMENTS)]
        escalations = store.list_escalations(intake.id)
        assert [(e.source, e.answer) for e in escalations] == [
            ("intake-question", ANSWER),
            ("intake-approval", "approve"),
        ]
        run = store.get_run(result.run.run_id)
        # The plan's one task, and the final review's record (its reviewer sessions) before the release.
        assert [(r.task_id, r.state) for r in store.list_tasks(run.id)] == [
            ("1", "completed"),
            (FINAL_REVIEW, "completed"),
        ]
        assert run.plan_doc.endswith(f"{intake.id}/{PATHS.plan_rel.split('/')[-1]}")
    finally:
        store.close()
    git = Git(t.repo)
    subjects = git.run("log", "--format=%s", f"main..{result.run.working_branch}").splitlines()
    assert subjects[-1] == f"Requirements: {REQUEST}"
    assert subjects[-2] == f"Plan: {REQUEST}"
    assert git.run("show", f"{result.run.working_branch}:{PATHS.plan_rel}") == PLAN_GOOD
    assert git.run("show", f"{result.run.working_branch}:{PATHS.design_rel}") == REQUIREMENTS
    assert result.run.final is not None
    assert result.run.final.passed
    manifest = result.run.final.manifest_file
    assert manifest is not None
    assert "Refs: task-1" in git.run("log", "--format=%B", f"main..{result.run.working_branch}")
    assert git.run("ls-tree", "--name-only", result.run.working_branch, "--", manifest).strip() == manifest


def test_a_plan_that_keeps_failing_spends_the_budget_then_the_human_aborts(calc: Callable[[], Target]) -> None:
    t = calc()
    t.team.scripts.update(
        {
            ("task-requirements", "analyst"): [write(PATHS.design_rel, REQUIREMENTS), done("S1 written")],
            ("task-plan", "planner"): [
                write(PATHS.plan_rel, PLAN_BAD),
                done("one task"),
                write(PATHS.plan_rel, PLAN_BAD),
                done("still one task"),
            ],
        }
    )
    answers = {"intake-budget": "abort"}
    result = new_request(
        t.repo,
        REQUEST,
        listener=RecordingListener(),
        channel=ScriptedChannel(lambda esc: answers.get(esc.source)),
        config=config().model_copy(update={"retry_budget": 1}),
        poll_s=0.2,
        today=DAY,
    )
    assert result.intake is Phase.FAILED
    assert result.run is None
    assert result.exit_code == 1
    store = open_store(default_store_path(t.repo))
    try:
        sent = [e for e in store.events(result.intake_run, "plan") if e.kind == "intake.sent_back"]
        assert len(sent) == 1  # one round of budget, then the human
        (esc,) = [e for e in store.list_escalations(result.intake_run) if e.source == "intake-budget"]
        assert "depends on Task 7, which is not in the plan" in esc.problem
        assert store.get_task(result.intake_run, "plan").state == "failed"
    finally:
        store.close()
    git = Git(t.repo)
    assert git.run("log", "--format=%s", f"main..pm/{PATHS.plan_id}/work").strip() == ""  # nothing committed
