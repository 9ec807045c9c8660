"""One vocabulary for risky topics: the plan's tier rules and the tier review of a change name an area alike."""

from __future__ import annotations

import pytest

from pm_agent.gates import auto_escalate_tier, path_categories
from pm_agent.plan import ExpectedFiles, Task, Tier, classify_tier
from pm_agent.plan.tier_rules import PATH_RULES, TEXT_RULES
from pm_agent.plan.tiers import critical_signals
from pm_agent.risk_words import RiskArea, changed_path_areas


def _planned(path: str) -> Task:
    return classify_tier(Task(id="1", title="Work", expected_files=ExpectedFiles(create=[path])))


@pytest.mark.parametrize(
    ("path", "area"),
    [
        ("src/auth/session.py", "auth"),
        ("src/billing/ledger.py", "billing/finops"),
        ("db/migrations/0002_orders.py", "schema/migrations"),
        ("sql/seed.sql", "schema/migrations"),
        (".env.example", "secrets/env"),
        ("src/backups/restore.py", "data integrity"),
        ("Dockerfile", "infra/docker"),
        ("deploy/k8s/app.yaml", "infra/docker"),
        ("src/security/tls.py", "security"),
        ("contracts/openapi.yaml", "public API"),
    ],
)
def test_a_planned_file_and_the_same_file_changed_name_the_same_area(path: str, area: str) -> None:
    task = _planned(path)
    assert task.tier is Tier.CRITICAL
    assert critical_signals(task)[0].rule.area == area
    assert path_categories(path)[0] == area
    tier, reasons = auto_escalate_tier([path], "", Tier.NORMAL)
    assert tier is Tier.CRITICAL
    assert reasons[0] == f"{area}: {path}"


def test_every_critical_rule_of_the_plan_names_a_risk_area() -> None:
    names = {rule.area for rule in (*TEXT_RULES, *PATH_RULES)}
    assert names == {area.value for area in RiskArea}
    assert all(rule.tier is Tier.CRITICAL for rule in (*TEXT_RULES, *PATH_RULES))


@pytest.mark.parametrize(
    ("path", "areas", "planned"),
    [
        ("src/api/routes.py", [RiskArea.PUBLIC_API], Tier.NORMAL),
        ("config/env.py", [RiskArea.SECRETS], Tier.NORMAL),
        ("src/auth/credentials.py", [RiskArea.AUTH, RiskArea.SECRETS], Tier.CRITICAL),
        ("src/textstats/counts.py", [], Tier.NORMAL),
    ],
)
def test_some_words_count_only_in_a_changed_path(path: str, areas: list[RiskArea], planned: Tier) -> None:
    """"api" and "env" are too common in planned names to tier a plan on; in a changed path they count."""
    assert changed_path_areas(path) == areas
    assert _planned(path).tier is planned


def test_a_ci_workflow_is_infra_for_the_plan_as_for_the_review() -> None:
    task = _planned(".github/workflows/ci.yml")
    assert task.tier is Tier.CRITICAL
    assert task.tier_reason == "CRITICAL: infra/docker file .github/workflows/ci.yml (infra/docker)"
    assert path_categories(".github/workflows/ci.yml") == ["infra/docker"]
