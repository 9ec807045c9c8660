"""`pm-agent status` and `log` as users run them (real subprocesses): what they print, and that they write nothing."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pm_agent.cli.fastpath import parse
from pm_agent.reports.progress_data import progress_text
from pm_agent.reports.status import render_task_log
from pm_agent.store import SqliteStore

Reopen = Callable[[Path], SqliteStore]


def pm(*args: str, cwd: Path | None = None, module: bool = False) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("pm-agent", path=str(Path(sys.executable).parent))
    assert exe is not None
    command = [sys.executable, "-m", "pm_agent", *args] if module else [exe, *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=120, check=False)


def _snapshot(db: Path) -> dict[str, Any]:
    """The state folder: each file (the database and -wal with their bytes, -shm only that it is there)."""
    return {p.name: None if p.name.endswith("-shm") else p.read_bytes() for p in sorted(db.parent.iterdir())}


READS = [
    ["status"],
    ["status", "--all"],
    ["status", "--json"],
    ["log", "1"],
    ["log", "task-5", "--run", "run-x"],
    ["reports"],
    ["reports", "--kind", "handoff"],
]


@pytest.mark.parametrize("live", [False, True], ids=["closed", "held-open-by-a-run"])
def test_read_commands_write_nothing(busy: Any, reopen: Reopen, live: bool) -> None:
    holder = reopen(busy.db) if live else None  # a run that has the file open: its -wal and -shm exist
    try:
        before = _snapshot(busy.db)
        assert ("state.db-wal" in before) is live
        for args in READS:
            done = pm(*args, "-C", str(busy.repo))
            assert done.returncode == 0, (args, done.stderr)
            assert _snapshot(busy.db) == before, args
        with reopen(busy.db) as store:
            assert [r.text for r in store.list_reports(busy.run_id)] == ["PROGRESS — demo"]  # none added
    finally:
        if holder is not None:
            holder.close()


def test_reports_prints_the_stored_reports_as_stored(busy: Any) -> None:
    done = pm("reports", "-C", str(busy.repo))
    assert done.returncode == 0, done.stderr
    header, text = done.stdout.splitlines()[:2]
    assert header.startswith("--- progress at 20")
    assert len(header) == len("--- progress at 2026-01-01 00:00:00")
    assert text == "PROGRESS — demo"
    assert pm("reports", "--kind", "handoff", "-C", str(busy.repo)).stdout == ""


def test_status_shows_the_summary_and_the_unfinished_tasks(busy: Any, reopen: Reopen) -> None:
    done = pm("status", cwd=busy.repo)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "Run run-x  plan demo  [running]" in text
    assert "Completed 1/6 tasks (2 pending, 1 in_progress, 1 completed, 1 failed, 1 escalated)" in text
    assert "By state: 2 received, 1 completed, 1 failed, 1 implementing, 1 waiting_for_human_input" in text
    assert "Unfinished tasks: 5 (1 completed not shown: --all)" in text
    rows = [line.split()[0] for line in text.splitlines() if line[:1].isdigit()]
    assert rows == ["2", "3", "4", "5", "6"]
    assert "Open escalations (2):" in text
    assert "Which port?" in text
    assert "run-wide" in text
    assert "Cost so far: $0.6875 over 3 sessions (1037 in / 104 out tokens); 1 live; 2 open risks" in text
    assert text.rstrip().endswith(progress_text(busy.db, busy.run_id, "demo"))  # "[normal] looking" intact
    every = pm("status", "--all", cwd=busy.repo).stdout
    assert [line.split()[0] for line in every.splitlines() if line[:1].isdigit()] == ["1", "2", "3", "4", "5", "6"]


def test_status_json_keeps_its_keys_and_every_task(busy: Any, reopen: Reopen) -> None:
    data = json.loads(pm("status", "--json", "-C", str(busy.repo)).stdout)
    assert list(data) == [
        "run", "runs", "tasks", "by_status", "by_state", "counts", "open_escalations", "cost", "open_risks",
        "progress_report", "live",
    ]  # fmt: skip
    assert [t["task_id"] for t in data["tasks"]] == ["1", "2", "3", "4", "5", "6"]
    assert data["live"] is None
    with reopen(busy.db) as store:
        assert data["run"] == store.get_run(busy.run_id).model_dump(mode="json")
        assert data["progress_report"] == progress_text(busy.db, busy.run_id, "demo")
    old = json.loads(pm("status", data["runs"][1]["id"], "--json", "-C", str(busy.repo)).stdout)
    assert old["run"]["plan_id"] == "old"
    assert [t["task_id"] for t in old["tasks"]] == ["1", "2"]


def test_log_prints_the_stores_history(busy: Any, reopen: Reopen) -> None:
    done = pm("log", "task-1", "-C", str(busy.repo))
    assert done.returncode == 0, done.stderr
    with reopen(busy.db) as store:
        assert done.stdout == render_task_log(store.task_history(busy.run_id, "1")) + "\n"
    assert "text=[bold]not markup[/]" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [(["log", "9"], "unknown task '9' in run 'run-x'"), (["log", "1", "--run", "ghost"], "unknown run 'ghost'"),
     (["status", "ghost"], "unknown run 'ghost'")],
)  # fmt: skip
def test_unknown_ids_exit_2_naming_them(busy: Any, args: list[str], message: str) -> None:
    done = pm(*args, "-C", str(busy.repo))
    assert done.returncode == 2
    assert message in done.stderr


@pytest.mark.parametrize(
    ("args", "code"),
    [(["status", "--json", "--repo", "{repo}"], 0), (["status", "run-x", "--all", "-C", "{repo}"], 0),
     (["log", "2", "-C", "{repo}"], 0), (["log", "9", "-C", "{repo}"], 2), (["status", "ghost", "-C", "{repo}"], 2)],
)  # fmt: skip
def test_the_fast_path_prints_what_the_typer_app_prints(busy: Any, args: list[str], code: int) -> None:
    plain = [a.format(repo=busy.repo) for a in args]
    via_typer = [*plain, "--"]  # an end of options, which Typer takes and the fast path leaves to it
    assert parse(plain) is not None
    assert parse(via_typer) is None
    fast, slow = pm(*plain), pm(*via_typer)
    assert fast.returncode == slow.returncode == code, slow.stderr
    assert (fast.stdout, fast.stderr) == (slow.stdout, slow.stderr)


def test_the_fast_path_takes_only_plain_command_lines() -> None:
    repo = Path("r")
    assert parse(["status"]) == ("status", [], {})
    assert parse(["status", "r1", "--json", "--all", "-C", "r"]) == (
        "status", ["r1"], {"as_json": True, "all_tasks": True, "repo": repo},
    )  # fmt: skip
    assert parse(["status", "--repo=r"]) == ("status", [], {"repo": repo})
    assert parse(["log", "3", "--run", "x", "--repo", "r"]) == ("log", ["3"], {"run": "x", "repo": repo})
    for other in (
        [], ["run", "plan.md"], ["status", "--help"], ["status", "-h"], ["status", "a", "b"], ["status", "--bogus"],
        ["status", "--json", "--json"], ["status", "-C"], ["status", "-C", "--json"], ["status", "-C=r"],
        ["status", "--json=1"], ["log"], ["log", "1", "2"], ["log", "1", "--run"], ["log", "1", "--all"],
        ["status", "--"], ["status", ""],
    ):  # fmt: skip
        assert parse(other) is None, other


def test_the_fast_path_knows_exactly_the_options_typer_declares() -> None:
    import typer.main

    from pm_agent.cli.commands import app
    from pm_agent.cli.fastpath import _COMMANDS

    group = typer.main.get_command(app)
    for name, (values, flags, (least, most)) in _COMMANDS.items():
        command = group.commands[name]  # type: ignore[attr-defined]
        options = [p for p in command.params if p.param_type_name == "option" and p.name != "help"]
        assert {opt for p in options for opt in p.opts} == set(values) | set(flags), name
        assert {opt for p in options if p.is_flag for opt in p.opts} == set(flags), name
        arguments = [p for p in command.params if p.param_type_name == "argument"]
        assert len(arguments) == most, name
        assert sum(1 for p in arguments if p.required) == least, name
