"""Findings parsers and the ratchet, every field of every finding pinned on the captured outputs.

The older tests check a finding's place and code; a parser that dropped a message, a column of its key or
its tool name, or a ratchet that miscounted, went unnoticed (mutmut's survivors, make mutation). Here each
fixture's whole parse, and each base/new/shift comparison, is held against tests/gates/fixtures/
findings-golden.json, reviewed by hand when written. After a deliberate change to a parser, rewrite it with

    .venv/bin/python tests/gates/test_findings_mutants.py

and review the diff: every changed line is a changed verdict of a gate.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from pm_agent.gates.findings import FindingSet, parse_findings, ratchet, render_findings

FIXTURES = Path(__file__).parent / "fixtures" / "findings"
GOLDEN = Path(__file__).parent / "fixtures" / "findings-golden.json"


def _load(name: str) -> tuple[dict[str, str], str]:
    lines = (FIXTURES / f"{name}.txt").read_text(encoding="utf-8").split("\n")
    meta: dict[str, str] = {}
    while lines and lines[0].startswith("#@ "):
        key, _, value = lines.pop(0)[3:].partition(": ")
        meta[key] = value
    return meta, "\n".join(lines)


def _set(fs: FindingSet) -> dict[str, Any]:
    return {
        "parser": fs.parser,
        "total": fs.total,
        "truncated": fs.truncated,
        "note": fs.note,
        "findings": [[f.tool, f.path, f.line, f.code, f.message, f.test_id, f.key] for f in fs.findings],
    }


def parse_snapshot(name: str) -> dict[str, Any]:
    """A fixture parsed with its root (paths relative) and without (paths as printed)."""
    meta, output = _load(name)
    exit_code = int(meta["exit"])
    return {
        "with_root": _set(parse_findings(meta["command"], output, exit_code, root=meta["root"])),
        "without_root": _set(parse_findings(meta["command"], output, exit_code)),
    }


def _pairs() -> list[tuple[str, str]]:
    names = {p.stem for p in FIXTURES.glob("*.txt")}
    return [
        (base, base[: -len("base")] + kind)
        for base in sorted(n for n in names if n.endswith("-base"))
        for kind in ("new", "shift")
        if base[: -len("base")] + kind in names
    ]


def ratchet_snapshot(baseline: str, current: str) -> dict[str, Any]:
    """The ratchet from one captured run to the next, both relativised to the directory each ran in."""
    base_meta, base_out = _load(baseline)
    cur_meta, cur_out = _load(current)
    result = ratchet(
        cur_meta["command"],
        base_out,
        int(base_meta["exit"]),
        cur_out,
        int(cur_meta["exit"]),
        root=cur_meta["root"],
        baseline_root=base_meta["root"],
    )
    return {
        "passed": result.passed,
        "rule": result.rule,
        "parser": result.parser,
        "explanation": result.explanation,
        "counts": [result.new_count, result.preexisting_count, result.fixed_count],
        "new": render_findings(result.new),
        "fixed": [f.key for f in result.fixed],
        "preexisting": [f.key for f in result.preexisting],
    }


def snapshot() -> dict[str, Any]:
    return {
        "parses": {p.stem: parse_snapshot(p.stem) for p in sorted(FIXTURES.glob("*.txt"))},
        "ratchets": {f"{b} -> {c}": ratchet_snapshot(b, c) for b, c in _pairs()},
    }


GOLDEN_DATA: dict[str, Any] = json.loads(GOLDEN.read_text(encoding="utf-8")) if GOLDEN.exists() else {}


def test_the_golden_file_covers_every_fixture_and_pair() -> None:
    assert sorted(GOLDEN_DATA["parses"]) == sorted(p.stem for p in FIXTURES.glob("*.txt"))
    assert sorted(GOLDEN_DATA["ratchets"]) == sorted(f"{b} -> {c}" for b, c in _pairs())
    assert len(GOLDEN_DATA["ratchets"]) >= 20


@pytest.mark.parametrize("name", sorted(p.stem for p in FIXTURES.glob("*.txt")))
def test_every_field_of_every_finding(name: str) -> None:
    assert parse_snapshot(name) == GOLDEN_DATA["parses"][name]


@pytest.mark.parametrize(("baseline", "current"), _pairs())
def test_every_ratchet_between_captured_runs(baseline: str, current: str) -> None:
    assert ratchet_snapshot(baseline, current) == GOLDEN_DATA["ratchets"][f"{baseline} -> {current}"]


def _dump(value: Any, depth: int = 0) -> str:
    """JSON with one line per finding (a list of scalars), so a changed verdict is a one-line diff."""
    pad = " " * depth
    if isinstance(value, dict) and value:
        items = [f"{pad} {json.dumps(k, ensure_ascii=False)}: {_dump(v, depth + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(value, list) and value and not all(not isinstance(v, (dict, list)) for v in value):
        return "[\n" + ",\n".join(f"{pad} {_dump(v, depth + 1)}" for v in value) + f"\n{pad}]"
    return json.dumps(value, ensure_ascii=False)


if __name__ == "__main__":
    GOLDEN.write_text(_dump(snapshot()) + "\n", encoding="utf-8")
    print(f"wrote {GOLDEN}", file=sys.stderr)
