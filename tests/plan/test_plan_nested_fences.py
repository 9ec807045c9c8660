"""A ```markdown block that holds ``` fences of its own (a README written into a plan) is read as one block.

By Markdown's rules such a block ends at its first inner close, and the README's own headings then end the
task early: its later steps (often the commit) were lost without a word. Seen in a public agent-written plan;
fixtures/forms/readme-in-a-block.md is a short plan of our own in that form.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.errors import PlanError
from pm_agent.plan import fastpath, fields, load_plan
from pm_agent.plan.nested_fences import fence_lines, mend

FORM = Path(__file__).parent / "fixtures" / "forms" / "readme-in-a-block.md"


@pytest.fixture(params=["fast", "markdown-it"])
def either_path(request: pytest.FixtureRequest) -> object:
    """Both of the parser's ways of reading a task's blocks."""
    fastpath.ENABLED = request.param == "fast"
    yield request.param
    fastpath.ENABLED = True


def test_the_task_keeps_its_later_steps_and_the_plan_says_what_it_read(either_path: object) -> None:
    plan = load_plan(FORM)
    by_id = {t.id: t for t in plan.tasks}
    assert list(by_id) == ["1", "2", "3"]
    assert by_id["2"].steps == ["Write the README", "Check the README renders", "Commit"]
    assert "## License" in by_id["2"].body
    assert by_id["2"].body.rstrip().endswith('git commit -m "docs: README"\n```')
    assert [t.line for t in plan.tasks] == [7, 29, 72]  # line numbers as written
    (warning,) = plan.warnings
    assert warning == (
        f"{FORM}:36: the ```markdown block holds ``` fences of its own; by Markdown's rules it ends at line 45, "
        "and the rest of Task 2 is misread after it (its headings would end the task, its steps fall into code "
        "blocks). Read as one block up to line 57; a longer fence (````markdown) around such a block says so in "
        "Markdown itself"
    )


def test_the_same_plan_with_a_longer_fence_reads_the_same_without_a_warning(tmp_path: Path) -> None:
    lines = FORM.read_text(encoding="utf-8").split("\n")
    assert (lines[35], lines[56]) == ("```markdown", "```")
    lines[35], lines[56] = "````markdown", "````"
    fixed = tmp_path / "plan.md"
    fixed.write_text("\n".join(lines), encoding="utf-8")
    plan = load_plan(fixed)
    assert plan.warnings == []
    assert [t.steps for t in plan.tasks] == [t.steps for t in load_plan(FORM).tasks]


@pytest.mark.parametrize("heading", ["Usage:", "#### Usage"], ids=["no heading", "a heading below the task's"])
def test_without_headings_that_end_the_task_the_steps_swallowed_still_tell_the_real_close(
    tmp_path: Path, heading: str, either_path: object
) -> None:
    # Markdown reads the real close as an opening: the code block it opens holds the task's next steps and ends
    # inside their ```bash fence, the mirror image of the block that ended early.
    text = FORM.read_text(encoding="utf-8").replace("## Usage", heading).replace("## License", "License:")
    plan_path = tmp_path / "plan.md"
    plan_path.write_text(text, encoding="utf-8")
    assert [b.end for b in mend(text, fields.task_heading)[1]] == [57]
    plan = load_plan(plan_path)
    assert len(plan.warnings) == 1
    assert plan.tasks[1].steps == ["Write the README", "Check the README renders", "Commit"]


def test_a_block_that_ends_the_plan_is_read_to_its_real_close(tmp_path: Path, either_path: object) -> None:
    # The README task is the last: Markdown's block opened at the real close runs to the end of the plan.
    text = FORM.read_text(encoding="utf-8")
    last = text[: text.index("**Step 2: Check the README renders**")] + "**Step 2: Commit it.**\n"
    plan_path = tmp_path / "plan.md"
    plan_path.write_text(last, encoding="utf-8")
    plan = load_plan(plan_path)
    assert [t.id for t in plan.tasks] == ["1", "2"]
    assert plan.tasks[1].steps == ["Write the README", "Commit it."]
    assert len(plan.warnings) == 1


def test_a_block_without_an_inner_fence_that_names_its_language_is_left_as_markdown_reads_it() -> None:
    # Inner fences without an info string cannot be told from the outer block's close: nothing is guessed.
    text = FORM.read_text(encoding="utf-8").replace("```bash\npip install marks", "```\npip install marks")
    assert mend(text, fields.task_heading) == (text, [])


def test_mending_lengthens_only_the_two_fence_lines() -> None:
    text = FORM.read_text(encoding="utf-8")
    mended, (block,) = mend(text, fields.task_heading)
    before, after = text.split("\n"), mended.split("\n")
    changed = [n + 1 for n, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert changed == [36, 57]
    assert (after[35], after[56]) == ("````markdown", "````")
    assert (block.opened, block.markdown_end, block.end, block.info, block.task_id) == (36, 45, 57, "markdown", "2")
    assert mend(mended, fields.task_heading) == (mended, [])  # once mended, Markdown reads it so


def test_fence_lines_tells_a_code_that_ends_inside_a_fence_of_its_own() -> None:
    assert fence_lines("# Title\n```bash\npip install x\n") == (True, True)
    assert fence_lines("# Title\n```bash\npip install x\n```\nmore\n") == (False, True)
    assert fence_lines("print('no fences here')\n") == (False, False)
    assert fence_lines("```\nbare, opened\n```\n```json\n{}\n") == (True, True)


BARE = FORM.with_name("readme-bare-inner-fences.md")


def test_a_readme_whose_first_inner_fence_is_bare_keeps_its_task_whole(either_path: object) -> None:
    # Markdown closes the ```markdown block at the README's first (bare) inner fence; the README's own
    # `### Step 2: Start it` heading then read as the plan's step 2, and the real one (the commit) was lost.
    plan = load_plan(BARE)
    assert [t.steps for t in plan.tasks] == [
        ["Write the server", "Commit"],
        ["Write the README", "Commit the README"],
        ["Build", "Tag"],
    ]
    assert "### Step 2: Start it" in plan.tasks[1].body
    (warning,) = plan.warnings
    assert warning.startswith(f"{BARE}:33: the ```markdown block holds ``` fences of its own; by Markdown's rules")
    assert "it ends at line 40" in warning
    assert "Read as one block up to line 63" in warning


def test_only_the_tasks_the_parser_names_are_looked_at() -> None:
    text = BARE.read_text(encoding="utf-8")
    assert mend(text, fields.task_heading, starts=[5])[1] == []  # task 1's heading: nothing there
    assert [b.task_id for b in mend(text, fields.task_heading, starts=[26])[1]] == ["2"]


def test_a_markdown_block_written_with_a_longer_fence_before_a_phase_heading_is_not_touched(tmp_path: Path) -> None:
    text = (
        "# Plan\n\n## Phase 1: Docs\n\n### Task 1: README\n\n**Step 1: Write it**\n\n````markdown\n# Tool\n\n"
        "```bash\ntool run\n```\n\n## Usage\n\nRun it.\n````\n\n## Phase 2: Code\n\n### Task 2: Code\n\n"
        "**Step 1: Write it**\n\n```python\nprint(1)\n```\n"
    )
    path = tmp_path / "plan.md"
    path.write_text(text, encoding="utf-8")
    plan = load_plan(path)
    assert plan.warnings == []
    assert [t.steps for t in plan.tasks] == [["Write it"], ["Write it"]]
    assert mend(text, fields.task_heading) == (text, [])


TEMPLATE = Path(__file__).parent / "fixtures" / "forms" / "template-in-a-string.md"


def test_a_task_heading_in_a_prompt_template_is_not_a_task_when_the_plan_names_that_task_again(
    either_path: object,
) -> None:
    """A ```python block whose string holds a plan template with ``` fences and `### Task 1.2: [Next Task]`: by
    Markdown's rules the block ends at the template's inner close, and its `Task 1.2` heading then reads as a
    task, named again by the real one (a public agent-written plan failed with "duplicate task id")."""
    plan = load_plan(TEMPLATE)
    by_id = {t.id: t for t in plan.tasks}
    assert sorted(by_id) == ["1.1", "1.2", "2.1"]
    assert by_id["1.1"].steps == [
        "Write the failing test",
        "Create the module with the planner's prompt",
        "Run the test",
        "Commit",
    ]
    assert "Every task ends with a commit." in by_id["1.1"].body
    assert by_id["1.2"].title == "Create the prompt models"
    assert [t.line for t in plan.tasks if t.id in ("1.1", "1.2")] == [9, 60]
    (warning,) = plan.warnings
    assert warning.startswith(
        f"{TEMPLATE}:24: the ```python block holds ``` fences of its own; by Markdown's rules it ends at line 38"
    )
    assert "Read as one block up to line 46" in warning


def _without(lines: list[str], *numbers: int) -> str:
    return "\n".join(line for n, line in enumerate(lines, start=1) if n not in numbers)


def test_a_task_named_twice_with_no_block_to_blame_is_still_an_error(tmp_path: Path) -> None:
    lines = TEMPLATE.read_text(encoding="utf-8").split("\n")
    assert lines[35] == "```[language]"
    plain = tmp_path / "plan.md"
    # Without the template's inner fence the block ends where it should, and the template's heading stays in it;
    # a real second Task 1.2 heading is then what the error names.
    plain.write_text(_without(lines, 36, 37, 38) + "\n### Task 1.2: Again\n\n**Step 1: Twice**\n", encoding="utf-8")
    with pytest.raises(PlanError, match=r"duplicate task id '1.2' \(Task 1.2 is on line 57\)"):
        load_plan(plain)


def test_a_stray_task_heading_with_no_real_close_after_it_is_left_to_the_duplicate_error(tmp_path: Path) -> None:
    lines = TEMPLATE.read_text(encoding="utf-8").split("\n")
    assert lines[47] == "**Step 3: Run the test**"
    lines[47] = "Then run the test."  # the block's real close is followed by nothing of the plan's structure
    assert (lines[66], lines[72]) == ("```python", "**Step 2: Commit**")
    # Past the real Task 1.2 heading a bare fence is followed by Task 1.1's next step label: still not the close.
    lines[66], lines[72] = "```", "**Step 3: Commit**"
    broken = tmp_path / "plan.md"
    broken.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(PlanError, match=r"duplicate task id '1.2' \(Task 1.2 is on line 40\)"):
        load_plan(broken)
