"""The task contract in a prompt is written by libyaml's emitter when PyYAML has it: it must read back as the
contract as PyYAML's own emitter's text does. (The two texts differ only in where a long double-quoted string
is folded: PyYAML escapes its line breaks with a backslash, libyaml folds at a space; and libyaml keeps a NEL
or LS character that PyYAML's emitter turns into a line break.)

Checked on every task of the real agent-written plans kept as fixtures and on 3,000 generated contracts whose
strings hold what YAML must quote or fold: colons, quotes, leading dashes and spaces, keywords, numbers,
unicode, control characters, line breaks, and lines past the width.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from pm_agent.engine.prompt_builder import render_contract
from pm_agent.plan import load_plan

FIXTURES = Path(__file__).resolve().parents[1] / "plan" / "fixtures"
PIECES = [
    "a",
    "word",
    " ",
    "  ",
    ": ",
    ":",
    "- ",
    "#",
    " #",
    "'",
    '"',
    "\\",
    "\n",
    "\n\n",
    "\t",
    "yes",
    "no",
    "null",
    "~",
    "1.0",
    "0x1f",
    "1e3",
    "@",
    "`",
    "!",
    "&",
    "*",
    "|",
    ">",
    "%",
    "{",
    "}",
    "[",
    "]",
    ",",
    "?",
    "é",
    "中文",
    "😀",
    "\u00a0",
    "\u2028",
    "\x07",
    "\x85",
    "x" * 120,
    "src/app/login.py:12",
    "ruff check .",
    "---",
    "...",
]
needs_libyaml = pytest.mark.skipif(not hasattr(yaml, "CSafeDumper"), reason="PyYAML built without libyaml")


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 12)))


def _value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.random()
    if depth < 3 and kind < 0.2:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    if depth < 3 and kind < 0.35:
        return {_text(rng) or "k": _value(rng, depth + 1) for _ in range(rng.randint(0, 4))}
    if kind < 0.45:
        return rng.choice([None, True, False, rng.randint(-5, 10**6), 0.5])
    return _text(rng)


def _same(contract: dict[str, Any]) -> None:
    ours, theirs = render_contract(contract, yaml.CSafeDumper), render_contract(contract, yaml.SafeDumper)
    assert ours.startswith("task_contract:\n")
    assert yaml.safe_load(ours) == {"task_contract": contract}
    if not any(c in theirs for c in "\x85\u2028"):  # PyYAML's own emitter writes these as line breaks
        assert yaml.safe_load(theirs) == {"task_contract": contract}


@needs_libyaml
@pytest.mark.parametrize("plan", sorted(FIXTURES.glob("2026-*.md")), ids=lambda p: p.stem)
def test_every_task_of_real_plans_reads_back_the_same(plan: Path) -> None:
    tasks = load_plan(plan).tasks
    assert tasks
    for task in tasks:
        _same({"task_id": task.id, **task.model_dump(mode="json")})


@needs_libyaml
def test_generated_contracts_read_back_the_same() -> None:
    rng = random.Random(20261127)
    for _ in range(3000):
        _same({"task_id": _text(rng), "steps": [_text(rng) for _ in range(3)], "context": _value(rng)})
