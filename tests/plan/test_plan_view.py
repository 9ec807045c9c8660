"""`pm-agent plan` as users run it: inferred edges with their reasons, notes, task files, and the warnings."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"


def pm(*args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("pm-agent", path=str(Path(sys.executable).parent))
    assert exe is not None
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=120, check=False)


def test_plan_shows_inferred_edges_notes_and_warnings(tmp_path: Path) -> None:
    plan = FIXTURES / "2026-04-02-recipe-import.md"
    result = pm("plan", str(plan), "-C", str(tmp_path))
    assert result.returncode == 0, result.stderr
    out = " ".join(result.stdout.split())  # rich wraps long lines
    assert "depends on: task-1 (GREEN and committed)" in out
    assert "depends on: none (declared; nothing inferred)" in out
    assert (
        "depends on (inferred): task-4: modifies src/cookbook/cli.py, which Task 4 modifies earlier in the plan"
    ) in out
    assert (
        "depends on (inferred): task-1, task-2, task-3, task-4, task-5: verification task ('Final verification') "
        "runs after every earlier task"
    ) in out
    assert "Warnings (4):" in out
    assert f"{plan}:86: 'Modify: any file the review turns up (expected: none)' in the Files list" in out
    assert f"{plan}:35: 'Depends on' read as Task 1" in out


def test_plan_of_a_folder_names_each_tasks_file_and_lists_warnings_in_json(tmp_path: Path) -> None:
    folder = FIXTURES / "folders" / "ccpm-offline-mode"
    text = pm("plan", str(folder), "-C", str(tmp_path))
    assert text.returncode == 0, text.stderr
    assert "file: 44.md:10" in text.stdout
    data = json.loads(pm("plan", str(folder), "--json", "-C", str(tmp_path)).stdout)
    assert data["plan_id"] == "ccpm-offline-mode"
    assert data["queue"] == ["task-41", "task-42", "task-43", "task-004", "task-45"]
    assert len(data["warnings"]) == 6  # 44.md's `## Dependencies` items: their prose kept as notes
    assert data["warnings"][0].startswith(f"{folder / '43.md'}:1: front matter is not valid YAML")
    banner = next(t for t in data["tasks"] if t["id"] == "004")
    assert banner["source"] == str(folder / "44.md")
    assert not (tmp_path / ".pm-agent").exists()
