"""How plans write a task's dependencies besides `**Depends on:**`: other labels (`Dependencies`, `Prerequisites`,
`Requires`), reverse ones (`Blocks`), a label written as a bullet item, superpowers' `Consumes:` line, dash ranges."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pm_agent.errors import PlanError
from pm_agent.plan import fastpath, load_plan
from pm_agent.plan.models import Plan
from pm_agent.plan.refs import Ref, consumed_refs, read_refs


def _load(tmp_path: Path, text: str, name: str = "plan.md") -> Plan:
    """The plan loaded with the fast path on and off; both must read it the same (or fail the same)."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    results: list[Any] = []
    for enabled in (True, False):
        fastpath.ENABLED = enabled
        try:
            results.append(load_plan(path))
        except PlanError as exc:
            results.append(exc)
        finally:
            fastpath.ENABLED = True
    fast, slow = results
    if isinstance(fast, PlanError) or isinstance(slow, PlanError):
        assert str(fast) == str(slow)
        raise fast
    assert fast.model_dump() == slow.model_dump()
    plan: Plan = fast
    return plan


def _deps(plan: Plan, task_id: str, *, inferred: bool = False) -> list[tuple[str, str]]:
    return [(d.task_id, d.note) for d in plan.task(task_id).depends_on if d.inferred == inferred]


def _plan(*sections: str) -> str:
    """A plan whose task N has the N-th body; a body's first line is line 5 + 5 * (N - 1) (one-line bodies before)."""
    return "# Plan\n\n" + "\n\n".join(f"### Task {n}: Task {n}\n\n{body}\n" for n, body in enumerate(sections, 1))


# -- labels -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "**Dependencies:** Task 1",
        "**Dependency:** Task 1",
        "**Prerequisites:** Task 1",
        "**Prereqs:** Task 1",
        "**Requires:** Task 1",
        "**Depends On**: Task 1",
        "**Dependencies**: Task 1",
        "Prerequisites: Task 1",
        "**前置依赖：** 任务 1",
    ],
)
def test_other_dependency_labels_read_as_depends_on(tmp_path: Path, line: str) -> None:
    plan = _load(tmp_path, _plan("Prose.", line))
    assert _deps(plan, "2") == [("1", "")]
    assert line not in plan.task("2").description


def test_a_dependencies_label_keeps_its_prose_as_notes_with_a_warning(tmp_path: Path) -> None:
    plan = _load(tmp_path, _plan("Prose.", "**Dependencies:** Task 1 (needs the table)"))
    assert _deps(plan, "2") == [("1", "needs the table")]
    said = "'Dependencies' read as Task 1; the prose is kept as notes (Task 1: needs the table)"
    assert plan.warnings == [f"{tmp_path / 'plan.md'}:10: {said}"]


def test_dependencies_none_declares_the_task_independent(tmp_path: Path) -> None:
    files = "**Files:**\n- Modify: `src/a.py`"
    plan = _load(tmp_path, _plan(files, f"**Dependencies:** None\n\n{files}"))
    assert plan.task("2").declared_independent
    assert plan.task("2").depends_on == []


@pytest.mark.parametrize("value", ["Python 3.11", "Docker", "2FA enabled", "an API key from the vault"])
def test_requires_naming_no_task_is_prose_with_a_warning(tmp_path: Path, value: str) -> None:
    plan = _load(tmp_path, _plan("Prose.", f"**Requires:** {value}"))
    assert plan.task("2").depends_on == []
    assert not plan.task("2").declared_independent
    assert f"**Requires:** {value}" in plan.task("2").description
    assert plan.warnings == [
        f"{tmp_path / 'plan.md'}:10: 'Requires' {value!r} names no task: no dependency, kept in the description"
    ]


def test_a_prerequisites_list_reads_its_task_items_and_keeps_the_rest(tmp_path: Path) -> None:
    plan = _load(tmp_path, _plan("Prose.", "**Prerequisites:**\n- Task 1 merged\n- Docker running"))
    assert _deps(plan, "2") == [("1", "merged")]
    assert "- Docker running" in plan.task("2").description
    assert any("'Prerequisites' 'Docker running' names no task" in w for w in plan.warnings)


def test_a_requires_reference_to_an_unknown_task_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(PlanError, match="Task 2 depends on Task 9, which is not in the plan"):
        _load(tmp_path, _plan("Prose.", "**Requires:** Task 9"))


# -- Blocks: a reverse dependency ---------------------------------------------------------------------------


@pytest.mark.parametrize("label", ["**Blocks:**", "**Blocking:**", "**Unblocks:**", "**Blocks**:", "- **Blocks:**"])
def test_blocks_makes_the_named_task_depend_on_this_one(tmp_path: Path, label: str) -> None:
    plan = _load(tmp_path, _plan("Prose.", f"{label} Task 3", "Prose."))
    assert _deps(plan, "3") == [("2", "from Task 2's Blocks line")]
    assert _deps(plan, "2") == []
    assert plan.queue == ["1", "2", "3"]


