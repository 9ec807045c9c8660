"""Every plan in the repository parses exactly as recorded: the full `Plan.model_dump()` against a snapshot.

The snapshots in tests/plan/snapshots/ were written from the parser as it was before the section
splitter (issue 11); any change to what a plan yields shows up here as a diff. After a deliberate
change, rewrite them with `.venv/bin/python tests/plan/test_plan_snapshots.py` and say why in the commit.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from pm_agent.demo.project import render_plan
from pm_agent.errors import PlanError
from pm_agent.plan import load_plan

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path("tests/plan/fixtures")
SNAPSHOTS = ROOT / "tests" / "plan" / "snapshots"
TMP = "<tmp>"


def cases() -> dict[str, tuple[Path, Path | None]]:
    """Snapshot name -> (plan file or folder relative to the repository root, design doc or None)."""
    found: dict[str, tuple[Path, Path | None]] = {}
    for path in sorted((ROOT / FIXTURES).rglob("*")):
        relative = path.relative_to(ROOT)
        if "folders" in relative.parts or path.suffix not in (".md", ".txt"):
            continue
        found[str(relative.relative_to(FIXTURES))] = (relative, None)
    for folder in sorted((ROOT / FIXTURES / "folders").iterdir()):
        relative = folder.relative_to(ROOT)
        found[str(relative.relative_to(FIXTURES))] = (relative, None)
    found["examples/sample"] = (Path("examples/sample/plan.md"), Path("examples/sample/design.md"))
    found["demo"] = (Path(TMP) / "demo-plan.md", None)
    return found


def _snapshot_path(name: str) -> Path:
    return SNAPSHOTS / (name.replace("/", "__") + ".json")


def _dump(plan_path: Path, design: Path | None, tmp: Path) -> dict[str, Any]:
    """What load_plan makes of the plan (or the PlanError it raises), with the temporary folder masked."""
    if plan_path.parts[0] == TMP:
        plan_path = tmp / plan_path.name
        plan_path.write_text(render_plan(), encoding="utf-8")
    try:
        data: dict[str, Any] = {"plan": load_plan(plan_path, design).model_dump(mode="json")}
    except PlanError as exc:
        data = {"error": str(exc)}
    return json.loads(json.dumps(data).replace(str(tmp), TMP))


@pytest.fixture
def at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # plan paths in the snapshots are relative to the repository root


@pytest.mark.parametrize("name", sorted(cases()))
def test_plan_matches_snapshot(name: str, at_root: None, tmp_path: Path) -> None:
    plan_path, design = cases()[name]
    expected = json.loads(_snapshot_path(name).read_text(encoding="utf-8"))
    assert _dump(plan_path, design, tmp_path) == expected


def test_every_snapshot_has_its_plan() -> None:
    names = {_snapshot_path(name).name for name in cases()}
    assert {p.name for p in SNAPSHOTS.glob("*.json")} == names
    assert len(names) >= 20


def _write_all() -> None:
    os.chdir(ROOT)
    SNAPSHOTS.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, (plan_path, design) in cases().items():
            data = _dump(plan_path, design, Path(tmp))
            _snapshot_path(name).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            print(f"wrote {_snapshot_path(name).relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    _write_all()
