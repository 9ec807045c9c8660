"""The request's documents: names, BDD scenarios, the lock's hash, and pm-agent's check of the plan."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from pm_agent.intake import IntakePaths, check_plan, requirements_hash, requirements_problems, scenario_ids
from pm_agent.intake.docs import slug_of

from .conftest import PLAN_BAD, PLAN_GOOD, REQUIREMENTS

SECOND_TASK = """
### Task 2: Header line

**Files:**
- Modify: `src/calc/fmt.py`

**Depends on:** Task 1

**Acceptance criteria:**
- the header is bold
"""


def test_slug_and_paths_follow_the_request_and_the_day() -> None:
    paths = IntakePaths.of("Add a --json flag!\nmore words", date(2026, 1, 2))
    assert paths.design_rel == "docs/plans/2026-01-02-add-a-json-flag-design.md"
    assert paths.plan_rel == "docs/plans/2026-01-02-add-a-json-flag.md"
    assert paths.plan_id == "add-a-json-flag"  # the id `pm-agent run` gives the plan file: same working branch
    assert IntakePaths.of("x", date(2026, 1, 2), slug="mine").plan_rel == "docs/plans/2026-01-02-mine.md"
    assert slug_of("¿¡!") == "request"
    assert len(slug_of("word " * 40)) <= 48


def test_scenarios_are_read_from_their_headings() -> None:
    text = REQUIREMENTS + "\n### Scenario S2: empty rows\nGiven no rows\nWhen render\nThen ''\n## S1 again\n"
    assert scenario_ids(text) == ["S1", "S2"]


def test_complete_requirements_have_no_problem() -> None:
    assert requirements_problems(REQUIREMENTS) == []


def test_a_scenario_without_then_and_missing_sections_are_named() -> None:
    text = "# R\n\n## Scenarios\n### S1: x\nGiven a\nWhen b\n\n## Contexts\nc\n"
    assert requirements_problems(text) == [
        "scenario S1 has no Then line",
        "missing section(s): `## Observables`, `## Non-goals`, `## Open questions`",
    ]
    assert requirements_problems("") == ["the requirements doc is empty or missing"]
    assert requirements_problems("# R\n## Contexts\n## Observables\n## Non-goals\n## Open questions\n") == [
        "no BDD scenario found: write each as a heading `### S1: <name>` with Given/When/Then lines"
    ]


def test_the_lock_ignores_line_endings_but_not_words() -> None:
    assert requirements_hash(REQUIREMENTS) == requirements_hash(REQUIREMENTS.replace("\n", "\r\n"))
    assert requirements_hash(REQUIREMENTS) != requirements_hash(REQUIREMENTS.replace("two lines", "one line"))


def test_a_good_plan_passes(tmp_path: Path) -> None:
    plan = tmp_path / "plan.md"
    plan.write_text(PLAN_GOOD, encoding="utf-8")
    check = check_plan(plan, None, tmp_path, ["S1"])
    assert check.ok
    assert check.plan is not None
    assert [t.id for t in check.plan.tasks] == ["1"]


def test_a_parse_error_is_kept_verbatim(tmp_path: Path) -> None:
    plan = tmp_path / "plan.md"
    plan.write_text(PLAN_BAD, encoding="utf-8")
    check = check_plan(plan, None, tmp_path, ["S1"])
    assert not check.ok
    assert check.problems == [f"{plan}:5: Task 1 depends on Task 7, which is not in the plan"]
    assert check.message() == f"- {plan}:5: Task 1 depends on Task 7, which is not in the plan"


def test_a_cycle_is_a_problem(tmp_path: Path) -> None:
    plan = tmp_path / "plan.md"
    cyclic = PLAN_GOOD.replace("**Depends on:** none", "**Depends on:** Task 2") + SECOND_TASK
    plan.write_text(cyclic.replace("- the header is bold", "- S1: the header is bold\n\n**Tests to add:**\n- t"))
    check = check_plan(plan, None, tmp_path, ["S1"])
    assert len(check.problems) == 1
    assert "cycle" in check.problems[0].lower()


def test_untraced_tasks_and_uncovered_scenarios_are_named(tmp_path: Path) -> None:
    plan = tmp_path / "plan.md"
    plan.write_text(PLAN_GOOD + SECOND_TASK, encoding="utf-8")
    check = check_plan(plan, None, tmp_path, ["S1", "S2"])
    where = f"{plan}:{PLAN_GOOD.count(chr(10)) + 2}: task 2 (Header line)"
    assert check.problems == [
        f"{where}: no acceptance criterion names a scenario (S1, S2)",
        f"{where} names no test to add (`**Tests to add:**` or a `Test:` file; only LOW may not)",
        "scenario S2 is covered by no task: name it in a task's acceptance criteria",
    ]


def test_a_low_task_may_add_no_test(tmp_path: Path) -> None:
    plan = tmp_path / "plan.md"
    low = SECOND_TASK.replace("**Depends on:** Task 1", "**Tier:** low\n**Depends on:** Task 1")
    plan.write_text(PLAN_GOOD + low.replace("- the header is bold", "- S1: the header is bold"), encoding="utf-8")
    assert check_plan(plan, None, tmp_path, ["S1"]).problems == []


def test_a_missing_plan_file_is_a_problem(tmp_path: Path) -> None:
    check = check_plan(tmp_path / "nope.md", None, tmp_path, ["S1"])
    assert check.problems == [f"{tmp_path / 'nope.md'}: the plan file does not exist; write it there"]
