"""The benchmark harness: its table, its README section and its latency accounting (bench_loop)."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
# bench/ is not a package: its modules import each other by plain name
from bench_loop import latencies
from common import figure, goal_ge, goal_le, markdown, table, update_readme

WHERE: dict[str, object] = {
    "date": "2026-11-26 10:00 UTC",
    "commit": "abc1234",
    "cpus": 2,
    "cpu": "Test CPU",
    "system": "Linux 6",
    "python": "3.11.7",
}


def test_goals_say_whether_they_are_met() -> None:
    assert goal_le(100.0, 100) == ("<= 100", True)
    assert goal_le(100.5, 100) == ("<= 100", False)
    assert goal_ge(2.5, 2.5) == (">= 2.5", True)
    assert goal_ge(2.49, 2.5) == (">= 2.5", False)


def test_table_and_markdown_show_each_goal_beside_its_figure() -> None:
    figures = [
        figure("plan parsing", "1000 tasks", "ms", 52.25, goal_le(52.25, 100)),
        figure("plan parsing", "10000 tasks", "ms", 1200.0, goal_le(1200.0, 1000)),
        figure("loop", "20 tasks", "children CPU ms/task", 3.5),
    ]
    lines = table(figures).splitlines()
    assert lines[0].split() == ["benchmark", "case", "figure", "value", "goal", "met"]
    assert lines[2].split()[-4:] == ["52.25", "<=", "100", "yes"]
    assert lines[3].split()[-4:] == ["1,200", "<=", "1000", "NO"]
    assert lines[4].split()[-1] == "3.5"
    md = markdown(figures, WHERE).splitlines()
    assert md[0] == "Measured 2026-11-26 10:00 UTC at commit abc1234 on 2 x Test CPU, Linux 6, Python 3.11.7."
    assert md[4] == "| plan parsing | 1000 tasks | ms | 52.25 | <= 100 | yes |"
    assert md[5] == "| plan parsing | 10000 tasks | ms | 1,200 | <= 1000 | **no** |"
    assert md[6] == "| loop | 20 tasks | children CPU ms/task | 3.5 |  |  |"


def test_update_readme_replaces_only_the_marked_section(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# x\n\nbefore\n<!-- bench:start -->\nold\n<!-- bench:end -->\nafter\n", encoding="utf-8")
    assert update_readme(readme, "new table")
    assert readme.read_text(encoding="utf-8") == (
        "# x\n\nbefore\n<!-- bench:start -->\nnew table\n<!-- bench:end -->\nafter\n"
    )
    plain = tmp_path / "PLAIN.md"
    plain.write_text("# no markers\n", encoding="utf-8")
    assert not update_readme(plain, "new table")
    assert plain.read_text(encoding="utf-8") == "# no markers\n"


def _db(
    path: Path,
    dispatched: dict[str, str],
    committed: list[str],
    signalled: dict[str, str],
    ended: dict[str, str],
    sessions: dict[str, list[str]] | None = None,
) -> Path:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE events (task_id TEXT, kind TEXT, created_at TEXT)")
    con.execute("CREATE TABLE commits (id INTEGER PRIMARY KEY, task_id TEXT, created_at TEXT)")
    con.execute("CREATE TABLE signals (task_id TEXT, kind TEXT, accepted BOOLEAN, created_at TEXT)")
    con.execute("CREATE TABLE sessions (task_id TEXT, ended_at TEXT)")
    for task, at in dispatched.items():
        con.execute("INSERT INTO events VALUES (?, 'slot.dispatched', ?)", (task, at))
        con.execute("INSERT INTO events VALUES (?, 'task.transition', '2026-01-01T00:09:00+00:00')", (task,))
    for i, task in enumerate(committed):
        con.execute("INSERT INTO commits VALUES (?, ?, ?)", (i + 1, task, f"2026-01-01T00:05:0{i}+00:00"))
    for task, at in signalled.items():
        con.execute("INSERT INTO signals VALUES (?, 'complete', 1, ?)", (task, at))
        con.execute("INSERT INTO signals VALUES (?, 'needs-user-input', 1, '2026-01-01T00:08:00+00:00')", (task,))
    for task, at in ended.items():
        con.execute("INSERT INTO sessions VALUES (?, ?)", (task, at))
    for task, times in (sessions or {}).items():
        for at in times:
            con.execute("INSERT INTO events VALUES (?, 'session.created', ?)", (task, at))
    con.commit()
    con.close()
    return path


def test_latency_runs_from_a_signal_to_the_dispatch_that_refills_its_slot(tmp_path: Path) -> None:
    """Two slots, four tasks: the first task to commit frees the slot of the third dispatch, and so on."""
    t = "2026-01-01T00:0{}:{:02d}+00:00".format
    db = _db(
        tmp_path / "state.db",
        dispatched={"1": t(0, 0), "2": t(0, 0), "3": t(1, 10), "4": t(2, 0)},
        committed=["2", "1", "3", "4"],
        signalled={"1": t(1, 30), "2": t(1, 0), "3": t(3, 0), "4": t(3, 0)},
        ended={"1": t(1, 31), "2": t(1, 4), "3": t(3, 1), "4": t(3, 1)},
        sessions={"3": [t(1, 12), t(2, 50)], "4": [t(2, 5)]},  # task 3's first session counts, not its fixer's
    )
    raw, own, started = latencies(db, slots=2)
    assert raw == [10.0, 30.0]  # task 2 (signal 1:00) -> dispatch 3 (1:10); task 1 (1:30) -> dispatch 4 (2:00)
    assert own == [6.0, 29.0]  # less the agent's time after its signal (4 s and 1 s)
    assert started == [8.0, 34.0]  # to the next task's first session (1:12, 2:05), less the same
