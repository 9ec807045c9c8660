"""Reading a plan section by section gives the nodes markdown-it gives for the whole document.

The scanner splits only at task headings outside code fences and HTML blocks; the fast reader gives
markdown-it's nodes or gives up; a section left open at its end sends the rest to markdown-it whole.
"""

from __future__ import annotations

import random
from itertools import pairwise
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pm_agent.plan import fastpath
from pm_agent.plan.fastmd import read_section, read_until
from pm_agent.plan.fields import task_heading
from pm_agent.plan.markdown import Node, lines_of, parse_tree, plain
from pm_agent.plan.parser import read_plan
from pm_agent.plan.sections import _title_starts, heading_raw, read_blocks, split_points

ROOT = Path(__file__).resolve().parents[2]


def _points(text: str) -> list[int]:
    return split_points(text.split("\n"))


def test_splits_at_task_headings_only() -> None:
    text = "# Plan\n\n## Part 1\n\n### Task 1: A\n\ntext\n\n## Task 2 — B\n#### Task 3. C\n### Notes\n"
    assert _points(text) == [4, 8, 9]


def test_heading_text_drops_the_markers() -> None:
    assert heading_raw("### Task 2: X ###") == "Task 2: X"
    assert heading_raw("#Task 2: X") is None
    assert heading_raw("####### Task 2: X") is None


def test_no_split_inside_backtick_and_tilde_fences() -> None:
    text = "### Task 1: A\n```python\n### Task 2: comment\n```\n~~~\n### Task 3: echo\n~~~\n### Task 4: D\n"
    assert _points(text) == [7]


def test_a_longer_fence_holds_shorter_fence_lines() -> None:
    text = "### Task 1: A\n````markdown\n```\n### Task 2: quoted\n```\n````\n### Task 3: C\n"
    assert _points(text) == [6]


def test_indented_fences_and_closers_with_trailing_spaces() -> None:
    text = "### Task 1: A\n   ~~~~\n### Task 2: in\n  ~~~~~  \n   ```\n### Task 3: in\n```\n### Task 4: D\n"
    assert _points(text) == [7]


def test_a_fence_closes_only_with_its_own_character_and_length() -> None:
    text = "### Task 1: A\n````\n```\n~~~~\n### Task 2: in\n````\n### Task 3: C\n"
    assert _points(text) == [6]


def test_an_unclosed_fence_runs_to_the_end() -> None:
    text = "### Task 1: A\n```\n### Task 2: in\n### Task 3: in\n"
    assert _points(text) == []
    assert [t.id for t in read_plan(text).tasks] == ["1"]


def test_backticks_in_the_info_string_make_no_fence() -> None:
    text = "### Task 1: A\n``` a`b\n### Task 2: B\n```\n### Task 3: in\n```\n### Task 4: D\n"
    assert _points(text) == [2, 6]


def test_a_fence_indented_four_spaces_is_code_not_a_fence() -> None:
    text = "### Task 1: A\n\n    ```\n### Task 2: B\n"
    assert _points(text) == [3]


def test_no_split_inside_html_blocks() -> None:
    text = "### Task 1: A\n<!--\n### Task 2: in\n-->\n<div>\n### Task 3: in\n\n### Task 4: D\n<!-- x -->\n"
    text += "### Task 5: E\n"
    assert _points(text) == [7, 9]


def _describe(node: Node, lines: list[str]) -> list[Any]:
    """What the plan reader can see of a node; a list's end is only seen through its text, right-stripped."""
    start, end = node.map or (0, 0)
    seen: list[Any] = [node.type, start]
    if node.type in ("bullet_list", "ordered_list", "list_item"):
        seen.append("\n".join(lines[start:end]).rstrip())
        seen.append([_describe(child, lines) for child in node.children if child.type != "inline"])
    else:
        seen.append(end)
    if node.type == "fence":
        seen += [node.info, node.content]
    elif node.type == "heading":
        seen += [node.tag, plain(node.children[0])]
    elif node.type == "paragraph":
        seen.append(lines_of(node.children[0]))
    return seen


def _same_as_whole(text: str) -> None:
    lines = text.split("\n")
    blocks = read_blocks(text, lines)
    assert [_describe(n, lines) for n in blocks.nodes] == [_describe(n, lines) for n in parse_tree(text).children]


