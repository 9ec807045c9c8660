"""`Depends on` values as people write them: references kept, prose as notes, refusal only without any reference."""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.errors import PlanError
from pm_agent.plan import load_plan, parse_plan_text
from pm_agent.plan.refs import Ref, read_refs


@pytest.mark.parametrize(
    ("value", "refs"),
    [
        ("Task 1 passing", [Ref("1", "passing")]),
        ("Task 1 GREEN passing.", [Ref("1", "GREEN passing")]),
        ("Task 2 (for the schema)", [Ref("2", "for the schema")]),
        (
            "Task 1 (reviews table, demo column) — must ship first",
            [Ref("1", "reviews table, demo column — must ship first")],
        ),
        ("Task 1 (`Orders`), Task 2 (`selected`)", [Ref("1", "`Orders`"), Ref("2", "`selected`")]),
        (
            "Task 1 (only if the text moves; otherwise independent)",
            [Ref("1", "only if the text moves; otherwise independent")],
        ),
        ("Task 1 and Task 2 passing", [Ref("1"), Ref("2", "passing")]),
        ("Task 1 GREEN and committed", [Ref("1", "GREEN and committed")]),
        ("needs the schema from Task 2", [Ref("2", "needs the schema from Task 2")]),
        ("Phase 1 done, Task 3", [Ref("3", "Phase 1 done")]),
        ("Task 1, ???", [Ref("1", "???")]),
        ("Task 2, Task 3", [Ref("2"), Ref("3")]),
        ("#5 & #6", [Ref("5"), Ref("6")]),
        ("login", [Ref("login")]),
        ("None - this is the first task", []),
        ("Nothing (independent)", []),
        ("None (runs beside Task 1 on purpose)", []),
        ("n/a", []),
        # Lettered tasks (`### Task A:`): a lone capital letter in a list, with at most a bracketed note, is one.
        ("Tasks A, B, C (all previous tasks)", [Ref("A"), Ref("B"), Ref("C", "all previous tasks")]),
        ("Task A (needs the row reader)", [Ref("A", "needs the row reader")]),
        ("Task 1, I think", [Ref("1", "I think")]),
        ("Task 1, a fresh database", [Ref("1", "a fresh database")]),
    ],
)
def test_read_refs(value: str, refs: list[Ref]) -> None:
    assert read_refs(value) == refs


@pytest.mark.parametrize("value", ["the parser task", "after the schema lands", "???"])
def test_text_without_any_reference_is_refused(value: str) -> None:
    with pytest.raises(ValueError, match="cannot read task reference"):
        read_refs(value)


def test_notes_reach_the_dependency_and_one_warning_names_the_line(tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.md"
    plan_file.write_text(
        "# P\n\n## Task 1: A\n\n## Task 2: B\n\n**Depends on:** Task 1 (for the schema)\n", encoding="utf-8"
    )
    plan = load_plan(plan_file)
    [dep] = plan.task("2").depends_on
    assert (dep.task_id, dep.note, dep.inferred) == ("1", "for the schema", False)
    assert plan.warnings == [
        f"{plan_file}:7: 'Depends on' read as Task 1; the prose is kept as notes (Task 1: for the schema)"
    ]


def test_a_list_item_without_a_reference_is_ignored_with_a_warning(tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.md"
    plan_file.write_text(
        "# P\n\n## Task 1: A\n\n## Task 2: B\n\n**Depends on:**\n- Task 1\n- the database being up\n",
        encoding="utf-8",
    )
    plan = load_plan(plan_file)
    assert plan.task("2").dependency_ids() == ["1"]
    assert plan.warnings == [
        f"{plan_file}:9: ignored in 'Depends on': cannot read task reference 'the database being up' "
        "(write e.g. 'Task 2, Task 3' or 'none')"
    ]


def test_none_declares_the_task_independent_and_a_list_announcing_label_does_not() -> None:
    text = (
        "# P\n\n## Task 1: A\n\n**Depends on:** None (first task)\n\n"
        "## Task 2: B\n\n**Depends on:**\n- Task 1\n\n## Task 3: C\n"
    )
    _, tasks = parse_plan_text(text, "p.md")
    assert [t.declared_independent for t in tasks] == [True, False, False]


def test_yaml_contract_with_empty_depends_on_declares_independence() -> None:
    text = "# P\n\n## Task 1: A\n\n```yaml\ntask_id: task-2\ndepends_on: []\n```\n"
    _, [one] = parse_plan_text(text, "p.md")
    assert (one.id, one.declared_independent) == ("2", True)


def test_refusal_keeps_file_and_line() -> None:
    with pytest.raises(PlanError) as info:
        parse_plan_text("# P\n\n## Task 1: A\n\n**Depends on:** the parser task\n", "p.md")
    assert (info.value.line, str(info.value.path)) == (5, "p.md")
