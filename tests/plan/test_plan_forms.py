"""Plan forms real plans use that the parser once refused: Chinese plans, numbered and `Step N` headings.

The fixtures in fixtures/forms/ are short plans of our own written in each form.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.errors import PlanError
from pm_agent.plan import fastpath, fields, load_plan, parse_plan_text, refs
from pm_agent.plan.numbered import batch_heading, numbered_heading

FORMS = Path(__file__).parent / "fixtures" / "forms"


def _deps(plan_path: Path) -> dict[str, list[tuple[str, bool]]]:
    return {t.id: [(d.task_id, d.inferred) for d in t.depends_on] for t in load_plan(plan_path).tasks}


def test_chinese_plan_reads_tasks_fields_and_steps() -> None:
    plan = load_plan(FORMS / "cjk-tasks.md")
    assert [(t.id, t.title) for t in plan.tasks] == [
        ("1", "书签模型"),
        ("2", "保存书签"),
        ("3", "按标签搜索"),
        ("4", "最终验证"),
    ]
    first, second = plan.tasks[0], plan.tasks[1]
    assert first.expected_files.create == ["src/marks/model.py"]
    assert first.expected_files.test == ["tests/test_model.py"]
    assert first.steps == ["编写失败的测试", "实现模型"]
    assert first.estimate == 0.5  # 30 分钟
    assert first.declared_independent  # 依赖：无
    assert second.estimate == 2.0  # 2 小时
    assert second.expected_files.modify == ["src/marks/model.py"]
    assert second.acceptance_criteria == ["保存后可以读回", "重复的网址只存一次"]
    # 任务 1（需要模型）: full-width brackets hold a note, as ASCII ones do
    assert [(d.task_id, d.note) for d in second.depends_on] == [("1", "需要模型")]


def test_chinese_phase_reference_and_verification_task() -> None:
    deps = _deps(FORMS / "cjk-tasks.md")
    assert deps["3"] == [("1", False), ("2", False)]  # 依赖：阶段 1 完成
    assert deps["4"] == [("1", True), ("2", True), ("3", True)]  # 最终验证 runs after every task


def test_numbered_headings_are_tasks_without_task_headings() -> None:
    plan = load_plan(FORMS / "numbered-tasks.md")
    assert [t.id for t in plan.tasks] == ["1.1", "1.2", "1.3", "2.1", "2.2"]
    assert plan.tasks[0].title == "Bookmark model"
    assert plan.header.title == "Bookmark service — work breakdown"
    assert any(":5: no 'Task N:' headings: the 5 numbered headings at level 3" in w for w in plan.warnings)
    deps = _deps(FORMS / "numbered-tasks.md")
    assert deps["1.2"] == [("1.1", False)]
    assert deps["2.1"] == [("1.1", False), ("1.2", False), ("1.3", False)]  # Phase 1 complete
    assert deps["2.2"] == [("1.2", False), ("1.3", False), ("2.1", False)]  # 1.2-1.3, 2.1


def test_step_headings_are_tasks_without_task_headings() -> None:
    plan = load_plan(FORMS / "step-headings.md")
    assert [(t.id, t.title) for t in plan.tasks] == [
        ("1", "Export format"),
        ("2", "Wire the command"),
        ("3", "Document it"),
    ]
    assert plan.tasks[1].expected_files.modify == ["src/app/cli.py"]


def test_numbered_design_doc_is_refused_saying_why() -> None:
    with pytest.raises(PlanError) as caught:
        load_plan(FORMS / "numbered-design-doc.md")
    assert caught.value.line == 5
    assert "'1. Background'" in str(caught.value)
    assert "only 0 of them carry a task field" in str(caught.value)
    assert "design doc" in str(caught.value)


def test_parse_plan_text_reads_numbered_headings_too() -> None:
    _, tasks = parse_plan_text((FORMS / "step-headings.md").read_text(encoding="utf-8"))
    assert [t.id for t in tasks] == ["1", "2", "3"]


def test_task_headings_win_over_numbered_ones() -> None:
    text = (
        "# Plan\n\n## 1. Context\n\n**Files:**\n- Create: `a.py`\n\n"
        "## Task 1: Real task\n\n**Files:**\n- Create: `b.py`\n"
    )
    _, tasks = parse_plan_text(text)
    assert [(t.id, t.title) for t in tasks] == [("1", "Real task")]


def test_a_folder_file_without_task_headings_is_not_read_by_numbers(tmp_path: Path) -> None:
    folder = tmp_path / "plan"
    folder.mkdir()
    (folder / "README.md").write_text("# Overview\n\n## 1. Setup\n\n**Files:**\n- Create: `a.py`\n", encoding="utf-8")
    (folder / "01-model.md").write_text("# Task 1: Model\n\n**Files:**\n- Create: `m.py`\n", encoding="utf-8")
    assert [t.id for t in load_plan(folder).tasks] == ["1"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1.1.1 安装依赖", ("1.1.1", "安装依赖")),
        ("2.3. Search", ("2.3", "Search")),
        ("3. Document it", ("3", "Document it")),
        ("4) Ship", ("4", "Ship")),
        ("5、发布", ("5", "发布")),
        ("Step 3: Wire it", ("3", "Wire it")),
        ("步骤 2：接线", ("2", "接线")),
        ("1.1安装", ("1.1", "安装")),
        ("2026 Roadmap", None),
        ("1.5x faster parsing", None),
        ("Background", None),
        ("Phase 1: Storage", None),
    ],
)
def test_numbered_heading_forms(text: str, expected: tuple[str, str] | None) -> None:
    assert numbered_heading(text) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Task 11（config）、Task 13（context）", [("11", "config"), ("13", "context")]),
        ("Task 13 (context) + Task 11", [("13", "context"), ("11", "")]),
        ("Task 2 C++ bindings", [("2", "C++ bindings")]),  # `+` splits only before a reference
        ("任务 3.2, 3.3", [("3.2", ""), ("3.3", "")]),
        ("无", []),
    ],
)
def test_full_width_punctuation_in_references(value: str, expected: list[tuple[str, str]]) -> None:
    assert [(r.task_id, r.note) for r in refs.read_refs(value)] == expected


def test_task_word_and_units_in_chinese() -> None:
    assert fields.task_heading("任务 1：提取解析") == ("1", "提取解析")
    assert fields.task_heading("任务2.1：客户端") == ("2.1", "客户端")
    assert fields.step_title("步骤 1：编写测试") == "编写测试"
    assert fields.parse_estimate("45 分钟") == 0.75
    assert fields.parse_estimate("1 天") == 8.0
    assert refs.phase_ref("阶段 2 完成") == "2"
    assert refs.phase_ref("Phase 1 complete") == "1"
    assert refs.phase_ref("the parser task") is None


LETTERED = Path(__file__).parent / "fixtures" / "forms" / "lettered-waves.md"


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "markdown-it"])
def test_lettered_tasks_in_waves_keep_their_wait_for_order(fast: bool) -> None:
    """`### Task A:` headings and `**WAIT_FOR:** Tasks A, B, C (all previous tasks)` (a public agent-written plan's
    form): each letter is a task, WAIT_FOR is its Depends on, and the last task waits for all."""
    fastpath.ENABLED = fast
    try:
        plan = load_plan(LETTERED)
    finally:
        fastpath.ENABLED = True
    deps = {t.id: [d.task_id for d in t.depends_on] for t in plan.tasks}
    assert deps == {"A": [], "B": [], "C": ["A"], "D": ["A", "B", "C"]}
    assert [t.title for t in plan.tasks] == [
        "Read the rows",
        "Describe the formats",
        "Write CSV",
        "Write PDF and run the whole suite",
    ]
    assert plan.queue[-1] == "D"
    assert {t.id: t.declared_independent for t in plan.tasks}["A"] is True


BATCHES = Path(__file__).parent / "fixtures" / "forms" / "risk-batches.md"


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "markdown-it"])
def test_risk_tagged_batches_are_the_tasks_run_in_order(fast: bool) -> None:
    """`## Batch 1 [LOW RISK]` with `### Step 1.1:` headings (one tool's agent-written plans, three of them public):
    each batch is a task, its steps its steps, and it depends on the batch before unless it says otherwise."""
    fastpath.ENABLED = fast
    try:
        plan = load_plan(BATCHES)
    finally:
        fastpath.ENABLED = True
    by_id = {t.id: t for t in plan.tasks}
    assert list(by_id) == ["1", "2", "3"]
    assert by_id["1"].title == "Return the session id from the driver"  # its emphasized first line
    assert by_id["2"].title == "Store the session id in the workflow state"  # the heading's own title
    assert by_id["1"].steps == ["Write the failing test", "Return a tuple from generate", "Run the test"]
    assert {k: [d.task_id for d in t.depends_on] for k, t in by_id.items()} == {"1": [], "2": ["1"], "3": ["1"]}
    assert by_id["2"].depends_on[0].note == "the batch before: batches run in order"
    assert by_id["2"].expected_files.create == ["migrations/0004_session_id.sql"]
    assert "Three batches" not in by_id["3"].body  # the summary is no batch's
    assert plan.warnings[0].endswith("the 3 'Batch N' headings at level 2 are read as the tasks, in order")


@pytest.mark.parametrize(
    ("heading", "parsed"),
    [
        ("Batch 1 [LOW RISK]", ("1", "Batch 1 (low risk)")),
        ("Batch 0 [LOW RISK] - Add the dependency", ("0", "Add the dependency")),
        ("Batch 12 [High Risk]: Migrate", ("12", "Migrate")),
        ("Batch 1: Parallel (3 agents)", None),  # a design doc's section about who runs what
        ("Batch 2 [3 agents]", None),
        ("Batch processing", None),
    ],
)
def test_batch_headings(heading: str, parsed: tuple[str, str] | None) -> None:
    assert batch_heading(heading) == parsed


def test_a_step_label_may_carry_its_batch_number() -> None:
    assert fields.step_title("Step 1.2: Return a tuple") == "Return a tuple"
    assert fields.step_title("Step 3. Commit") == "Commit"


def test_batches_without_task_fields_are_still_tasks(tmp_path: Path) -> None:
    """A numbered section without Files or Steps reads as a design doc's; a risk-tagged batch says it is a task."""
    plan_file = tmp_path / "plan.md"
    plan_file.write_text(
        "# Notes\n\n## Batch 1 [LOW RISK]\n*Create notes.md*\n\nRun: `test -f notes.md`\n\n"
        "## Batch 2 [LOW RISK]\n*Create todo.md*\n\nRun: `test -f todo.md`\n",
        encoding="utf-8",
    )
    plan = load_plan(plan_file)
    assert [(t.id, t.title) for t in plan.tasks] == [("1", "Create notes.md"), ("2", "Create todo.md")]
    assert [d.task_id for d in plan.tasks[1].depends_on] == ["1"]


STORY = Path(__file__).parent / "fixtures" / "forms" / "story-checklist.md"
LOOP = Path(__file__).parent / "fixtures" / "forms" / "loop-checklist.md"


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "markdown-it"])
def test_a_story_s_checklist_tasks_are_its_tasks(fast: bool) -> None:
    """`## Tasks / Subtasks` with `- [ ] Task 1: Title (AC: #1, #2)` and nested subtasks (story files, loop plans):
    each unchecked item is a task, its subtasks its body, its annotation kept out of its title; a checked item is
    done and not run."""
    fastpath.ENABLED = fast
    try:
        plan = load_plan(STORY)
    finally:
        fastpath.ENABLED = True
    assert [(t.id, t.line, t.title) for t in plan.tasks] == [
        ("1", 17, "Create the log viewer sheet"),
        ("2", 25, "Stream the running job's output"),
    ]
    first = plan.tasks[0]
    assert first.description.startswith("AC: #1, #2")
    # The story's numbered acceptance criteria the annotation names are the task's.
    assert first.acceptance_criteria == [
        "Given a finished job When the user opens its log Then the whole log is shown",
        "Given a running job When output arrives Then it appears within 100 ms",
    ]
    assert plan.tasks[1].acceptance_criteria == [
        "Given a running job When output arrives Then it appears within 100 ms"
    ]
    assert first.body.split("\n")[:3] == [
        "### Task 1: Create the log viewer sheet",
        "AC: #1, #2",
        "- [ ] 1.1 Create `Views/History/LogViewerSheet.swift`",
    ]
    assert "let text = try logStore.readLogFile(fileName: job.logName)" in first.body
    assert "Dev Notes" not in plan.tasks[1].body  # the next section is no task's
    assert plan.warnings[1].endswith(
        ":16: 'Task 0: Scaffold the history view (AC: #1)' is checked off in the plan: done, not run"
    )


