"""pm-agent benchmarks: each prints its figures; none asserts a time (tests stay deterministic).

make bench        # or: .venv/bin/python bench/run_all.py
"""

from __future__ import annotations

import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from pm_agent.engine.scheduler import Candidate, Scheduler
from pm_agent.lifecycle import IssueState, WorkflowContext, default_workflow
from pm_agent.plan import load_plan
from pm_agent.plan.models import Plan, Task, Tier
from pm_agent.store import open_store


def timed(label: str, fn: Callable[[], object], unit: str = "", count: int = 1) -> None:
    tracemalloc.start()
    start = time.perf_counter()
    fn()
    elapsed = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rate = f", {count / elapsed:,.0f} {unit}/s" if unit else ""
    print(f"{label:<48} {elapsed * 1000:9.1f} ms{rate}, peak {peak / 2**20:.1f} MiB")


def big_plan(path: Path, n: int) -> None:
    parts = ["# Big plan\n\n**Goal:** scale.\n"]
    for i in range(1, n + 1):
        dep = f"**Depends on:** Task {i - 1}\n" if i > 1 and i % 10 else ""
        parts.append(
            f"### Task {i}: Feature {i}\n\n{dep}**Files:**\n- Create: `src/m{i}.py`\n- Test: `tests/test_m{i}.py`\n\n"
            f"**Acceptance criteria:**\n- feature {i} works\n"
        )
    path.write_text("\n".join(parts), encoding="utf-8")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        plan_path = root / "plan.md"
        big_plan(plan_path, 1000)
        timed("parse + resolve + queue a 1000-task plan", lambda: load_plan(plan_path), "tasks", 1000)

        tasks = [Task(id=str(i), title=f"t{i}") for i in range(1, 501)]
        plan = Plan(plan_id="bench", path=str(plan_path), tasks=tasks, queue=[t.id for t in tasks])
        store = open_store(root / "state.db")
        run = store.create_run(plan, baseline_sha="0" * 40, working_branch="w", shared_context={}, config={})
        wf = default_workflow()

        def transitions() -> None:
            for t in tasks:
                ctx = WorkflowContext(task_id=t.id)
                ctx.bind(wf)
                ctx.transition_to(IssueState.PLANNING_APPROACH, "bench")
                store.transition(
                    run.id,
                    t.id,
                    from_state="received",
                    to_state="planning_approach",
                    reason="bench",
                    iteration=1,
                    workflow_context=ctx.model_dump(mode="json"),
                )

        timed("500 durable transitions (SQLite, synchronous=FULL)", transitions, "transitions", 500)
        timed("list_tasks on a 500-task run", lambda: store.list_tasks(run.id), "")
        store.close()

        cands = [Candidate(str(i), Tier.LOW if i % 3 else Tier.NORMAL, i, i, f"area{i % 7}") for i in range(2000)]
        sched = Scheduler(max_parallel=3)
        timed(
            "scheduler.pick over 2000 ready tasks x 100",
            lambda: [sched.pick(cands, []) for _ in range(100)],
            "picks",
            100,
        )


if __name__ == "__main__":
    main()
