"""fasttask.py, the task-section reader without nodes: it reads what fastmd.py and the reader's walk would,
and stops before anything else, so that a plan loads the same as through markdown-it alone."""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from pm_agent.errors import PlanError
from pm_agent.plan import fastpath, load_plan
from pm_agent.plan.fastmd import _line
from pm_agent.plan.fasttask import _PLAIN_LINE, SPACES_BUT_SPACE, TaskOps, _read_line
from pm_agent.plan.sections import read_blocks

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from bench_plan import realistic_plan  # noqa: E402

# Pieces of lines: labels, code spans, the characters `_line` refuses, odd spaces, full-width colons.
PIECES = (
    "**Files:**", "**Depends on:**", "**Step 1: Do it**", "** x**", "**x **", "**a`b**", "**x**y", "**x**：",
    "`a.py`", "` a.py `", "` a`", "``", "`", "[ ] ", "[x] ", "[", "]", "*", "_", "\\", "&", "<", "|",
    "\t", "\u00a0", "\u3000", "\x1c", " ", "  ", ":", "：", "Create", "Task 3", "src/a.py:3-9", "prose", "é",
)  # fmt: skip


def _random_line(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 5))).strip(" ")


def test_the_spaces_list_is_what_the_regex_engine_calls_whitespace_besides_the_space() -> None:
    listed = re.compile(f"[{SPACES_BUT_SPACE}]")
    spaces = re.compile(r"\s")
    for code in range(0x110000):
        char = chr(code)
        assert (listed.match(char) is not None) == (spaces.match(char) is not None and char != " "), hex(code)


def test_a_line_reads_as_fastmd_reads_it() -> None:
    rng = random.Random(5)
    matched = 0
    for _ in range(20_000):
        text = _random_line(rng)
        if not text:
            continue
        slow = _line(text, 3)
        assert _read_line(text, 3) == (None if slow is None else slow[0]), text
        matched += _PLAIN_LINE.fullmatch(text) is not None
    assert matched > 1_000  # the one-match path is taken, not only the fallback


@pytest.mark.parametrize(
    ("text", "label", "value", "code"),
    [
        ("**Files:**", "Files:", "", ()),
        ("**Depends on:** Task 3", "Depends on:", "Task 3", ()),
        ("Create: `src/a.py` and `b.py`", None, "Create: src/a.py and b.py", ("src/a.py", "b.py")),
        ("**Ownership**: billing", "Ownership", ": billing", ()),
    ],
)
def test_common_lines(text: str, label: str | None, value: str, code: tuple[str, ...]) -> None:
    line = _read_line(text, 0)
    assert line is not None
    assert (line.label, line.value, line.code, line.checkbox) == (label, value, code, False)


def _load(path: Path) -> Any:
    try:
        return load_plan(path).model_dump()
    except PlanError as exc:
        return f"PlanError: {exc}"


def _both_ways(path: Path) -> tuple[Any, Any]:
    fast = _load(path)
    fastpath.ENABLED = False
    try:
        slow = _load(path)
    finally:
        fastpath.ENABLED = True
    return fast, slow


# Blocks the task reader must stop before (or read exactly), each put into a plain task section.
SNIPPETS = (
    "- a\n  continued",
    "- a\ncontinued lazily",
    "- a\n\n  more of a",
    "- a\n\n\tmore of a",
    "- a\n+ b",
    "- a\n\n+ b",
    "* a\n\n* * *",
    "- a\n- - -",
    "- a\n### Notes",
    "- a\n\n1. one",
    "Prose\n===",
    "Prose\n---",
    "Prose\n***",
    "Prose\n#hashtag",
    "Prose\n### Notes ###",
    "Prose\n  indented",
    "Prose\n> quote",
    "Prose\n1. one",
    "Prose\n```python\nx = 1\n```",
    "Prose\n- item",
    "```yaml\ntask_id: 77\ndepends_on: []\n```",
    "   ```yaml\n   task_id: 78\n  ownership: x\n   ```",
    "```yaml\ntask_id: 79\n",
    "~~~\n```\n~~~",
    "```py `x`\ncode\n```",
    "___",
    "_x_ prose",
    "**Tier:** critical",
    "**Estimate:** soon",
    "**Depends on:** Task 1 (first) and Task 2",
    "**Depends on:**\n- Task 1\n- nothing known",
    "**Acceptance criteria:**\n- [ ] works\n- [x] tested `x`",
    "**Step 1: Write it**\n\nSome prose after a step",
    "# Quoted plan\n\n### Task 1: again",
    # Breaks that start like a label or an item, with spaces between their marks.
    "** * *",
    "Prose\n** * *",
    "**Note:** x\n****",
    "- - -",
    "**Files:**\n- Create: `b.py`\n- - -",
    "**Files:**\n- Create: `b.py`\n\n* * *",
    "**Files:**\n- Create: `b.py`\n\n- - - -",
    "**Acceptance criteria:**\n- works\n- - -\n- also",
    "**Acceptance criteria:**\n- works\n\n- - -\n\n- also",
    # Dependency labels written as bullets, reverse and soft ones (test_plan_dependency_labels.py).
    "- **Priority**: high\n- **Depends On**: Task 2\n- **Notes**: x",
    "* Dependencies: Task 2\n* Size: 10MB",
    "- **依赖**：任务2\n- **验收标准**：AC-1",
    "- **Files:**\n  - Create: `n.py`\n- **Tier:** low",
    "**Files:**\n- Create: `m.py`\n- **Depends on:** none",
    "**Blocks:** Task 2",
    "**Requires:** Python 3.11\n**Prerequisites:** Task 2",
    "**Interfaces:**\n- Consumes: `x` (Tasks 1–2)\n- Produces: y",
)


