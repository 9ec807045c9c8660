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


# Chinese plans name the same topics in Chinese; each pair must tier and flag the task alike.
CHINESE = [
    ("实现用户认证", "Implement user authentication", "auth"),
    ("接口鉴权中间件", "Auth middleware for the endpoints", "auth"),
    ("API鉴权", "API authentication", "auth"),
    ("修改密码页面", "Change password page", "auth"),
    ("角色权限管理", "Role permissions", "auth"),
    ("接入支付回调", "Payment callback", "billing/finops"),
    ("生成月度账单", "Monthly billing run", "billing/finops"),
    ("数据库迁移：新增订单表", "Database migration for the orders table", "schema/migrations"),
    ("调整表结构", "Alter table for the orders schema", "schema/migrations"),
    ("轮换密钥", "Rotate the API keys", "secrets/env"),
    ("每日备份", "Daily backups", "data integrity"),
    ("容器化部署", "Docker deploy", "infra/docker"),
    ("修复安全漏洞", "Fix a security vulnerability", "security"),
    ("敏感字段加密", "Encrypt sensitive fields", "security"),
    ("公开接口的破坏性变更", "Breaking change of the public API", "public API"),
]


@pytest.mark.parametrize(("chinese", "english", "area"), CHINESE)
def test_a_chinese_title_tiers_and_flags_a_task_as_its_english_twin(chinese: str, english: str, area: str) -> None:
    zh = classify_tier(Task(id="1", title=chinese))
    en = classify_tier(Task(id="1", title=english))
    assert zh.tier is en.tier is Tier.CRITICAL
    assert zh.security_flags == en.security_flags
    assert critical_signals(zh)[0].rule.area == area


def test_chinese_words_count_in_the_description_and_the_criteria_too() -> None:
    described = classify_tier(Task(id="1", title="登录页", description="用户名和密码校验后签发令牌"))
    assert described.tier is Tier.CRITICAL
    assert described.security_flags.touches_auth
    criteria = classify_tier(Task(id="1", title="订单", acceptance_criteria=["迁移脚本可以回滚"]))
    assert criteria.tier is Tier.CRITICAL
    assert criteria.security_flags.touches_schema


@pytest.mark.parametrize("title", ["线程安全的缓存", "类型安全的配置读取", "书签搜索", "最终验证"])
def test_ordinary_chinese_titles_stay_normal(title: str) -> None:
    # 安全 alone also means "safe": thread- and type-safe code is no security topic.
    assert classify_tier(Task(id="1", title=title)).tier is Tier.NORMAL


def test_a_changed_path_in_chinese_names_its_area() -> None:
    assert changed_path_areas("docs/认证/登录流程.md") == [RiskArea.AUTH]
    assert changed_path_areas("src/marks/书签.py") == []
