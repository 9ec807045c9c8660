"""Tier review where a one-token change would go unnoticed: skipped paths, scan order, API and route changes.

Written against mutmut's survivors (make mutation).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pm_agent.gates import auto_escalate_tier, path_categories, sanity_check
from pm_agent.plan.models import ExpectedFiles, Task, Tier


def _diff(path: str, removed: list[str], added: list[str]) -> str:
    body = [f"-{line}" for line in removed] + [f"+{line}" for line in added]
    return (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
        f"@@ -1,{len(removed)} +1,{len(added)} @@\n" + "\n".join(body) + "\n"
    )


def _low(**fields: Any) -> Task:
    return Task(id="4", title="Reword", tier=Tier.LOW, **fields)


@pytest.mark.parametrize(
    "path",
    ["AUTH.MD", "docs/auth.py", "docs/api/openapi.yaml", "tests/test_auth.py", "src/__pycache__/auth.cpython.pyc"],
)
def test_docs_tests_and_generated_files_are_not_escalated(path: str) -> None:
    assert path_categories(path)  # sensitive by name, yet not a change of behaviour
    assert auto_escalate_tier([path], "", Tier.LOW) == (Tier.LOW, [])


@pytest.mark.parametrize("path", ["src/docs/auth.py", "auth.py", "auth/docs.py"])
def test_only_a_top_level_docs_directory_or_a_doc_suffix_skips(path: str) -> None:
    assert auto_escalate_tier([path], "", Tier.LOW)[0] is Tier.CRITICAL


def test_every_path_after_a_skipped_one_is_still_reviewed() -> None:
    tier, reasons = auto_escalate_tier(["README.md", "src/auth/session.py", "Dockerfile"], "", Tier.NORMAL)
    assert tier is Tier.CRITICAL
    assert reasons == ["auth: src/auth/session.py", "infra/docker: Dockerfile"]


def test_each_diff_category_once_per_path_and_every_path_after_a_skipped_one() -> None:
    diff = (
        _diff("tests/test_store.py", [], ['db.execute("DROP TABLE t")'])
        + _diff("src/store.py", [], ['db.execute("CREATE TABLE t (x int)")', 'db.execute("DROP INDEX i")'])
        + _diff("src/keys.py", [], ["SECRET_KEY = env('X')"])
    )
    tier, reasons = auto_escalate_tier([], diff, Tier.LOW)
    assert tier is Tier.CRITICAL
    assert reasons == [
        "schema/migrations: src/store.py changes `CREATE TABLE`",
        "secrets/env: src/keys.py changes `SECRET_KEY`",
    ]


def test_a_path_in_several_categories_gives_each_once() -> None:
    assert path_categories("infra/auth/Dockerfile") == ["infra/docker", "auth"]
    assert path_categories(".github/workflows/deploy-api.yml") == ["infra/docker", "public API"]


def test_removed_private_definitions_are_not_api_changes() -> None:
    task = _low(expected_files=ExpectedFiles(modify=["src/calc.py"]))
    diff = _diff("src/calc.py", ["def _helper(a):", "class _Cache:"], ["def _helper(a, b):"])
    result = sanity_check(task, ["src/calc.py"], diff)
    assert result.reasons == []
    assert result.ok


def test_api_changes_after_a_test_file_and_routes_are_reported() -> None:
    task = _low(expected_files=ExpectedFiles(modify=["src/calc.py", "tests/test_calc.py", "src/web.py"]))
    diff = (
        _diff("tests/test_calc.py", ["def test_add():"], [])
        + _diff("src/calc.py", ["async def add(a, b):"], [])
        + _diff("src/web.py", [], ["@app.get('/sum')"])
    )
    result = sanity_check(task, ["src/calc.py", "tests/test_calc.py", "src/web.py"], diff)
    assert result.reasons == [
        "API: src/calc.py changes or removes public `add`",
        "API: src/web.py changes an HTTP route",
    ]
    assert result.escalate_to_normal


def test_a_route_in_a_test_file_is_not_an_api_change() -> None:
    task = _low(expected_files=ExpectedFiles(modify=["tests/test_web.py"]))
    result = sanity_check(task, ["tests/test_web.py"], _diff("tests/test_web.py", [], ["@app.get('/x')"]))
    assert result.reasons == []


def test_ownership_directory_counts_as_scope_for_a_low_task() -> None:
    task = _low(ownership=" docs/guide// ")
    result = sanity_check(task, ["docs/guide/intro.md", "docs/guidebook.md"], "")
    assert result.out_of_scope == ["docs/guidebook.md"]
    # a word, not a directory, sets no scope
    assert sanity_check(_low(ownership="copy"), ["anything.txt"], "").matches_scope


def test_a_normal_task_is_not_escalated_to_normal() -> None:
    task = Task(id="4", title="Session", tier=Tier.NORMAL, expected_files=ExpectedFiles(modify=["src/auth.py"]))
    result = sanity_check(task, ["src/auth.py"], "")
    assert result.reasons == ["auth: src/auth.py"]
    assert not result.escalate_to_normal


def test_a_file_named_docs_at_the_top_is_code_not_documentation() -> None:
    diff = _diff("docs", ["def public():"], [])
    assert sanity_check(_low(), ["docs"], diff).reasons == ["API: docs changes or removes public `public`"]


def test_an_absolute_expected_path_under_the_current_directory_is_in_scope() -> None:
    task = _low(expected_files=ExpectedFiles(modify=[str(Path.cwd() / "src" / "calc.py")]))
    assert sanity_check(task, ["src/calc.py"], "").matches_scope
