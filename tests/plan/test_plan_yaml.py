"""Tasks carrying seed 001's task_contract as a fenced yaml block."""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.errors import PlanError
from pm_agent.plan import Plan, Tier, load_plan, parse_plan_text

FIXTURES = Path(__file__).parent / "fixtures"
PLAN = FIXTURES / "2026-03-10-wellness-cbt.md"


@pytest.fixture(scope="module")
def plan() -> Plan:
    return load_plan(PLAN)


def test_ids_from_task_id_strip_task_prefix(plan: Plan) -> None:
    assert plan.plan_id == "wellness-cbt"
    assert [t.id for t in plan.tasks] == ["05", "06", "07", "8", "09"]
    assert [t.title for t in plan.tasks] == [
        "Session store for thought records",
        "Local development stack",
        "Voice pipeline",
        "Consent screen wording",
        "Speech provider credentials",
    ]


def test_flat_contract_fields(plan: Plan) -> None:
    t = plan.task("05")
    assert t.explicit_tier is Tier.NORMAL
    assert t.ownership == "companion-store"
    assert t.acceptance_criteria == [
        "A thought record (situation, thought, emotion, evidence, reframe) is saved per user session",
        "Records are listed newest first",
    ]
    assert t.expected_files.create == ["services/companion/store.py", "tests/companion/test_store.py"]
    assert t.expected_files.modify == []
    assert t.non_goals == ["Sharing records between users"]
    assert t.tests_to_add == ["tests/companion/test_store.py"]
    assert t.tests_to_run == ["tests/companion"]
    assert t.environment.lint_command == "ruff check services/companion"
    assert t.environment.typecheck_command == "mypy services/companion"
    assert t.environment.test_command == "pytest tests/companion"
    assert t.environment.build_command is None
    assert t.depends_on == []


def test_nested_task_contract_block(plan: Plan) -> None:
    t = plan.task("07")
    assert t.explicit_tier is Tier.CRITICAL
    assert t.ownership == "companion-voice"
    assert t.expected_files.create == ["services/companion/voice.py"]
    assert t.expected_files.modify == ["services/companion/store.py"]
    assert t.expected_files.modify_ranges == {"services/companion/store.py": "12-40"}
    assert t.expected_files.delete == ["services/companion/voice_stub.py"]
    assert t.io_contract.dependencies == ["services/companion/store.py"]
    assert t.io_contract.artifacts == ["services/companion/voice.py"]
    assert t.io_contract.expected_interfaces == ["transcribe(chunk: bytes) -> str"]
    assert t.io_contract.breaking_change is False
    assert [(d.task_id, d.inferred) for d in t.depends_on] == [("05", False)]
    assert "contract keys set by pm-agent itself, ignored in the plan: retry_budget, time_budget_ms" in (
        t.decision_log
    )
    assert "task id '07' from the yaml contract (line 61) replaces '7' from the heading" in t.decision_log


def test_non_contract_yaml_is_example_code(plan: Plan) -> None:
    t = plan.task("06")
    assert t.expected_files.create == ["compose.yaml"]
    assert t.environment.lint_command is None
    assert "POSTGRES_PASSWORD: dev" in t.body
    assert t.description == "The compose file below is example code for the task, not a contract."


def test_references_match_ids_with_leading_zeros(plan: Plan) -> None:
    # `depends_on: "Task 7"` finds task-07.
    assert [d.task_id for d in plan.task("8").depends_on] == ["07"]
    assert [d.task_id for d in plan.task("09").depends_on] == ["07"]


def test_contract_security_flag_forces_critical_over_explicit_low(plan: Plan) -> None:
    t = plan.task("09")
    assert t.explicit_tier is Tier.LOW
    assert t.tier is Tier.CRITICAL
    assert t.security_flags.touches_secrets is True
    assert "security flag touches_secrets: set in the task contract" in t.decision_log
    assert t.tier_reason.endswith("overrides the explicit tier low")


def test_tiers_and_queue(plan: Plan) -> None:
    assert [t.tier for t in plan.tasks] == [
        Tier.NORMAL,
        Tier.CRITICAL,
        Tier.CRITICAL,
        Tier.LOW,
        Tier.CRITICAL,
    ]
    assert plan.queue == ["06", "05", "07", "09", "8"]


def test_yaml_only_task_outside_a_task_heading() -> None:
    text = (
        "# Plan\n\n## Storage\n\nWe keep it small.\n\n"
        "```yaml\ntask_id: task-3\ntitle: Blob store\nexpected_files:\n  create: [src/blob.py]\n```\n\n"
        "## Search\n\n```yaml\ntask_id: search-1\ndepends_on: task-3\n```\n"
    )
    _, tasks = parse_plan_text(text, "plan.md")
    assert [(t.id, t.title, t.line) for t in tasks] == [("3", "Blob store", 7), ("search-1", "Search", 16)]
    assert tasks[0].body.startswith("```yaml\ntask_id: task-3")
    assert [d.task_id for d in tasks[1].depends_on] == ["3"]


def test_contract_tag_in_info_string_forces_contract_reading() -> None:
    text = "# P\n\n## Task 1: A\n\n```yaml contract\nowner: me\n```\n"
    with pytest.raises(PlanError) as info:
        parse_plan_text(text, "p.md")
    assert info.value.message == "unknown key 'owner' in task contract"
    assert info.value.line == 6
    text = "# P\n\n## Task 1: A\n\n```yaml contract\n- task_id: 1\n```\n"
    with pytest.raises(PlanError) as info:
        parse_plan_text(text, "p.md")
    assert info.value.message == "a task contract yaml block must be a mapping of contract fields"
    assert info.value.line == 5


@pytest.mark.parametrize(
    ("name", "line", "message"),
    [
        ("yaml_error.md", 11, "invalid yaml in task contract: expected ',' or ']', but got ':'"),
        ("yaml_unknown_key.md", 10, "unknown key 'acceptance_criterias' in task contract"),
        ("yaml_unknown_file_key.md", 9, "unknown key 'rename' in expected_files"),
    ],
)
def test_yaml_errors_carry_the_plan_line(name: str, line: int, message: str) -> None:
    path = FIXTURES / "bad" / name
    with pytest.raises(PlanError) as info:
        load_plan(path)
    assert info.value.path == path
    assert info.value.line == line
    assert info.value.message == message


@pytest.mark.parametrize(
    ("block", "line", "message"),
    [
        ("task_id: 1\ntier: urgent\n", 7, "tier: unknown tier 'urgent' (expected critical, normal or low)"),
        ("task_id: 1\nacceptance_criteria: {a: 1}\n", 7, "acceptance_criteria: expected a list of strings"),
        ("task_id: 1\nio_contract:\n  breaking: true\n", 8, "unknown key 'breaking' in io_contract"),
        (
            "task_id: 1\nsecurity_flags:\n  touches_auth: maybe\n",
            8,
            "security_flags.touches_auth: Input should be a valid boolean, unable to interpret input",
        ),
        ("task_contract: [1, 2]\n", 6, "task_contract must be a mapping"),
        ("task_contract:\n  task_id: 1\nextra: 2\n", 8, "unknown key 'extra' in task contract"),
        (
            "task_id: 1\n\tdepends_on: [2]\n",
            7,
            "invalid yaml in task contract: found character '\\t' that cannot start any token",
        ),
    ],
)
def test_bad_contract_values(block: str, line: int, message: str) -> None:
    text = f"# P\n\n## Task 1: A\n\n```yaml\n{block}```\n"
    with pytest.raises(PlanError) as info:
        parse_plan_text(text, "p.md")
    assert (info.value.message, info.value.line) == (message, line)
