"""Benchmark 5 of issue 11: dispatch prompt size and per-task setup time for repositories of 100 … 10,000 files.

For each size: a generated repository (committed), a real run started on it (`start_run`: plan, triage, shared
context, store, working branch), then for TASKS tasks what the loop does before an agent starts: the task's
worktree (`PmLoop._worktree`: the task branch from the working branch in a new or a taken-over worktree,
`merge --ff-only` when clean) and the developer's dispatch prompt (`prompt_builder.build_prompt`, as
`TaskFlow.session` calls it). Then the worktrees left are removed (`Git.worktree_remove`).

Setup grows with the repository (a new worktree checks every file out), so the engine keeps finished tasks'
worktrees (`vcs.pool.WorktreePool`): a finished task's worktree is retired (detached, cleaned, moved aside) after
the next dispatch, and a later task takes it over (`checkout -b`, `worktree move`), rewriting only the files that
differ. The tasks here go as the loop takes them with one slot: the first two get new worktrees, the rest take a
retired one over; both are timed, and retiring apart (it is off the path to the agent's start). A sparse
worktree (`worktree add --no-checkout`, `sparse-checkout set --cone` on the task's expected folders, `checkout`)
is timed beside them, informative only.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from statistics import median

from common import Figure, figure, goal_le

from pm_agent.config import PmConfig
from pm_agent.engine.events import RecordingListener
from pm_agent.engine.launch import start_run
from pm_agent.engine.loop import PmLoop
from pm_agent.engine.prompt_builder import build_prompt
from pm_agent.engine.runctx import RunContext
from pm_agent.human.channels import PrintOnlyChannel
from pm_agent.store import TaskRecord

BENCH = "task setup"
SIZES = (100, 1000, 10_000)
TASKS = 5
PLAN_PATH = "docs/plans/2026-01-05-reports.md"
FOLDERS = 20  # package folders in every generated repository
FILE_TEXT = '"""Module {i}: generated for the setup benchmark."""\n\n\ndef f{i}(x: int) -> int:\n    return x + {i}\n'

_TASK = """## Task {n}: {title}

{deps}**Ownership:** {area}

{body}

**Acceptance criteria:**
- {title} works for an empty input and for 10,000 rows
- Errors name the input line that caused them
- The public function has a docstring and type hints

**Files:**
- Modify: `{modify}`
- Create: `src/pkg{n}/report_{n}.py`
- Test: `tests/pkg{n}/test_report_{n}.py`

**Tests to run:**
- `tests/pkg{n}/test_report_{n}.py`
"""
_TITLES = ("CSV export", "Monthly totals", "Per-team breakdown", "PDF rendering", "Email delivery", "Audit trail")


def plan_text() -> str:
    """A six-task plan that reads and writes files present in every generated repository."""
    head = "# Reports — plan\n\n**Goal:** Usage reports for workspaces.\n\n**Tech Stack:** Python 3.11, pytest\n\n"
    body = "Read the rows from the store module, aggregate them, and write the result; keep memory flat. " * 3
    sections = [
        _TASK.format(
            n=n,
            title=title,
            deps=f"**Depends on:** Task {n - 1}\n" if n > 1 else "",
            area=f"reports-{n}",
            body=body.strip(),
            modify=f"src/pkg{n * 7 % FOLDERS}/mod{n * 7}.py",
        )
        for n, title in enumerate(_TITLES, start=1)
    ]
    return head + "\n".join(sections)


def _git(repo: Path, *args: str) -> str:
    cmd = ["git", "-c", "user.name=Bench", "-c", "user.email=bench@example.org", *args]
    return subprocess.run(cmd, cwd=repo, check=True, capture_output=True, text=True).stdout


def make_repo(root: Path, n_files: int) -> Path:
    """A committed repository of exactly `n_files` files in the same FOLDERS package folders at every size (only
    the number of files changes), the plan among them."""
    repo = root / f"repo-{n_files:05d}"  # one name length, so paths in the prompt do not differ in size
    for i in range(n_files - 2):
        path = repo / "src" / f"pkg{i % FOLDERS}" / f"mod{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(FILE_TEXT.format(i=i), encoding="utf-8")
    (repo / "README.md").write_text("# generated\n", encoding="utf-8")
    (repo / PLAN_PATH).parent.mkdir(parents=True)
    (repo / PLAN_PATH).write_text(plan_text(), encoding="utf-8")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "generated")
    return repo


def _ms(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return (time.perf_counter() - start) * 1000


def _start(repo: Path) -> RunContext:
    agent = {"runner": "command", "command": [sys.executable, "-c", "pass", "{prompt}"]}  # never started here
    config = PmConfig.model_validate({"agent": agent})
    return start_run(
        repo, repo / PLAN_PATH, None, listener=RecordingListener(), channel=PrintOnlyChannel(), config=config
    )


def _setup(loop: PmLoop, rc: RunContext, rec: TaskRecord) -> str:
    """What happens between `scheduler.pick` and the agent's start: the worktree, then the prompt."""
    loop._worktree(rec)  # the engine's own step, so the figure follows it when it changes
    return build_prompt(rc, rec, "developer", rc.history(rec.task_id))


