"""Spec Kit task lists (github/spec-kit's tasks.md): `- [ ] T012 [P] [US1] ...` items under `## Phase N` headings.

fixtures/forms/speckit-tasks.md is a short list of our own written in that form, with every rule of the order the
format states: phases in order, user-story phases side by side, runs of [P] items, `(depends on ...)`, checked items.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.errors import PlanError
from pm_agent.plan import fastpath, load_plan
from pm_agent.plan.models import Task

FORM = Path(__file__).parent / "fixtures" / "forms" / "speckit-tasks.md"


def _deps(path: Path) -> dict[str, list[str]]:
    return {t.id: [d.task_id for d in t.depends_on] for t in load_plan(path).tasks}


def test_each_unchecked_item_is_a_task_at_its_line_with_its_title() -> None:
    plan = load_plan(FORM)
    assert [(t.id, t.line) for t in plan.tasks][:3] == [("T002", 18), ("T003", 26), ("T004", 27)]
    assert [t.id for t in plan.tasks] == [f"T{n:03}" for n in range(2, 14)]  # T001 is checked; T099 is in a fence
    titles = {t.id: t.title for t in plan.tasks}
    assert titles["T004"] == "Create the Tag model in src/marks/tag.py"  # the labels are not the title
    assert titles["T006"] == "Wire the models into src/marks/__init__.py"  # no emphasis made of the path
    assert titles["T008"] == "Implement add_tag() in src/marks/tagging.py"  # nor its `(depends on ...)`
    assert titles["T009"] == (
        "Expose the tag command in src/marks/cli.py, printing the tags it added (spec FR-2; depends on T005)"
    )  # an item goes on over its indented lines
    criteria = {t.id: t.acceptance_criteria for t in plan.tasks}
    assert criteria["T004"] == ["Create the Tag model in src/marks/tag.py"]  # the item is what the review checks
    assert criteria["T009"] == [titles["T009"]]
    t008 = next(t for t in plan.tasks if t.id == "T008")
    assert "acceptance criterion: the item as the plan states it" in t008.decision_log
    assert (
        t008.body.splitlines()[0]
        == "- [ ] T008 [US1] Implement add_tag() in src/marks/tagging.py (depends on T004, T001)"
    )
    assert "Spec Kit item T008 [US1]" in t008.decision_log
    assert "depends on T001, checked off in the plan: done" in t008.decision_log
    assert plan.warnings[:2] == [
        f"{FORM}: a Spec Kit task list: its 12 unchecked 'T001'-style items are read as the tasks, phases in order"
        " (user stories side by side), a run of [P] items side by side",
        f"{FORM}:17: T001 is checked off in the plan: done, not run",
    ]


def test_the_order_the_format_states_is_the_dependencies() -> None:
    assert _deps(FORM) == {
        "T002": [],  # the first phase's T001 is done
        "T003": ["T002"],  # phase 2 after phase 1
        "T004": ["T003"],  # a run of [P] items waits for what came before it in the phase ...
        "T005": ["T003"],  # ... and not for each other
        "T006": ["T004", "T005"],  # the item after the run waits for all of it
        "T007": ["T006"],  # a story waits for the last phase that is no story
        "T008": ["T007", "T004"],  # and `(depends on T004, T001)`; T001 is done
        "T009": ["T008", "T005"],  # `depends on T005` on its continuation line
        "T010": ["T006"],  # a phase whose items all carry a story label is a story: not after story 1
        "T011": ["T006", "T010"],  # `T010 blocks T011` in the Dependencies section
        "T012": ["T009", "T010", "T011"],  # the first phase after the stories waits for all of them
        "T013": ["T012"],
    }


def test_the_stories_run_side_by_side_in_the_queue_order() -> None:
    plan = load_plan(FORM)
    assert plan.queue.index("T010") < plan.queue.index("T012")
    assert {d.task_id for t in plan.tasks if t.id == "T010" for d in t.depends_on} == {"T006"}


def test_a_list_with_every_item_checked_says_so(tmp_path: Path) -> None:
    done = tmp_path / "tasks.md"
    done.write_text(FORM.read_text().replace("- [ ] T", "- [X] T"))
    with pytest.raises(
        PlanError, match=r"every Spec Kit item \(13, T001 to T013\) is checked off: nothing to run"
    ) as info:
        load_plan(done)
    assert info.value.line == 17


def test_a_named_dependency_against_the_phases_order_is_a_cycle(tmp_path: Path) -> None:
    backwards = tmp_path / "tasks.md"
    backwards.write_text(
        FORM.read_text().replace("T003 Create the Bookmark model", "T003 Create the Bookmark model (depends on T009)")
    )
    with pytest.raises(PlanError, match="cycle"):
        load_plan(backwards)


def test_an_item_naming_an_unknown_task_is_refused_at_its_line(tmp_path: Path) -> None:
    unknown = tmp_path / "tasks.md"
    unknown.write_text(FORM.read_text().replace("(depends on T004, T001)", "(depends on T077)"))
    with pytest.raises(PlanError, match="Task T008 depends on Task T077, which is not in the plan") as info:
        load_plan(unknown)
    assert info.value.line == 43


def test_task_headings_win_over_items(tmp_path: Path) -> None:
    """A plan with task headings is read by them: its Spec Kit-looking items are steps of a task."""
    plan_path = tmp_path / "plan.md"
    plan_path.write_text("# Plan\n\n## Task 1: Models\n\n- [ ] T001 [P] Create the model\n- [ ] T002 Wire it\n")
    plan = load_plan(plan_path)
    assert [t.id for t in plan.tasks] == ["1"]
    assert not any("Spec Kit" in w for w in plan.warnings)


def test_an_item_under_the_title_ends_where_the_next_phase_begins(tmp_path: Path) -> None:
    """Each item's heading is one level below the heading holding it, so the next phase's heading ends its task."""
    plan_path = tmp_path / "tasks.md"
    plan_path.write_text(
        "# Tasks: Notes\n\n- [ ] T001 Write the note model\n\n## Phase 2: More\n\nWhat phase 2 is for.\n\n"
        "- [ ] T002 Save notes\n"
    )
    first, second = load_plan(plan_path).tasks
    assert (first.id, second.id) == ("T001", "T002")
    assert "phase 2 is for" not in first.body + first.description
    assert [d.task_id for d in second.depends_on] == ["T001"]


def test_a_long_item_is_a_short_title_and_its_lines_are_the_description(tmp_path: Path) -> None:
    plan_path = tmp_path / "tasks.md"
    words = " ".join(f"word{n}" for n in range(40))
    plan_path.write_text(f"# Tasks\n\n## Phase 1: Setup\n\n- [ ] T001 Set up the project,\n      {words}\n")
    (task,) = load_plan(plan_path).tasks
    assert len(task.title) <= 120
    assert task.title.endswith("…")
    assert task.title.startswith("Set up the project, word0 word1")
    assert words in task.body  # the whole item, out of the list: a paragraph, not indented code
    assert f"\n{words}" in task.body


def test_a_dependency_named_mid_item_stays_in_the_title(tmp_path: Path) -> None:
    plan_path = tmp_path / "tasks.md"
    plan_path.write_text(
        "# Tasks\n\n## Phase 1: Setup\n\n- [ ] T001 [P] Write the model\n"
        "- [ ] T002 [P] Save notes (depends on T001) in src/notes/save.py\n"
    )
    _, second = load_plan(plan_path).tasks
    assert second.title == "Save notes (depends on T001) in src/notes/save.py"
    assert [d.task_id for d in second.depends_on] == ["T001"]  # a [P] run, but named


STORIES = Path(__file__).parent / "fixtures" / "forms" / "speckit-stories.md"


@pytest.fixture(params=["fast", "markdown-it"])
def stories(request: pytest.FixtureRequest) -> dict[str, Task]:
    fastpath.ENABLED = request.param == "fast"
    try:
        return {task.id: task for task in load_plan(STORIES).tasks}
    finally:
        fastpath.ENABLED = True


def test_the_paths_an_item_names_are_its_files(stories: dict[str, Task]) -> None:
    files = {k: {kind: v for kind, v in t.expected_files.model_dump().items() if v} for k, t in stories.items()}
    assert files == {
        "T010": {"create": ["app/models/article.py"]},  # `Create ...` makes its file
        "T011": {"modify": ["app/api/articles.py"]},
        "T012": {"test": ["tests/test_save.py"]},
        "T020": {"modify": ["app/services/articles.py"]},
        "T021": {},  # `per docs/ui.md` is what to follow, not a file to change
        "T030": {"modify": ["app/services/share.py"]},
        "T040": {},  # the same; its bracketed detail names no file either
    }


def test_verify_in_the_detail_of_an_item_that_changes_files_is_no_verification_task(stories: dict[str, Task]) -> None:
    """`(save function: verify the URL, ...)` details what to build; `Run the end-to-end validation` verifies."""
    for task_id in ("T011", "T020"):
        assert not any("verification" in d.reason for d in stories[task_id].depends_on), task_id
    assert {d.task_id for d in stories["T040"].depends_on if "verification task" in d.reason} == {"T010", "T020"}


def test_story_dependency_lines_order_the_stories_tasks(stories: dict[str, Task]) -> None:
    def stated(task_id: str) -> list[tuple[str, str]]:
        return [(d.task_id, d.note) for d in stories[task_id].depends_on if "depends on" in d.note]

    # Every task of RL-US2 waits for RL-US1's last items (its closing [P] run); RL-US3 for both stories.
    assert stated("T020") == [("T011", "RL-US2 depends on RL-US1"), ("T012", "RL-US2 depends on RL-US1")]
    assert stated("T021") == stated("T020")
    assert stated("T030") == [
        ("T011", "RL-US3 depends on RL-US1"),
        ("T012", "RL-US3 depends on RL-US1"),
        ("T021", "RL-US3 depends on RL-US2"),
    ]
    assert stated("T010") == stated("T011") == []  # `RL-US1: No dependencies`


def test_a_phase_dependency_line_orders_the_phases(tmp_path: Path) -> None:
    plan_file = tmp_path / "tasks.md"
    plan_file.write_text(
        "# Tasks\n\n## Phase 1: User Story 1 - A\n\n- [ ] T001 [US1] Build a in src/a.py\n\n"
        "## Phase 2: User Story 2 - B\n\n- [ ] T002 [US2] Build b in src/b.py\n\n"
        "## Dependencies\n\nPhase 2 depends on Phase 1\n",
        encoding="utf-8",
    )
    second = load_plan(plan_file).tasks[1]
    assert [(d.task_id, d.note) for d in second.depends_on] == [("T001", "Phase 2 depends on Phase 1")]