def test_fixture_plans_read_as_whole_documents() -> None:
    plans = [*sorted((ROOT / "tests" / "plan" / "fixtures").rglob("*.md")), ROOT / "examples" / "sample" / "plan.md"]
    assert len(plans) > 20
    for path in plans:
        _same_as_whole(path.read_text(encoding="utf-8"))


def test_a_section_open_at_its_end_sends_the_rest_whole() -> None:
    # The fence in the quote ends with the quote; the scanner does not see it, the check does.
    text = "### Task 1: A\n\n> ```\n### Task 2: B\n\ntext\n\n### Task 3: C\n"
    blocks = read_blocks(text, text.split("\n"))
    assert blocks.whole
    assert blocks.sections == 0
    _same_as_whole(text)
    assert [t.id for t in read_plan(text).tasks] == ["1", "2", "3"]


def test_a_fence_open_at_a_section_end_before_its_blank_line() -> None:
    # The list item's second paragraph holds the first fence, so the second one opens a fence that runs
    # on; the section's last line is empty, which markdown-it does not count as a line.
    text = "### Task 1: A\n- item\n\n   more\n  ```\ncode\n  ```\n\n## Task 2: B\ntext\n"
    blocks = read_blocks(text, text.split("\n"))
    assert blocks.whole
    _same_as_whole(text)
    assert [t.id for t in read_plan(text).tasks] == ["1"]


def test_a_link_reference_definition_makes_the_plan_one_piece() -> None:
    text = "### Task 1: A\n\nsee [the spec]\n\n### Task 2: B\n\n[the spec]: https://example.org\n"
    blocks = read_blocks(text, text.split("\n"))
    assert blocks.whole
    _same_as_whole(text)


def test_a_nul_character_makes_the_plan_one_piece() -> None:
    text = "### Task 1: A\n\n```yaml\ntitle: a\x00b\n```\n\n### Task 2: B\n"
    blocks = read_blocks(text, text.split("\n"))
    assert blocks.whole
    _same_as_whole(text)


def test_each_line_is_read_once() -> None:
    body = "\n**Files:**\n- Create: `src/a{n}.py`\n\n```python\n### Task x{n}: code\n```\n"
    text = "# Plan\n\n" + "".join(f"### Task {n}: T{n}\n{body.format(n=n)}\n" for n in range(1, 51))
    blocks = read_blocks(text, text.split("\n"))
    assert (blocks.sections, blocks.fast, blocks.whole) == (51, 51, False)
    assert len(read_plan(text).tasks) == 50


def test_the_fast_reader_gives_up_on_what_it_does_not_know() -> None:
    for text in ("*emphasis*", "a [link](x)", "> quote", "<div>", "a\n===", "    code", "- a\n  - b", "a\tb", "``a``"):
        lines = text.split("\n")
        assert read_section(lines, 0, len(lines)) is None, text