def test_blocks_keeps_its_prose_and_reads_ranges_and_earlier_tasks(tmp_path: Path) -> None:
    plan = _load(tmp_path, _plan("Prose.", "Prose.", "Prose.", "**Blocks:** Tasks 1–2 (they need its client)"))
    note = "from Task 4's Blocks line: they need its client"
    assert _deps(plan, "1") == [("4", note)]
    assert _deps(plan, "2") == [("4", note)]
    assert plan.queue.index("4") < min(plan.queue.index("1"), plan.queue.index("2"))


def test_blocks_adds_to_what_the_task_says_itself(tmp_path: Path) -> None:
    plan = _load(tmp_path, _plan("**Blocks:** Task 3", "Prose.", "**Depends on:** Task 2"))
    assert _deps(plan, "3") == [("2", ""), ("1", "from Task 1's Blocks line")]


def test_blocks_naming_an_unknown_task_is_an_error_at_its_line(tmp_path: Path) -> None:
    with pytest.raises(PlanError, match=r"plan\.md:10: Task 2 blocks Task 9, which is not in the plan"):
        _load(tmp_path, _plan("Prose.", "**Blocks:** Task 9"))


def test_blocks_naming_its_own_task_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(PlanError, match="Task 2 blocks itself"):
        _load(tmp_path, _plan("Prose.", "**Blocks:** Task 2"))


def test_blocks_naming_no_task_is_prose_with_a_warning(tmp_path: Path) -> None:
    plan = _load(tmp_path, _plan("Prose.", "**Blocks:** the release", "Prose."))
    assert all(not task.depends_on for task in plan.tasks)
    assert "**Blocks:** the release" in plan.task("2").description
    assert any("'Blocks' 'the release' names no task" in w for w in plan.warnings)


def test_blocks_reaches_a_task_in_another_file_of_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "plan"
    folder.mkdir()
    (folder / "01-schema.md").write_text("# Task 1: Schema\n\n**Blocks:** Task 2\n", encoding="utf-8")
    (folder / "02-service.md").write_text("# Task 2: Service\n\nProse.\n", encoding="utf-8")
    plan = load_plan(folder)
    assert _deps(plan, "2") == [("1", "from Task 1's Blocks line")]


# -- a label written as a bullet item -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "item",
    [
        "- **Depends On**: Task 1",
        "- **Depends on:** Task 1",
        "* Dependencies: Task 1",
        "- Depends on: Task 1",
        "- **依赖**：任务1",
        "+ **Prerequisites:** Task 1",
    ],
)
def test_a_dependency_label_as_a_bullet_item_is_read(tmp_path: Path, item: str) -> None:
    plan = _load(tmp_path, _plan("Prose.", f"- **Priority**: high\n{item}\n- **Owner note**: Ana"))
    assert _deps(plan, "2") == [("1", "")]
    description = plan.task("2").description
    assert "- **Priority**: high" in description
    assert "- **Owner note**: Ana" in description  # the item after the field is not its list
    assert item not in description


def test_a_bullet_none_declares_the_task_independent(tmp_path: Path) -> None:
    files = "**Files:**\n- Modify: `src/a.py`"
    plan = _load(tmp_path, _plan(files, f"- **Depends on:** None\n\n{files}"))
    assert plan.task("2").declared_independent
    assert plan.task("2").depends_on == []


@pytest.mark.parametrize(
    "item",
    [
        "- The parser depends on the lexer from Task 1",
        "- Note that this depends on: the lexer",
        "- [ ] Depends on: Task 1 being merged",
    ],
)
def test_a_step_bullet_that_mentions_depends_on_is_no_field(tmp_path: Path, item: str) -> None:
    plan = _load(tmp_path, _plan("Prose.", item))
    assert plan.task("2").depends_on == []


def test_other_labels_as_bullets_read_as_their_fields(tmp_path: Path) -> None:
    body = "- **Tier**: low\n- **Ownership:** billing\n- **Estimate:** 2h\n- **Acceptance criteria:** totals match"
    plan = _load(tmp_path, _plan(body))
    task = plan.task("1")
    assert (task.explicit_tier, task.ownership, task.estimate) == ("low", "billing", 2.0)
    assert task.acceptance_criteria == ["totals match"]


def test_a_bullet_list_field_reads_its_nested_list(tmp_path: Path) -> None:
    body = (
        "- **Files:**\n  - Create: `src/a.py`\n  - Test: `tests/test_a.py`\n"
        "- **Depends on:**\n  - Task 1 (the schema)\n- **Notes:** keep it small"
    )
    plan = _load(tmp_path, _plan("Prose.", body))
    task = plan.task("2")
    assert task.expected_files.create == ["src/a.py"]
    assert task.expected_files.test == ["tests/test_a.py"]
    assert _deps(plan, "2") == [("1", "the schema")]
    assert task.description == "- **Notes:** keep it small"