def measure(root: Path, n_files: int) -> dict[str, float]:
    """Prompt bytes (mean of the tasks); setup ms (new and taken-over worktrees), retiring and removal ms (medians);
    the sparse alternative's ms."""
    repo = make_repo(root, n_files)
    rc = _start(repo)
    try:
        loop = PmLoop(rc)
        records = rc.store.list_tasks(rc.run_id)[:TASKS]
        prompts: list[int] = []
        setups: dict[bool, list[float]] = {True: [], False: []}  # taken over or not
        retires: list[float] = []
        for i, rec in enumerate(records):
            taken = loop.pool.taken
            start = time.perf_counter()
            prompts.append(len(_setup(loop, rc, rec).encode("utf-8")))
            setups[loop.pool.taken > taken].append((time.perf_counter() - start) * 1000)
            if i:  # the loop retires a finished task's worktree after the next dispatch
                done = records[i - 1]
                retire = partial(loop.pool.retire, rc.worktree_path(done.task_id), rc.task_branch_of(done))
                retires.append(_ms(retire))
        last = rc.worktree_path(records[-1].task_id)
        left = [last, *loop.pool.spares()]
        removals = [_ms(partial(rc.git.worktree_remove, path, force=True)) for path in left]
        sparse = _sparse(rc, records)
    finally:
        rc.store.close()
    return {
        "prompt": sum(prompts) / len(prompts),
        "setup": median(setups[True] + setups[False]),
        "new": median(setups[False]),
        "taken": median(setups[True]),
        "retire": median(retires),
        "remove": median(removals),
        "sparse": sparse,
    }


def _sparse(rc: RunContext, records: list[TaskRecord]) -> float:
    """Informative, not the engine: per task, a sparse worktree of the task's expected folders (median ms)."""
    base = rc.run.working_branch
    sparse: list[float] = []
    for rec in records:
        path = rc.state_dir / "bench-sparse" / f"task-{rec.task_id}"
        dirs = sorted({str(Path(p).parent) for p in rec.task().expected_files.all_paths()})

        def add_sparse(path: Path = path, dirs: list[str] = dirs, branch: str = f"bench/sparse-{rec.task_id}") -> None:
            rc.git.run("worktree", "add", "--quiet", "--no-checkout", "-b", branch, str(path), base)
            _git(path, "sparse-checkout", "set", "--cone", *dirs)
            _git(path, "checkout", "--quiet", branch)

        sparse.append(_ms(add_sparse))
    return median(sparse)


def run() -> list[Figure]:
    """Prompt size, setup and removal per repository size, and the alternatives' cost."""
    results: dict[int, dict[str, float]] = {}
    root = Path(tempfile.mkdtemp(prefix="pm-bench-setup-"))
    try:
        for n in SIZES:
            print(f"  {n} files", file=sys.stderr, flush=True)
            results[n] = measure(root, n)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    figures: list[Figure] = []
    for n, r in results.items():
        case = f"{n} files"
        figures.append(figure(BENCH, case, "prompt bytes", r["prompt"]))
        figures.append(figure(BENCH, case, "setup ms/task (median)", r["setup"]))
        figures.append(figure(BENCH, case, "setup ms, new worktree (median)", r["new"]))
        figures.append(figure(BENCH, case, "setup ms, worktree taken over (median)", r["taken"]))
        figures.append(figure(BENCH, case, "retiring a finished worktree ms (median)", r["retire"]))
        figures.append(figure(BENCH, case, "worktree removal ms (median)", r["remove"]))
    small, middle, large = (results[n] for n in SIZES)
    change = abs(large["prompt"] / small["prompt"] - 1) * 100
    case = f"{SIZES[-1]} vs {SIZES[0]} files"
    figures.append(figure(BENCH, case, "prompt size change %", change, goal_le(change, 1.0)))
    figures.append(figure(BENCH, case, "setup time ratio", large["setup"] / small["setup"]))
    later = abs(large["prompt"] / middle["prompt"] - 1) * 100  # the shared context's list of folders is capped
    figures.append(figure(BENCH, f"{SIZES[-1]} vs {SIZES[1]} files", "prompt size change %", later))
    for n, r in results.items():  # what a sparse worktree would cost instead
        figures.append(figure(BENCH, f"{n} files", "sparse worktree add ms (median)", r["sparse"]))
    return figures
