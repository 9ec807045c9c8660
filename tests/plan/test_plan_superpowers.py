"""A superpowers-style plan (Files / Steps / code blocks, tasks under phase headings) parses exactly."""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.plan import Plan, Presence, Tier, load_plan, parse_plan_text

PLAN = Path(__file__).parent / "fixtures" / "2026-02-18-link-shortener.md"


@pytest.fixture(scope="module")
def plan() -> Plan:
    return load_plan(PLAN)


def test_header_fields(plan: Plan) -> None:
    assert plan.plan_id == "link-shortener"
    assert plan.path == str(PLAN)
    assert plan.header.title == "Link Shortener Implementation Plan"
    assert plan.header.goal == (
        "A small HTTP service that turns long URLs into seven-character codes and redirects them."
    )
    assert plan.header.architecture.startswith("A FastAPI app in src/shorty/ with three layers:")
    assert plan.header.architecture.endswith("SQL migrations, applied at startup.")
    assert plan.header.tech_stack == "Python 3.11, FastAPI, SQLite (stdlib sqlite3), pytest, httpx"


def test_task_ids_titles_and_lines(plan: Plan) -> None:
    assert [(t.id, t.title, t.line) for t in plan.tasks] == [
        ("1", "Short code generator", 17),
        ("2", "Links table migration", 70),
        ("3", "Store and resolve links", 109),
        ("4", "HTTP routes", 135),
        ("5", "Per-client rate limit on link creation", 169),
        ("6", "Usage documentation", 189),
        ("7", "Container image", 201),
    ]


def test_files_with_ranges_and_tests(plan: Plan) -> None:
    t1, t2, t3, t4, t5 = (plan.task(i) for i in "12345")
    assert t1.expected_files.create == ["src/shorty/codes.py"]
    assert t1.expected_files.test == ["tests/test_codes.py"]
    assert t1.expected_files.modify == []
    assert t2.expected_files.create == ["migrations/0001_links.sql", "src/shorty/storage.py"]
    assert t3.expected_files.modify == ["src/shorty/storage.py"]
    assert t3.expected_files.modify_ranges == {"src/shorty/storage.py": "40-72"}
    assert t4.expected_files.modify_ranges == {}
    assert t5.expected_files.modify_ranges == {"src/shorty/api.py": "15-30"}
    assert plan.task("7").expected_files.create == ["Dockerfile", ".dockerignore"]


def test_bold_paragraph_steps(plan: Plan) -> None:
    assert plan.task("1").steps == [
        "Write the failing test",
        "Run test to verify it fails",
        "Write minimal implementation",
        "Run test to verify it passes",
        "Commit",
    ]
    # `**Step 1: Write `docs/usage.md`** with ...`: the bold part is the title.
    assert plan.task("6").steps == ["Write docs/usage.md", "Link it from the README", "Commit"]


def test_checklist_steps(plan: Plan) -> None:
    assert plan.task("2").steps == [
        "Write the failing test",
        "Run test to verify it fails",
        "Write the migration and open_db",
        "Run test to verify it passes",
        "Commit",
    ]


def test_description_is_prose_before_steps_without_code(plan: Plan) -> None:
    assert plan.task("4").description == (
        "The API is the only public surface; keep handlers thin and push logic into `storage.py`."
    )
    assert plan.task("1").description == ""
    assert "Run:" not in plan.task("7").description


def test_body_keeps_the_section_verbatim_up_to_the_next_phase(plan: Plan) -> None:
    body = plan.task("4").body
    assert body.startswith("### Task 4: HTTP routes")
    assert 'client.get(f"/{code}", follow_redirects=False)' in body
    assert body.endswith("**Step 5: Commit**")
    assert "Phase 2" not in body
    assert "## Verification" not in plan.task("7").body


def test_test_files_become_tests_to_add_and_run_without_repo(plan: Plan) -> None:
    t1 = plan.task("1")
    assert t1.tests_to_add == ["tests/test_codes.py"]
    assert t1.tests_to_run == ["tests/test_codes.py"]
    assert plan.task("6").tests_to_add == []


def test_inferred_dependencies_and_independent_tasks(plan: Plan) -> None:
    deps = {t.id: [(d.task_id, d.inferred, d.reason) for d in t.depends_on] for t in plan.tasks}
    assert deps == {
        "1": [],
        "2": [],
        "3": [("2", True, "modifies src/shorty/storage.py created by Task 2")],
        # Task 3 changed storage.py before Task 4 does: plan order is kept (write after write)
        "4": [("3", True, "modifies src/shorty/storage.py, which Task 3 modifies earlier in the plan")],
        "5": [("4", True, "modifies src/shorty/api.py created by Task 4")],
        "6": [],
        "7": [],
    }
    assert "depends on Task 2 (inferred: modifies src/shorty/storage.py created by Task 2)" in (
        plan.task("3").decision_log
    )


def test_tiers(plan: Plan) -> None:
    assert {t.id: t.tier for t in plan.tasks} == {
        "1": Tier.NORMAL,
        "2": Tier.CRITICAL,
        "3": Tier.NORMAL,
        "4": Tier.NORMAL,
        "5": Tier.NORMAL,
        "6": Tier.LOW,
        "7": Tier.CRITICAL,
    }
    assert plan.task("2").tier_reason == (
        "CRITICAL: security flag touches_schema (keyword 'migration' in title)"
    )
    assert plan.task("2").security_flags.touches_schema is True
    assert plan.task("7").tier_reason == "CRITICAL: keyword 'dockerfile' in path Dockerfile (infra/docker)"
    assert plan.task("6").tier_reason == "LOW: keyword 'documentation' in title (docs)"


def test_queue_critical_first_then_plan_order(plan: Plan) -> None:
    assert plan.queue == ["2", "7", "1", "3", "4", "5", "6"]


def test_without_repo_everything_is_missing(plan: Plan) -> None:
    assert {t.presence for t in plan.tasks} == {Presence.MISSING}
    assert {t.presence_reason for t in plan.tasks} == {"no repository"}


def test_parse_plan_text_alone_leaves_refs_raw_and_tiers_unclassified() -> None:
    header, tasks = parse_plan_text(PLAN.read_text(encoding="utf-8"), PLAN)
    assert header.title == "Link Shortener Implementation Plan"
    assert [t.id for t in tasks] == ["1", "2", "3", "4", "5", "6", "7"]
    assert all(t.depends_on == [] for t in tasks)
    assert all(t.tier is Tier.NORMAL and t.tier_reason == "" for t in tasks)
    assert tasks[0].tests_to_add == []