def test_a_loop_plan_s_checklist_and_its_files_annotation() -> None:
    plan = load_plan(LOOP)
    assert [t.title for t in plan.tasks] == [
        "Add the CSV serializer",
        "Add the export button to the reports page",
        "Wire the download endpoint",
    ]
    assert plan.tasks[1].description == "files: src/pages/Reports.tsx, src/export/csv.ts"
    assert plan.warnings[0].endswith("the 3 unchecked '- [ ] Task N:' items are read as the tasks")


def test_task_headings_win_over_checklist_items(tmp_path: Path) -> None:
    text = "# P\n\n## Task 1: Heading task\n\n- [ ] Task 2: an item in its body\n"
    plan_file = tmp_path / "plan.md"
    plan_file.write_text(text, encoding="utf-8")
    plan = load_plan(plan_file)
    assert [t.id for t in plan.tasks] == ["1"]
    assert "- [ ] Task 2: an item in its body" in plan.tasks[0].body


def test_a_checklist_in_a_code_block_is_no_task(tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.md"
    plan_file.write_text("# P\n\n## Tasks\n\n```markdown\n- [ ] Task 1: an example\n```\n", encoding="utf-8")
    with pytest.raises(PlanError, match="no tasks found"):
        load_plan(plan_file)


def test_a_checklist_task_keeps_code_and_prose_that_follow_it_as_written(tmp_path: Path) -> None:
    text = (
        "# P\n\n## Tasks\n\n- [ ] Task 1: Write the template\n  - [ ] 1.1 Put it in `docs/template.md`\n\n"
        "The template reads:\n\n```markdown\n- [ ] Task 9: an example item\n```\n\n"
        "And the command:\n\n    make template\n"
    )
    plan_file = tmp_path / "plan.md"
    plan_file.write_text(text, encoding="utf-8")
    (task,) = load_plan(plan_file).tasks
    assert "- [ ] Task 9: an example item" in task.body  # code in a fence is not touched
    assert "\n    make template" in task.body  # after the item's own lines, indentation is the text's own
    assert "\n- [ ] 1.1 Put it in `docs/template.md`" in task.body


CONDUCTOR = Path(__file__).parent / "fixtures" / "forms" / "conductor-plan.md"


def test_a_conductor_plan_s_tasks_are_numbered_in_order_and_run_in_order() -> None:
    """Conductor's plan.md (Gemini CLI): `- [ ] Task: Title` items under `## Phase N:` headings. Every such item is
    numbered in plan order, done ones and the user's manual verifications too (so the ids stay when items get
    checked off); the unchecked ones are the tasks, each after the one before it, as Conductor runs them."""
    plan = load_plan(CONDUCTOR)
    assert [(t.id, t.line, t.title) for t in plan.tasks] == [
        ("3", 11, "Write tests for the CSV exporter"),
        ("4", 14, "Implement the CSV exporter in src/notes/export.py"),  # `**Task: ...**`: its words
        ("6", 20, "Add the notes export command"),
    ]
    assert {t.id: [d.task_id for d in t.depends_on] for t in plan.tasks} == {"3": [], "4": ["3"], "6": ["4"]}
    assert plan.tasks[0].steps == ["Test one row per note", "Test the header row"]
    # The manual verification below task 4 is the user's: no step of task 4.
    assert plan.tasks[1].steps == ["Write export_csv(notes)"]
    assert "Verification" not in plan.tasks[1].body
    where = str(CONDUCTOR)
    assert plan.warnings[0].endswith("('- [ ] Task:' items numbered in the order of the plan)")
    assert plan.warnings[1:] == [
        f"{where}:5: 'Task: Write tests for the note store `1a2b3c4`' is checked off in the plan: done, not run",
        f"{where}:7: 'Task: Conductor - User Manual Verification 'Phase 1: Storage' (Protocol in workflow.md)'"
        " is yours to do (Conductor's check): not run",
        f"{where}:16: 'Task: Conductor - User Manual Verification 'Phase 2: Export' (Protocol in workflow.md)'"
        " is yours to do (Conductor's check): not run",
    ]


def test_a_checked_item_and_its_subtasks_are_no_steps_of_the_task_above(tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.md"
    plan_file.write_text(
        "# P\n\n## Tasks\n\n- [ ] Task 1: Write the parser\n  - [ ] Read the header\n"
        "- [x] Task 2: Write the lexer\n  - [x] Split the words\n\n## Notes\n"
    )
    (task,) = load_plan(plan_file).tasks
    assert task.steps == ["Read the header"]
    assert "lexer" not in task.body
    assert "Split the words" not in task.body


def test_a_done_conductor_item_marked_with_its_commit_first_keeps_the_numbering(tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.md"
    plan_file.write_text(
        "# P\n\n## Phase 1: Core\n\n- [x] 7a51dc3 Task: Write the parser\n- [ ] Task: Write the lexer\n"
    )
    (task,) = load_plan(plan_file).tasks
    assert (task.id, task.title) == ("2", "Write the lexer")



def test_a_conductor_plan_of_bold_tasks_and_tasks_under_way(tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.md"
    plan_file.write_text(
        "# Plan\n\n## Phase 1: Pages\n\n- [x] **Task: Create the wrapper**\n- [~] **Task: Redesign the login page**\n"
        "    - [ ] Update the test\n- [ ] **Task: Redesign the sign-up page**\n"
    )
    plan = load_plan(plan_file)
    titles = [(t.id, t.title) for t in plan.tasks]
    assert titles == [("2", "Redesign the login page"), ("3", "Redesign the sign-up page")]
    assert plan.tasks[0].steps == ["Update the test"]  # `[~]`: Conductor's mark of a task under way, still to do


def test_a_checklist_plan_with_every_task_done_says_so(tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.md"
    plan_file.write_text(
        "# Plan\n\n## Phase 1\n\n- [x] a890e6a Task: Write the parser\n"
        "- [ ] Task: Conductor - User Manual Verification 'Phase 1' (Protocol in workflow.md)\n"
    )
    with pytest.raises(PlanError, match=r"none of its 2 checklist task items is left to run") as info:
        load_plan(plan_file)
    assert info.value.line == 5