@pytest.mark.parametrize("seed", range(30))
def test_plans_with_odd_blocks_in_task_sections_load_the_same_both_ways(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    parts = realistic_plan(20, seed).split("\n\n")
    for _ in range(4):
        parts.insert(rng.randrange(3, len(parts)), rng.choice(SNIPPETS))
    path = tmp_path / "plan.md"
    path.write_text("\n\n".join(parts), encoding="utf-8")
    fast, slow = _both_ways(path)
    assert fast == slow


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_each_odd_block_loads_the_same_both_ways(tmp_path: Path, snippet: str) -> None:
    text = f"# Plan\n\n### Task 1: One\n\n**Depends on:** none\n\n{snippet}\n\n**Files:**\n- Create: `a.py`\n"
    path = tmp_path / "plan.md"
    path.write_text(text + "\n### Task 2: Two\n\nProse.\n", encoding="utf-8")
    fast, slow = _both_ways(path)
    assert fast == slow


def test_a_realistic_plan_is_read_by_the_task_reader(tmp_path: Path) -> None:
    text = realistic_plan(50)
    blocks = read_blocks(text, text.split("\n"), tasks=True)
    ops = [node for node in blocks.nodes if isinstance(node, TaskOps)]
    assert len(ops) == 50
    assert not [node for node in blocks.nodes if node.type in ("paragraph", "bullet_list", "fence")][1:]


def test_no_task_reading_after_a_title_inside_the_tasks() -> None:
    text = "# Plan\n\n## Task 1: A\n\nProse.\n\n# Sample plan\n\n## Task 1: A again\n\nMore.\n\n## Task 2: B\n\nText.\n"
    blocks = read_blocks(text, text.split("\n"), tasks=True)
    ops = [node for node in blocks.nodes if isinstance(node, TaskOps)]
    assert [node.map for node in ops] == [(3, 6)]


def test_a_quoted_plan_ending_inside_a_section_loads_the_same_both_ways(tmp_path: Path) -> None:
    text = (
        "# Plan\n\n## Task 1: Write a sample\n\ncat > plan.md <<'EOF'\n\n# Sample plan\n\n## Task 1: Sample one\n\n"
        "**Depends on:** none\nEOF\n\nAfter the sample.\n\n## Task 2: B\n\nText.\n"
    )
    path = tmp_path / "plan.md"
    path.write_text(text, encoding="utf-8")
    fast, slow = _both_ways(path)
    assert fast == slow
    assert "After the sample." in fast["tasks"][0]["description"]


def test_a_quoted_plan_under_an_underlined_title_loads_the_same_both_ways(tmp_path: Path) -> None:
    text = (
        "# Plan\n\n## Task 1: Write a sample\n\ncat > plan.md <<'EOF'\n\nSample plan\n===========\n\n"
        "## Task 1: Sample one\n\n**Depends on:** none\nEOF\n\nAfter the sample.\n\n## Task 2: B\n\nText.\n"
    )
    path = tmp_path / "plan.md"
    path.write_text(text, encoding="utf-8")
    fast, slow = _both_ways(path)
    assert fast == slow
    assert "After the sample." in fast["tasks"][0]["description"]
