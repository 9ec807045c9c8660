"""Benchmark 3: the real `pm-agent run`, end to end, with the fast fake agent and trivial gates.

Plans of N LOW note tasks (independent, so every slot has work), run by the real CLI in a subprocess. Figures:
- pm-agent's own CPU per task: the orchestrator process's user+system time (RUSAGE_SELF, read at exit), which
  excludes its children (agents, their MCP servers, git, gate commands); the children's CPU is reported apart,
  and pm-agent's with its git and gate processes (the children less what the fake agents report of their own).
- signal -> next dispatch, p50 and p99: from a task's accepted `complete` signal (the store's timestamp) to
  the dispatch that refills its slot (its `slot.dispatched` event), less the agent's own time after its
  signal (the process exiting); the raw figure is reported beside it. The gates' own time is inside it:
  they are trivial here (`true`).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from common import Figure, figure, goal_le

from pm_agent.testing.fake_agent import CPU_LOG_ENV
from pm_agent.testing.notes import fake_launcher, note_script, note_section

BENCH = "loop (fake agent)"
CASES = [(20, 3), (20, 8), (200, 3), (200, 8), (1000, 3)]  # 1,000: what grows with the plan shows per task
CONFIG = """\
agent:
  binary: {binary}
  isolated_home: true
max_parallel_agents: {slots}
environment:
  test_command: 'true'
final_review:
  enabled: false  # the loop's dispatch is measured; the fake agent has no final-review script
"""
# Runs the CLI and writes its own CPU (not its children's) when it exits, however it exits.
WRAPPER = """\
import atexit, json, resource, sys
OUT = sys.argv.pop(1)
def _cpu():
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(OUT, "w") as f:
        json.dump({"self": s.ru_utime + s.ru_stime, "children": c.ru_utime + c.ru_stime, "maxrss_kb": s.ru_maxrss}, f)
atexit.register(_cpu)
from pm_agent.cli import main
sys.argv[0] = "pm-agent"
sys.exit(main())
"""


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def _project(root: Path, tasks: int, slots: int) -> Path:
    fake = fake_launcher(root / "fake-claude")
    scripts = root / "scripts"
    scripts.mkdir()
    sections = []
    for n in range(1, tasks + 1):
        (scripts / f"{n}.json").write_text(json.dumps(note_script(n)), encoding="utf-8")
        sections.append(note_section(n, scripts / f"{n}.json"))
    repo = root / "repo"
    (repo / "docs").mkdir(parents=True)
    (repo / "docs" / "notes.md").write_text("# notes\n\n**Goal:** notes.\n\n" + "\n".join(sections), encoding="utf-8")
    (repo / "README.md").write_text("# notes\n", encoding="utf-8")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.name", "Bench")
    _git(repo, "config", "user.email", "bench@example.invalid")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "plan")
    (repo / "pm-agent.yaml").write_text(CONFIG.format(binary=fake, slots=slots), encoding="utf-8")
    return repo


def _ts(value: str) -> float:
    return datetime.fromisoformat(value).timestamp()


def latencies(db: Path, slots: int) -> tuple[list[float], list[float], list[float]]:
    """(raw, pm-agent's own, own to the agent's start) seconds from each task's signal to the dispatch that refills
    its slot, and to that dispatched task's first agent session (its worktree and prompt made: the slot's idle time).

    Slots are always full while tasks remain (the plan's tasks are independent), so the k-th task whose
    agent finishes (its session ended) frees the slot the (slots + k)-th dispatch takes. "Own" leaves out the
    agent's time after its signal (the process exiting), which pm-agent waits for."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        dispatches = sorted(
            (_ts(at), task)
            for task, at in con.execute("SELECT task_id, created_at FROM events WHERE kind = 'slot.dispatched'")
        )
        first_session = {
            task: _ts(at)
            for task, at in con.execute(
                "SELECT task_id, min(created_at) FROM events WHERE kind = 'session.created' GROUP BY task_id"
            )
        }
        # A slot is an agent's (engine/agentslots.py): it is given back when the agent's session ends.
        finished = [
            task
            for (task,) in con.execute(
                "SELECT task_id FROM sessions WHERE ended_at IS NOT NULL GROUP BY task_id ORDER BY max(ended_at)"
            )
        ]
        signalled = {
            task: _ts(at)
            for task, at in con.execute(
                "SELECT task_id, max(created_at) FROM signals WHERE kind = 'complete' AND accepted GROUP BY task_id"
            )
        }
        ended = {
            task: _ts(at)
            for task, at in con.execute("SELECT task_id, max(ended_at) FROM sessions GROUP BY task_id")
            if at is not None
        }
    finally:
        con.close()
    raw: list[float] = []
    own: list[float] = []
    started: list[float] = []
    for k, task in enumerate(finished):
        if slots + k >= len(dispatches) or task not in signalled:
            break  # the last tasks: nothing left to dispatch
        at, next_task = dispatches[slots + k]
        exiting = max(0.0, ended.get(task, signalled[task]) - signalled[task])
        gap = max(0.0, at - signalled[task])
        raw.append(gap)
        own.append(max(0.0, gap - exiting))
        if next_task in first_session:
            started.append(max(0.0, first_session[next_task] - signalled[task] - exiting))
    return raw, own, started


