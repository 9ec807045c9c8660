"""The plan reader's shortcuts change nothing: every plan of the corpus loads to the same Plan (or the same
error, file:line included) with them as through the slow path (`fastpath.ENABLED` off: markdown-it for
every section, no shortcut taken).

The corpus: the fixture plans (real public plans, forms, folders, malformed ones), the sample, the
benchmark's generated plans for several sizes and seeds, and the same plans with lines changed at random
into markdown the fast reader leaves to markdown-it (so that both readers meet in one plan).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

import pytest

from pm_agent.errors import PlanError
from pm_agent.plan import fastpath, load_plan

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from bench_plan import realistic_plan  # noqa: E402

FIXTURES = ROOT / "tests" / "plan" / "fixtures"
# Lines the fast reader does not take (emphasis, links, HTML, tabs, tables, quotes, indented code,
# entities, setext underlines) or takes only in some places; each replaces or joins a plan line.
ODD_LINES = (
    "Some *emphasis* here",
    "A [link](https://example.org) in prose",
    "<!-- a comment -->",
    "\tindented with a tab",
    "| a | b |",
    "> a quote",
    "    indented code",
    "Fish &amp; chips",
    "===",
    "- item",
    "  continued item text",
    "1. numbered",
    "**Depends on:** Task 1 and _Task 2_",
    "**Files:**",
    "- Modify: `src/a.py:3-9` (and `x`)",
    "- [x] done `a.py`",
    "```",
    "~~~python",
    "---",
    "### Notes",
    "## Task 9999: a late task",
    "",
)


def _corpus_files() -> list[Path]:
    plans = [p for p in sorted(FIXTURES.rglob("*.md")) if "folders" not in p.parts]
    folders = sorted(p for p in (FIXTURES / "folders").iterdir() if p.is_dir())
    return [*plans, *sorted(FIXTURES.rglob("*.txt")), *folders, ROOT / "examples" / "sample" / "plan.md"]


def _mutated(text: str, seed: int) -> str:
    rng = random.Random(seed)
    lines = text.split("\n")
    for _ in range(max(1, len(lines) // 15)):
        at = rng.randrange(len(lines))
        if rng.random() < 0.5:
            lines[at] = rng.choice(ODD_LINES)
        else:
            lines.insert(at, rng.choice(ODD_LINES))
    return "\n".join(lines)


def _load(path: Path, design: Path | None = None) -> Any:
    """The Plan's full dump, or the error's message (with its file:line)."""
    try:
        return load_plan(path, design).model_dump()
    except PlanError as exc:
        return f"PlanError: {exc}"


def _both_ways(path: Path, design: Path | None = None) -> tuple[Any, Any]:
    fast = _load(path, design)
    fastpath.ENABLED = False
    try:
        slow = _load(path, design)
    finally:
        fastpath.ENABLED = True
    return fast, slow


@pytest.mark.parametrize("path", _corpus_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_corpus_plans_load_the_same_both_ways(path: Path) -> None:
    fast, slow = _both_ways(path)
    assert fast == slow


def test_the_sample_with_its_design_loads_the_same_both_ways() -> None:
    sample = ROOT / "examples" / "sample"
    fast, slow = _both_ways(sample / "plan.md", sample / "design.md")
    assert not isinstance(fast, str)
    assert fast == slow


@pytest.mark.parametrize(("size", "seed"), [(1, 1), (2, 2), (10, 3), (60, 11), (200, 5), (400, 7)])
def test_generated_plans_load_the_same_both_ways(tmp_path: Path, size: int, seed: int) -> None:
    path = tmp_path / "plan.md"
    path.write_text(realistic_plan(size, seed), encoding="utf-8")
    fast, slow = _both_ways(path)
    assert not isinstance(fast, str), fast
    assert len(fast["tasks"]) == size
    assert fast == slow


@pytest.mark.parametrize("seed", range(40))
def test_mutated_plans_load_the_same_both_ways(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "plan.md"
    path.write_text(_mutated(realistic_plan(30 + seed, seed), seed), encoding="utf-8")
    fast, slow = _both_ways(path)
    assert fast == slow


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.md")), ids=lambda p: p.name)
def test_mutated_fixture_plans_load_the_same_both_ways(tmp_path: Path, path: Path) -> None:
    for seed in range(3):
        mutated = tmp_path / f"{seed}-{path.name}"
        mutated.write_text(_mutated(path.read_text(encoding="utf-8"), seed), encoding="utf-8")
        fast, slow = _both_ways(mutated)
        assert fast == slow, (path.name, seed)


def test_the_reference_check_finds_what_the_whole_text_search_finds() -> None:
    # sections._has_reference tries the pattern only at the starts of lines holding a `[`.
    from pm_agent.plan.sections import _REFERENCE, _has_reference

    rng = random.Random(1)
    bits = ["[a]: x", "[a", "]", "[", "- [x]: y", " > [q]:", "1. [r", "\n", "\n", "text [a] b", "  - * [a]:", "\t[x]:"]
    found = 0
    for _ in range(5000):
        text = "".join(rng.choice(bits) for _ in range(rng.randint(1, 12)))
        assert _has_reference(text) == (_REFERENCE.search(text) is not None), text
        found += _has_reference(text)
    assert 500 < found < 4500  # both answers were met often


@pytest.mark.parametrize(
    "value",
    ["Task 12", " Task 7 ", "Task 007", "Task 1.", "Task 12a", "task 3", "Task  4", "Task 5\n", "Task 0", "Task 1, 2"],
)
def test_a_plain_reference_reads_the_same_both_ways(value: str) -> None:
    from pm_agent.plan.refs import read_refs

    fast = read_refs(value)
    fastpath.ENABLED = False
    try:
        assert read_refs(value) == fast
    finally:
        fastpath.ENABLED = True


@pytest.mark.parametrize("path", [*sorted(FIXTURES.glob("*.md")), ROOT / "examples" / "sample" / "plan.md"])
def test_tasks_have_the_same_fields_set_both_ways(path: Path) -> None:
    # The loader updates the tasks it read in place of copying them (loader._updated): the fields set, which
    # model_dump(exclude_unset=True) reads, are the copy's too.
    def fields_set(plan: Any) -> list[tuple[dict[str, Any], set[str]]]:
        return [(task.model_dump(exclude_unset=True), task.model_fields_set) for task in plan.tasks]

    try:
        fast = fields_set(load_plan(path))
    except PlanError:
        return
    fastpath.ENABLED = False
    try:
        slow = fields_set(load_plan(path))
    finally:
        fastpath.ENABLED = True
    assert fast == slow
