"""The plan reader walks a section's nodes as they are read (sections.iter_blocks): every plan loads to
the same Plan (or the same error) as when the reader is handed the whole plan's nodes at once."""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from pm_agent.errors import PlanError
from pm_agent.plan import load_plan, parser
from pm_agent.plan.markdown import Node
from pm_agent.plan.sections import Blocks, read_blocks

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from bench_plan import realistic_plan  # noqa: E402

FIXTURES = ROOT / "tests" / "plan" / "fixtures"
# Plans quoted in tasks (a top-level title, then task headings whose numbering restarts), heredocs,
# titles that quote nothing, and odd blocks that send sections to markdown-it.
PIECES = (
    "# Sample plan",
    "# Notes",
    "## Task 1: Sample one",
    "## Task 2: Sample two",
    "### Task 3: Sample three",
    "cat > plan.md <<'EOF'",
    "EOF",
    "**Depends on:** none",
    "**Depends on:** Task 2",
    "Some *emphasis* here",
    "```",
    "===",
    "",
)


def _whole(text: str, lines: Sequence[str], blocks: Blocks, *, tasks: bool = False) -> Iterator[Sequence[Node]]:
    """The nodes of the whole plan at once, as the reader was given them before it took them by section."""
    read = read_blocks(text, lines, tasks=tasks)
    blocks.sections, blocks.fast, blocks.whole = read.sections, read.fast, read.whole
    yield read.nodes


def _load(path: Path) -> Any:
    try:
        return load_plan(path).model_dump()
    except PlanError as exc:
        return f"PlanError: {exc}"


def _both_ways(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    by_section = _load(path)
    with monkeypatch.context() as patch:
        patch.setattr(parser, "iter_blocks", _whole)
        whole = _load(path)
    return by_section, whole


def _with_quotes(text: str, seed: int) -> str:
    rng = random.Random(seed)
    lines = text.split("\n")
    for _ in range(max(1, len(lines) // 12)):
        at = rng.randrange(len(lines))
        lines[at:at] = [rng.choice(PIECES) for _ in range(rng.randint(1, 4))]
    return "\n".join(lines)


@pytest.mark.parametrize("path", sorted(FIXTURES.rglob("*.md")), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_plans_load_the_same_by_section(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    by_section, whole = _both_ways(path, monkeypatch)
    assert by_section == whole


@pytest.mark.parametrize("seed", range(30))
def test_plans_with_quoted_plans_load_the_same_by_section(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    path = tmp_path / "plan.md"
    path.write_text(_with_quotes(realistic_plan(20 + seed, seed), seed), encoding="utf-8")
    by_section, whole = _both_ways(path, monkeypatch)
    assert by_section == whole


def test_two_quoted_plans_in_one_plan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = (
        "# Plan\n\n## Task 1: Write a sample\n\n# Sample plan\n\n## Task 1: Sample one\n\ntext\n\n"
        "## Task 2: B\n\n# Another sample\n\n## Task 2: Sample again\n\n## Task 3: C\n\nText.\n"
    )
    path = tmp_path / "plan.md"
    path.write_text(text, encoding="utf-8")
    by_section, whole = _both_ways(path, monkeypatch)
    assert by_section == whole
    assert [t["id"] for t in by_section["tasks"]] == ["1", "2", "3"]
