"""Benchmark 4 of issue 11: `pm-agent status` and `log` on a run of 1,000 tasks and 100,000 events.

A synthetic run (status_run.py: written by the store's own write functions) in a temporary git repository, then the
installed CLI as a subprocess, as a user runs it: `status`, `status --all`, `status --json`, `log <the task with the
most events>`, five times each, from a small driver interpreter. Each run's wall time and its own peak RSS and CPU
come from `os.wait4` (that child's rusage, not the maximum over every child so far). Figures per command: median
wall ms (goal <= 300), the highest peak RSS MB (goal <= 150), and median CPU ms beside them (on a shared machine,
wall time also counts the waiting for a core: a bare interpreter's start and the load average are printed as the
reference).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from common import Figure, figure, goal_le
from status_run import build_run

from pm_agent.testing.repo import init_repo

BENCH = "status/log"
TASKS = 1000
EVENTS = 100_000
REPEAT = 5


def _pm_agent() -> str:
    """The console script next to this interpreter (the venv's), else the one on PATH."""
    here = Path(sys.executable).parent / "pm-agent"
    return str(here) if here.exists() else "pm-agent"


# Runs `args` REPEAT times from a small interpreter and prints one JSON line per run. Linux keeps a process's peak
# RSS across fork and exec, so a child of this benchmark (which built the run: ~170 MB) would report at least that.
_DRIVER = """
import json, os, subprocess, sys, time
cwd, repeat, args = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
for _ in range(repeat):
    start = time.perf_counter()
    child = subprocess.Popen(args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    errors = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    wall = (time.perf_counter() - start) * 1000
    code = os.waitstatus_to_exitcode(status)
    cpu = (usage.ru_utime + usage.ru_stime) * 1000
    print(json.dumps([code, wall, cpu, usage.ru_maxrss / 1024, errors.decode(errors="replace")]), flush=True)
"""


def measure(args: list[str], cwd: Path, repeat: int = REPEAT) -> list[tuple[float, float, float]]:
    """(wall ms, CPU ms, peak RSS MB) of each of `repeat` runs of `args` (output dropped); a failure raises."""
    done = subprocess.run(
        [sys.executable, "-c", _DRIVER, str(cwd), str(repeat), *args],
        capture_output=True, text=True, check=True, timeout=600,
    )  # fmt: skip
    runs = []
    for line in done.stdout.splitlines():
        code, wall, cpu, rss, errors = json.loads(line)
        if code != 0:
            raise RuntimeError(f"{' '.join(args)} exited {code}: {errors}")
        runs.append((float(wall), float(cpu), float(rss)))  # Linux: ru_maxrss is in KiB, so rss is MiB
    return runs


def run() -> list[Figure]:
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="pm-bench-status-") as tmp:
        repo = init_repo(Path(tmp) / "repo")
        start = time.perf_counter()
        made = build_run(repo, tasks=TASKS, events_total=EVENTS)
        print(f"[status] synthetic run: {made.tasks} tasks, {made.events} events, {made.sessions} sessions "
              f"in {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)  # fmt: skip
        case = f"{made.tasks} tasks, {made.events:,} events"
        exe = _pm_agent()
        commands = {
            "status": ["status"],
            "status --all": ["status", "--all"],
            "status --json": ["status", "--json"],
            "log TASK": ["log", made.busiest_task],
        }
        # The floor on this machine now: a bare interpreter's start, and how busy the cores are.
        floor = statistics.median(r[0] for r in measure([sys.executable, "-c", "pass"], repo))
        figures.append(figure(BENCH, "reference: python -c pass", "ms wall (median of 5)", floor))
        figures.append(figure(BENCH, "reference: load average", "1-min, at the start", os.getloadavg()[0]))
        for name, args in commands.items():
            runs = measure([exe, *args], repo)
            wall = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[1] for r in runs)
            rss = max(r[2] for r in runs)
            print(f"[status] {name}: {wall:.0f} ms wall, {cpu:.0f} ms CPU, {rss:.1f} MB", file=sys.stderr, flush=True)
            figures.append(figure(BENCH, f"{name}, {case}", "ms wall (median of 5)", wall, goal_le(wall, 300)))
            figures.append(figure(BENCH, f"{name}, {case}", "ms CPU (median of 5)", cpu))
            figures.append(figure(BENCH, f"{name}, {case}", "MB peak RSS", rss, goal_le(rss, 150)))
    return figures


if __name__ == "__main__":
    from common import table

    print(table(run()))
