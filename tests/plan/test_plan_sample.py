"""examples/sample: the textstats plan and design doc parse cleanly and as documented."""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.plan import Plan, Tier, execution_queue, load_plan, parse_plan_text, resolve_dependencies

ROOT = Path(__file__).parents[2]
SAMPLE = ROOT / "examples" / "sample"


@pytest.fixture(scope="module")
def plan() -> Plan:
    return load_plan(SAMPLE / "plan.md", SAMPLE / "design.md")


def test_tasks_and_tiers(plan: Plan) -> None:
    assert [(t.id, t.title, t.tier) for t in plan.tasks] == [
        ("1", "Tokenizer", Tier.NORMAL),
        ("2", "Word, sentence and syllable counts", Tier.NORMAL),
        ("3", "Readability scores", Tier.NORMAL),
        ("4", "Public API entry point", Tier.CRITICAL),
        ("5", "Command-line interface", Tier.NORMAL),
        ("6", "Usage documentation", Tier.LOW),
        ("7", "Lint and type-check config", Tier.LOW),
    ]


def test_dependencies(plan: Plan) -> None:
    assert {t.id: t.dependency_ids() for t in plan.tasks} == {
        "1": [],
        "2": ["1"],
        "3": ["2"],
        "4": [],
        "5": ["4"],
        "6": [],
        "7": [],
    }


def test_queue(plan: Plan) -> None:
    assert plan.queue == ["4", "1", "2", "3", "5", "6", "7"]


def test_shared_context(plan: Plan) -> None:
    context = plan.shared_context
    assert context.project_name == "textstats"
    assert context.tech_stack == "Python 3.11, pytest, ruff, mypy"
    assert "Pure functions over plain strings; no global state, no I/O outside the CLI." in context.principles
    assert "textstats.counts: word, sentence and syllable counts" in context.module_boundaries
    assert context.key_paths[0] == "src/textstats/"


def test_the_example_in_docs_plan_format_parses() -> None:
    doc = (ROOT / "docs" / "plan-format.md").read_text(encoding="utf-8")
    example = doc.split("````markdown\n", 1)[1].rsplit("\n````", 1)[0]
    _, tasks = parse_plan_text(example, "plan-format.md")
    tasks = resolve_dependencies(tasks)
    assert [(t.id, t.title, t.dependency_ids()) for t in tasks] == [
        ("1", "Tokenizer", []),
        ("2", "Word counts", ["1"]),
        ("3", "Command-line interface", ["2"]),
    ]
    assert tasks[1].expected_files.modify_ranges == {"src/textstats/tokenize.py": "20-34"}
    assert execution_queue(tasks) == ["1", "2", "3"]