PIECES = st.sampled_from(
    [
        "# Plan\n",
        "### Task 1: A\n",
        "## Task 2 — B\n",
        "### Task 3. C\n",
        "#### Notes\n",
        "\n",
        "\n\n",
        "**Depends on:** Task 1 (the schema)\n",
        "**Files:**\n",
        "**Files**: `a.py`\n",
        "- Create: `src/a.py`\n",
        "- Test: `tests/test_a.py`\n",
        "* Modify: `src/b.py:1-9`\n",
        "+ item\n",
        "- [ ] check it\n",
        "- [x] `done.py` too\n",
        "1. first\n",
        "2) second\n",
        "1) third\n",
        "lazy continuation line\n",
        "   indented text\n",
        "    indented code\n",
        "```python\n",
        "```\n",
        "   ```\n",
        "````md\n",
        "````\n",
        "~~~\n",
        "``` a`b\n",
        "### Task 9: inside a fence?\n",
        "---\n",
        "***\n",
        "* * *\n",
        "===\n",
        "> quoted\n",
        "<!-- note\n",
        "-->\n",
        "<div>\n",
        "| a | b |\n",
        "|---|---|\n",
        "*emphasis* and __init__\n",
        "a [link](http://x) here\n",
        "`` double ``\n",
        "` spaced `\n",
        "x\\\n",
        "&amp; entity\n",
        "tab\there\n",
        "**Step 1: Write the failing test**\n",
        "trailing spaces  \n",
        "-\n",
        "-     five spaces\n",
        "#hashtag\n",
        "  - nested\n",
        "> ```\n",
        "<pre>\n",
        "</pre>\n",
        "[ref]: /x\n",
        "    ```\n",
        "  second paragraph\n",
        "   ~~~~~\n",
        "2. not first\n",
        "nul \x00 here\n",
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(PIECES, min_size=1, max_size=30))
def test_any_mix_reads_as_the_whole_document(pieces: list[str]) -> None:
    _same_as_whole("".join(pieces))


# Pieces the fast reader takes, so that the mixes above do not all end in markdown-it.
EASY = st.sampled_from(
    [
        "### Task 1: A\n",
        "## Task 2 — B `x`\n",
        "# Title\n",
        "\n",
        "**Depends on:** Task 1 (the schema)\n",
        "**Files:**\n",
        "**Files**: `a.py`\n",
        "- Create: `src/a.py`\n",
        "- Test: `tests/test_a.py`\n",
        "* Modify: `src/b.py:1-9`\n",
        "+ item\n",
        "- [ ] check it\n",
        "- [x] `done.py` too\n",
        "1. first\n",
        "2. second\n",
        "3) third\n",
        "prose line\n",
        "   indented text\n",
        "```python\n",
        "```\n",
        "  ```\n",
        "~~~\n",
        "---\n",
        "* * *\n",
        "` spaced `\n",
        "trailing spaces  \n",
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(EASY, min_size=1, max_size=30))
def test_any_easy_mix_reads_as_the_whole_document(pieces: list[str]) -> None:
    _same_as_whole("".join(pieces))


def _is_task_line(line: str) -> bool:
    text = heading_raw(line)
    return text is not None and task_heading(text) is not None


def test_the_fast_reader_finds_the_section_ends_the_scanner_finds() -> None:
    # On every fixture plan: where the fast reader reads a section on its own, it stops at the
    # scanner's next split point with the nodes it gives that section alone.
    plans = [*sorted((ROOT / "tests" / "plan" / "fixtures").rglob("*.md")), ROOT / "examples" / "sample" / "plan.md"]
    compared = 0
    for plan in plans:
        lines = plan.read_text(encoding="utf-8").split("\n")
        bounds = [0, *split_points(lines), len(lines)]
        for start, end in pairwise(bounds):
            read = read_until(lines, start, _is_task_line)
            if read is None:
                continue
            compared += 1
            assert read[1] == end, (plan.name, start)
            alone = read_section(lines, start, end)
            assert alone is not None
            assert [_describe(n, lines) for n in read[0]] == [_describe(n, lines) for n in alone], (plan.name, start)
    assert compared > 50


def test_a_fence_holds_a_task_heading_for_the_fast_reader_too() -> None:
    lines = ["### Task 1: A", "", "```python", "### Task 9: code", "```", "", "### Task 2: B", ""]
    read = read_until(lines, 0, _is_task_line)
    assert read is not None
    assert read[1] == 6
    assert [n.type for n in read[0]] == ["heading", "fence"]


def test_a_section_the_fast_reader_cannot_end_falls_back_to_the_scanner() -> None:
    # A list item running straight into the next task heading: reading on, the fast reader meets
    # the heading inside the item and gives up; the scanner's end lets it read the section alone.
    text = "### Task 1: A\n\n**Files:**\n- Create: `a.py`\n### Task 2: B\n\n- x\n"
    lines = text.split("\n")
    assert read_until(lines, 0, _is_task_line) is None
    assert read_section(lines, 0, 4) is not None
    blocks = read_blocks(text, lines)
    assert (blocks.sections, blocks.fast, blocks.whole) == (2, 2, False)
    _same_as_whole(text)
    assert [t.expected_files.create for t in read_plan(text).tasks] == [["a.py"], []]


TITLE_PIECES = ("#", "# ", "#\t", "##", "=", "==", "= ", " ", "   ", "    ", "\n", "\n", "\n", "x", "\t", "Task 1: A")


def test_the_title_search_after_line_breaks_finds_what_the_line_start_search_finds() -> None:
    # sections._title_starts looks for `\n` and the title after it (and at the start), not `^` everywhere.
    rng = random.Random(2)
    found = 0
    for _ in range(10_000):
        text = "".join(rng.choice(TITLE_PIECES) for _ in range(rng.randint(0, 14)))
        fast = list(_title_starts(text))
        fastpath.ENABLED = False
        try:
            slow = list(_title_starts(text))
        finally:
            fastpath.ENABLED = True
        assert fast == slow, repr(text)
        found += len(fast)
    assert found > 5_000  # titles were met often, at the start and after breaks
