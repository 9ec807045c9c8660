"""A plan written with explicit fields: Depends on, Tier, Ownership, Acceptance criteria, Non-goals, Tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.plan import Plan, Tier, fastpath, load_plan

PLAN = Path(__file__).parent / "fixtures" / "2026-03-02-team-invoices.md"


@pytest.fixture(scope="module")
def plan() -> Plan:
    return load_plan(PLAN)


def test_header_without_architecture(plan: Plan) -> None:
    assert plan.plan_id == "team-invoices"
    assert plan.header.title == "Team invoices — plan"
    assert plan.header.goal.startswith("Monthly invoices for team workspaces: usage is metered per seat,")
    assert plan.header.goal.endswith("generated on the first of the month and emailed as PDF.")
    assert plan.header.architecture == ""
    assert plan.header.tech_stack == "Django 5, PostgreSQL, Celery, WeasyPrint"


def test_explicit_dependencies_in_every_spelling(plan: Plan) -> None:
    deps = {t.id: [(d.task_id, d.inferred) for d in t.depends_on] for t in plan.tasks}
    assert deps == {
        "1": [],  # "none"
        "2": [("1", False)],  # "Task 1"
        "3": [("1", False), ("2", False)],  # "Task 1, Task 2" (the inferred edge to 2 is not repeated)
        "4": [("3", False)],  # "task-3"
        "5": [("3", False), ("4", False)],  # "3, 4"
        "6": [],
        "7": [],
    }


def test_ownership(plan: Plan) -> None:
    assert [t.ownership for t in plan.tasks] == [
        "metering",
        "billing",
        "billing",
        "invoices-pdf",
        "notifications",
        "docs",
        "ops",
    ]


def test_acceptance_criteria_from_label_paragraph_and_sub_heading(plan: Plan) -> None:
    assert plan.task("1").acceptance_criteria == [
        "A daily Celery task records (workspace_id, day, active_seats) for every workspace",
        "Running the task twice for the same day keeps one row (idempotent)",
        "Seats of suspended members are not counted",
    ]
    assert plan.task("2").acceptance_criteria == [
        "Invoice has workspace, period, line items, total in cents, status (draft, issued, paid, void)",
        "The migration is reversible (migrate billing zero works)",
        "Totals are integers in cents; no floats anywhere",
    ]


def test_non_goals_as_list_heading_and_inline(plan: Plan) -> None:
    assert plan.task("1").non_goals == ["Per-feature metering", "Real-time usage dashboards"]
    assert plan.task("2").non_goals == ["Multi-currency"]
    assert plan.task("3").non_goals == ["Proration for mid-month plan changes"]
    assert plan.task("4").non_goals == []


def test_tests_to_add_and_run(plan: Plan) -> None:
    assert plan.task("2").tests_to_run == ["tests/metering/test_tasks.py", "tests/billing/test_models.py"]
    assert plan.task("2").tests_to_add == ["tests/billing/test_models.py"]
    assert plan.task("3").tests_to_add == [
        "tests/billing/test_jobs.py::test_rerun_is_idempotent",
        "tests/billing/test_jobs.py",
    ]


def test_files_after_fields(plan: Plan) -> None:
    t3 = plan.task("3")
    assert t3.expected_files.create == ["app/billing/jobs.py"]
    assert t3.expected_files.modify == ["app/billing/models.py"]
    assert t3.expected_files.modify_ranges == {"app/billing/models.py": "30-58"}
    assert plan.task("7").expected_files.modify == ["docker/worker.Dockerfile"]


def test_description_excludes_fields(plan: Plan) -> None:
    assert plan.task("1").description == (
        "Count active seats per workspace each day; later tasks turn the monthly peak into a line item."
    )
    assert plan.task("6").description == (
        "Explain where the Stripe API key and the billing contact list are configured."
    )


def test_explicit_tiers_and_security_overrides(plan: Plan) -> None:
    t2, t5, t6, t7 = (plan.task(i) for i in "2567")
    assert t2.explicit_tier is Tier.CRITICAL
    assert t2.tier is Tier.CRITICAL
    # **Tier:** low, but the description names the Stripe API key and the title invoices.
    assert t6.explicit_tier is Tier.LOW
    assert t6.tier is Tier.CRITICAL
    assert t6.security_flags.touches_secrets is True
    assert t6.security_flags.touches_billing is True
    assert t6.tier_reason == (
        "CRITICAL: security flag touches_billing, touches_secrets (keyword 'invoice' in title) "
        "overrides the explicit tier low"
    )
    assert "security flag touches_secrets: keyword 'api key' in description" in t6.decision_log
    assert t5.explicit_tier is Tier.NORMAL
    assert t5.tier is Tier.CRITICAL
    # **Tier:** normal on a Docker task is respected: no security flag, only an infra keyword.
    assert t7.tier is Tier.NORMAL
    assert t7.tier_reason == "NORMAL: explicit tier in the plan"
    assert "explicit tier normal kept although keyword 'docker' in title suggests CRITICAL" in t7.decision_log


def test_unflagged_task_without_keywords_is_normal(plan: Plan) -> None:
    t1 = plan.task("1")
    assert t1.tier is Tier.NORMAL
    assert t1.security_flags.any() is False
    assert t1.tier_reason == "NORMAL: no critical or low-risk signal (feature work)"


def test_queue(plan: Plan) -> None:
    # 6 is CRITICAL and free; 1 unblocks the billing chain; 7 (NORMAL) waits for all CRITICAL work.
    assert plan.queue == ["6", "1", "2", "3", "4", "5", "7"]


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "markdown-it"])
def test_a_list_after_a_depends_on_value_is_the_tasks_own(tmp_path: Path, fast: bool) -> None:
    """`**Depends on:** none` (or `Task 1`) then a checklist: the list is the task's steps, not more references
    (it was read as references: "cannot read task reference 'Step one'", "depends on Task 1.1")."""
    plan_file = tmp_path / "p.md"
    plan_file.write_text(
        "# P\n\n### Task 1: A\n**Depends on:** none\n\n- [ ] 1.0 Do it\n  - [ ] 1.1 sub\n\n"
        "### Task 2: B\n**Depends on:** Task 1\n\n- Step one\n- 2.1 sub\n",
        encoding="utf-8",
    )
    fastpath.ENABLED = fast
    try:
        plan = load_plan(plan_file)
    finally:
        fastpath.ENABLED = True
    assert [[d.task_id for d in t.depends_on] for t in plan.tasks] == [[], ["1"]]
    assert plan.tasks[0].steps[0] == "1.0 Do it"
