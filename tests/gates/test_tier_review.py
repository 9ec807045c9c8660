"""Tier escalation from the actual change, and the LOW-tier sanity check."""

from __future__ import annotations

import pytest

from pm_agent.gates import auto_escalate_tier, path_categories, sanity_check
from pm_agent.plan.models import ExpectedFiles, Task, Tier


@pytest.mark.parametrize(
    ("path", "category"),
    [
        ("src/app/auth/tokens.py", "auth"),
        ("src/user_login.py", "auth"),
        ("migrations/0003_add_index.py", "schema/migrations"),
        ("db/schema.sql", "schema/migrations"),
        ("src/billing/invoice.py", "billing/finops"),
        (".env.production", "secrets/env"),
        ("config/.env", "secrets/env"),
        ("api/openapi.yaml", "public API"),
        ("proto/service.proto", "public API"),
        ("Dockerfile", "infra/docker"),
        ("docker-compose.yml", "infra/docker"),
        ("infra/main.tf", "infra/docker"),
        (".github/workflows/ci.yml", "infra/docker"),
        ("deploy/k8s/deployment.yaml", "infra/docker"),
    ],
)
def test_sensitive_paths(path: str, category: str) -> None:
    assert category in path_categories(path)
    tier, reasons = auto_escalate_tier([path], "", Tier.LOW)
    assert tier == Tier.CRITICAL
    assert reasons == [f"{c}: {path}" for c in path_categories(path)]


@pytest.mark.parametrize(
    "path",
    ["src/author.py", "docs/envelope.md", "src/calc.py", "README.md", "tests/test_auth.py", "docs/auth/login.md"],
)
def test_ordinary_paths_keep_their_tier(path: str) -> None:
    assert auto_escalate_tier([path], "", Tier.NORMAL) == (Tier.NORMAL, [])


DDL_DIFF = """\
diff --git a/src/store.py b/src/store.py
--- a/src/store.py
+++ b/src/store.py
@@ -1,0 +2 @@
+    conn.execute("ALTER TABLE users ADD COLUMN age int")
"""


def test_schema_change_in_diff_escalates() -> None:
    tier, reasons = auto_escalate_tier(["src/store.py"], DDL_DIFF, Tier.LOW)
    assert tier == Tier.CRITICAL
    assert reasons == ["schema/migrations: src/store.py changes `ALTER TABLE`"]


API_DIFF = """\
diff --git a/src/calc.py b/src/calc.py
--- a/src/calc.py
+++ b/src/calc.py
@@ -1 +1 @@
-def add(a, b):
+def add(a, b, c=0):
"""


def test_sanity_check_for_low_tasks() -> None:
    task = Task(id="4", title="Reword help text", tier=Tier.LOW, expected_files=ExpectedFiles(modify=["src/calc.py"]))
    fine = sanity_check(task, ["src/calc.py"], "")
    assert fine.ok
    assert fine.matches_scope
    assert not fine.escalate_to_normal

    api = sanity_check(task, ["src/calc.py"], API_DIFF)
    assert api.matches_scope
    assert api.escalate_to_normal
    assert not api.ok
    assert api.reasons == ["API: src/calc.py changes or removes public `add`"]

    drift = sanity_check(task, ["src/calc.py", "src/other.py", "docs/reviews/task-4-review.md"], "")
    assert not drift.matches_scope
    assert drift.out_of_scope == ["src/other.py"]

    security = sanity_check(task, ["src/calc.py", "src/auth/session.py"], "")
    assert security.escalate_to_normal
    assert "auth: src/auth/session.py" in security.reasons