def _pct(values: list[float], q: float) -> float:
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q) - 1]


def one(tasks: int, slots: int) -> list[Figure]:
    """One run of `tasks` tasks in `slots` slots."""
    case = f"{tasks} tasks, {slots} slots"
    with tempfile.TemporaryDirectory(prefix="pm-bench-loop-") as tmp:
        root = Path(tmp)
        repo = _project(root, tasks, slots)
        cpu_file, agents_file = root / "cpu.json", root / "agents-cpu.txt"
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", CPU_LOG_ENV: str(agents_file)}
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-c", WRAPPER, str(cpu_file), "run", "docs/notes.md", "--no-input"],
            cwd=repo,
            capture_output=True,
            text=True,
            env=env,
            timeout=60 * 30,
            check=False,
        )
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-30:])
            raise RuntimeError(f"pm-agent run failed ({proc.returncode}) on {case}:\n{tail}")
        cpu = json.loads(cpu_file.read_text(encoding="utf-8"))
        agents = sum(float(line) for line in agents_file.read_text(encoding="utf-8").split())
        raw, own, started = latencies(repo / ".pm-agent" / "state.db", slots)
        shutil.rmtree(repo / ".pm-agent" / "worktrees", ignore_errors=True)
    per_task_ms = cpu["self"] * 1000 / tasks
    own_ms = [x * 1000 for x in own]
    raw_ms = [x * 1000 for x in raw]
    started_ms = [x * 1000 for x in started]
    print(f"[bench] loop {case}: wall {wall:.1f} s, pm-agent CPU {cpu['self']:.2f} s", file=sys.stderr)
    return [
        figure(BENCH, case, "pm-agent CPU ms/task", per_task_ms, goal_le(per_task_ms, 20)),
        figure(BENCH, case, "children CPU ms/task", cpu["children"] * 1000 / tasks),
        # pm-agent's own git (and the trivial gate) processes: its children less the agents' sessions.
        figure(BENCH, case, "pm-agent + its git CPU ms/task", (cpu["self"] + cpu["children"] - agents) * 1000 / tasks),
        figure(BENCH, case, "signal->dispatch p50 ms", _pct(own_ms, 50)),
        figure(BENCH, case, "signal->dispatch p99 ms", _pct(own_ms, 99), goal_le(_pct(own_ms, 99), 100)),
        figure(BENCH, case, "raw signal->dispatch p50 ms", _pct(raw_ms, 50)),
        figure(BENCH, case, "signal->next agent start p50 ms", _pct(started_ms, 50)),
        figure(BENCH, case, "signal->next agent start p99 ms", _pct(started_ms, 99)),
        figure(BENCH, case, "wall s", wall),
    ]


def run() -> list[Figure]:
    """Every case of benchmark 3."""
    cases = CASES
    if os.environ.get("PM_BENCH_QUICK"):
        cases = [c for c in CASES if c[0] <= 20]
    figures: list[Figure] = []
    for tasks, slots in cases:
        figures.extend(one(tasks, slots))
    return figures


if __name__ == "__main__":
    from common import table

    print(table(run()))