def test_a_bullet_field_ends_a_files_list(tmp_path: Path) -> None:
    plan = _load(tmp_path, _plan("Prose.", "**Files:**\n- Create: `src/b.py`\n- **Depends on:** Task 1"))
    assert plan.task("2").expected_files.create == ["src/b.py"]
    assert _deps(plan, "2") == [("1", "")]


def test_a_bullet_whose_value_the_field_cannot_read_stays_prose(tmp_path: Path) -> None:
    plan = _load(tmp_path, _plan("- Size: 10MB upload limit\n- Tier: whatever fits"))
    task = plan.task("1")
    assert task.estimate is None
    assert task.explicit_tier is None
    assert task.description == "- Size: 10MB upload limit\n\n- Tier: whatever fits"
    assert len([w for w in plan.warnings if "is not read as a field" in w]) == 2


# -- superpowers' Interfaces: Consumes -----------------------------------------------------------------------


def test_consumes_names_the_tasks_it_needs_without_a_warning(tmp_path: Path) -> None:
    interfaces = "**Interfaces:**\n- Consumes: `prompt.md` exists (Task 1).\n- Produces: the flow Task 3 cites"
    plan = _load(tmp_path, _plan("Prose.", interfaces, "**Interfaces:**\n- Consumes: everything from Tasks 1–2."))
    assert _deps(plan, "2") == [("1", "consumes prompt.md exists (Task 1)")]
    assert [d for d, _ in _deps(plan, "3")] == ["1", "2"]
    assert plan.warnings == []
    description = plan.task("2").description
    assert "**Interfaces:**" in description
    assert "- Consumes: `prompt.md` exists (Task 1)." in description
    assert "- Produces: the flow Task 3 cites" in description


def test_consumes_without_a_task_adds_nothing(tmp_path: Path) -> None:
    interfaces = "**Interfaces:**\n- Consumes: nothing from other tasks.\n- Consumes: 3 rows"
    plan = _load(tmp_path, _plan("Prose.", interfaces))
    assert plan.task("2").depends_on == []
    assert not plan.task("2").declared_independent
    assert plan.warnings == []


@pytest.mark.parametrize(
    ("value", "ids"),
    [
        ("`a.md` exists (Task 1).", ["1"]),
        ("all three templates (Tasks 1–2); `scripts/x` (unchanged)", ["1-2"]),
        ("Tasks 1 and 2", ["1", "2"]),
        ("Tasks 1, 3", ["1", "3"]),
        ("Task 1-3", ["1-3"]),
        ("Task 3—5", ["3-5"]),
        ("signatures from Task 2 (`a`, `b`); Task 1's doc (context only)", ["2", "1"]),
        ("3 fixtures from the helper", []),
        ("`HelperContext`, `runGit` (existing)", []),
    ],
)
def test_consumed_references_need_the_word_task(value: str, ids: list[str]) -> None:
    assert [ref.task_id for ref in consumed_refs(value)] == ids


# -- dash ranges and groups of tasks --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "refs"),
    [
        ("Tasks 1–2", [Ref("1-2")]),
        ("Task 3—5", [Ref("3-5")]),
        ("Tasks 1 – 3 (all of them)", [Ref("1-3", "all of them")]),
        ("1.2.2–1.2.9", [Ref("1.2.2-1.2.9")]),
        ("Task 1 — must ship first", [Ref("1", "must ship first")]),
        ("[002] Request queue (pending writes)", [Ref("002", "Request queue (pending writes)")]),
    ],
)
def test_ranges_with_other_dashes_read_as_hyphen_ranges(value: str, refs: list[Ref]) -> None:
    assert read_refs(value) == refs


def test_a_depends_on_range_with_an_em_dash_names_each_task(tmp_path: Path) -> None:
    plan = _load(tmp_path, _plan("Prose.", "Prose.", "Prose.", "**Depends on:** Task 1—3"))
    assert [d for d, _ in _deps(plan, "4")] == ["1", "2", "3"]


ALL_EARLIER = ["所有其他任务", "All previous tasks complete", "all other tasks", "everything before"]


@pytest.mark.parametrize("value", ALL_EARLIER)
def test_all_earlier_tasks_names_every_task_before(tmp_path: Path, value: str) -> None:
    plan = _load(tmp_path, _plan("Prose.", "Prose.", f"- **依赖**：{value}", "- **依赖**：任务3"))
    assert [d for d, _ in _deps(plan, "3")] == ["1", "2"]
    assert _deps(plan, "4") == [("3", "")]
    assert any(f"{value!r} read as every earlier task: Tasks 1, 2" in w for w in plan.warnings)
