from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from pm_agent.lifecycle.states import IssueState as S
from pm_agent.plan.models import TaskStatus, Tier
from pm_agent.reports.escalation import Escalation, render_escalation
from pm_agent.reports.manifest import (
    ManifestTask,
    ReleaseManifest,
    parse_manifest,
    render_handoff,
    render_manifest,
)
from pm_agent.reports.progress import ProgressData, ReportClock, RiskLine, TaskLine, render_progress
from pm_agent.reports.review import GateLine, ReviewArtifact, render_review, review_artifact_path


def test_escalation_uses_seed_001_template() -> None:
    text = render_escalation(
        Escalation(
            problem="gate 3 failed twice",
            impact="task-4 and task-6 are blocked",
            options=["retry with guidance", "skip task-4", "abort the run"],
            recommended="retry with guidance",
            blocking=True,
        ),
        7,
    )
    assert text.splitlines() == [
        "ESCALATION #7",
        "Problem:     gate 3 failed twice",
        "Impact:      task-4 and task-6 are blocked",
        "Options:     1) retry with guidance",
        "             2) skip task-4",
        "             3) abort the run",
        "Recommended: retry with guidance",
        "Blocking:    yes",
    ]


@pytest.mark.parametrize("options", [["only one"], ["a", "b", "c", "d"]])
def test_escalation_needs_two_or_three_options(options: list[str]) -> None:
    with pytest.raises(ValidationError):
        Escalation(problem="p", impact="i", options=options, recommended="r")


def test_progress_report_format_and_top_three_risks() -> None:
    data = ProgressData(
        plan_name="textstats",
        tasks=[
            TaskLine("1", "a", Tier.CRITICAL, TaskStatus.COMPLETED, S.COMPLETED),
            TaskLine("2", "b", Tier.NORMAL, TaskStatus.IN_PROGRESS, S.IMPLEMENTING),
            TaskLine("3", "c", Tier.LOW, TaskStatus.ESCALATED, S.WAITING_FOR_HUMAN_INPUT, "needs an answer"),
            TaskLine("4", "d", Tier.LOW, TaskStatus.PENDING, S.RECEIVED),
        ],
        risks=[
            RiskLine("r1", "low thing", "low"),
            RiskLine("r2", "critical thing", "critical"),
            RiskLine("r3", "normal thing", "normal"),
            RiskLine("r4", "another low", "low"),
        ],
        cost_usd=0.125,
        input_tokens=100,
        output_tokens=20,
    )
    assert render_progress(data).splitlines() == [
        "PROGRESS — textstats",
        "Completed: 1/4 tasks",
        "In progress: task-2 (implementing)",
        "Blocked: task-3: needs an answer",
        "Unresolved risks: 4 — [critical] critical thing; [normal] normal thing; [low] low thing",
        "Estimated remaining: 0 critical, 1 normal, 2 low",
        "Cost so far: $0.1250 (100 input / 20 output tokens)",
    ]


def test_report_clock_every_three_tasks_or_thirty_minutes() -> None:
    clock = ReportClock(task_interval=3, time_interval_s=1800, last_report_at=0)
    clock.task_completed()
    clock.task_completed()
    assert clock.due(10) is None
    clock.task_completed()
    assert clock.due(10) == "3 tasks completed"
    clock.reported(10)
    assert clock.due(1000) is None
    assert clock.due(1810) == "30 minutes elapsed"


def test_review_artifact_lists_criteria_gates_risks_rollback() -> None:
    text = render_review(
        ReviewArtifact(
            task_ref="task-3",
            title="Add counting",
            tier="normal",
            review_tier="normal",
            summary="Adds count_words.",
            criteria=[("counts words", "src/ts/count.py:4")],
            gates=[GateLine("3-tests-run", True, "5 passed")],
            risks=["unicode splitting"],
            rollback="git revert the commit",
        )
    )
    assert review_artifact_path("docs/reviews/", "task-3") == "docs/reviews/task-3-review.md"
    assert "| counts words | `src/ts/count.py:4` |" in text
    assert "### 3-tests-run: PASS" in text
    assert "- unicode splitting" in text
    assert text.rstrip().endswith("git revert the commit")


def test_manifest_round_trips_and_forbids_unknown_fields() -> None:
    manifest = ReleaseManifest(
        plan_id="textstats",
        plan_doc="docs/plans/plan.md",
        design_doc="docs/plans/design.md",
        completed_at=datetime(2026, 11, 25, 12, 0, tzinfo=UTC),
        tasks=[
            ManifestTask(
                task_id="task-1",
                commit_sha="a" * 40,
                review_artifact="r.md",
                tier="low",
                breaking_change=False,
            )
        ],
        tests_run=5,
        tests_passed=5,
        lint_clean=True,
        typecheck_clean=True,
        build_clean=True,
        risks=[],
        breaking_changes=[],
        migration_steps=[],
        rollback_plan="revert",
        recommended_next=["merge"],
    )
    text = render_manifest(manifest)
    assert text.splitlines()[0] == "plan_id: textstats"
    assert parse_manifest(text) == manifest
    with pytest.raises(ValidationError):
        parse_manifest(text + "extra_field: 1\n")
    handoff = render_handoff(
        manifest,
        plan_name="textstats",
        total_tasks=1,
        open_risks=[],
        manifest_file="docs/releases/textstats-release.yaml",
        reviews_dir="docs/reviews",
    )
    assert "Tasks: 1/1 completed" in handoff
    assert "Open risks: none — all mitigated/accepted" in handoff
