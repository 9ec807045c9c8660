"""A synthetic pm-agent run for benchmark 4: N tasks in realistic states and E events, written by the store itself.

The run is what a long `pm-agent run` leaves behind: most tasks completed (six transitions, a developer and a reviewer
session with costs, a signal, three gate results, a commit), a few in progress with a live session, a few waiting on
an open escalation, a few failed, the rest still pending; open and closed risks. Every structured row goes through the
store's own write functions (the same code `SqliteStore`'s public writes call, with their event rows; the plain
sqlite3 ones on the transaction's `raw` connection), all in one write transaction so that building 1,000 tasks takes
seconds, not one fsync per write. The remaining events, up to exactly `events`, are free-form ones like
`dispatch.prompt` spread over the started tasks, inserted as `events.append_event_txn` would (payload redacted, the
same columns) but with one executemany.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, func, select

from pm_agent.lifecycle.states import IssueState as S
from pm_agent.plan.models import Dependency, Plan, Task, TaskStatus, Tier
from pm_agent.redaction import redact
from pm_agent.store import RiskStatus, SessionStatus, Severity, default_store_path, open_store
from pm_agent.store import _fast_signals as fs
from pm_agent.store import _fast_writes as fw
from pm_agent.store import outcomes as oc
from pm_agent.store import runs as rn
from pm_agent.store._fast import raw
from pm_agent.store.database import write_txn, writer
from pm_agent.store.schema import events
from pm_agent.testing.clock import TickClock

RUN_ID = "bench0001"
COMPLETED_PATH = (
    S.RECEIVED,
    S.PLANNING_APPROACH,
    S.IMPLEMENTING,
    S.RUNNING_TESTS,
    S.REVIEWING_CODE,
    S.CREATING_PR,
    S.COMPLETED,
)
GATES = ("lint", "typecheck", "tests")
FILLER_KINDS = ("dispatch.prompt", "agent.progress", "gate.started", "gate.finished", "worktree.ready")


@dataclass(frozen=True)
class Mix:
    """How many tasks end in each kind of place (the rest stay pending)."""

    completed: int
    in_progress: int
    escalated: int
    failed: int

    @classmethod
    def for_tasks(cls, n: int) -> Mix:
        """70 % completed, 3 % in progress, 1 % escalated, 0.5 % failed (at least one each when n >= 10)."""
        least = 1 if n >= 10 else 0
        return cls(int(n * 0.70), max(least, n * 3 // 100), max(least, n // 100), max(least, n // 200))


@dataclass(frozen=True)
class SyntheticRun:
    """What `build_run` wrote, to check it against what the store reads back."""

    repo: Path
    run_id: str
    tasks: int
    events: int
    mix: Mix
    sessions: int
    live_sessions: int
    cost_usd: float
    input_tokens: int
    output_tokens: int
    open_escalations: int
    open_risks: int
    busiest_task: str  # the task with the most events: what `log` is measured on


def make_plan(n: int, rng: random.Random) -> Plan:
    """N tasks with a tier mix, 40 ownership areas, one or two dependencies on earlier tasks, realistic text."""
    tiers = [Tier.LOW] * 5 + [Tier.NORMAL] * 4 + [Tier.CRITICAL]
    tasks = []
    for i in range(1, n + 1):
        deps = sorted({rng.randrange(1, i) for _ in range(rng.choice((1, 2)))}) if i > 1 else []
        tasks.append(
            Task(
                id=str(i),
                title=f"Implement feature {i}: parse, validate and store input batch {i}",
                line=10 * i,
                description=f"Feature {i} reads a batch, checks every field and stores the valid rows. " * 3,
                steps=[f"step {k} of task {i}" for k in range(1, 5)],
                tier=rng.choice(tiers),
                ownership=f"src/area{i % 40}",
                acceptance_criteria=[f"criterion {k} of task {i} holds" for k in range(1, 4)],
                depends_on=[Dependency(task_id=str(d)) for d in deps],
                decision_log=[f"parsed task {i}"],
            )
        )
    return Plan(plan_id="bench", path="docs/plan.md", tasks=tasks, queue=[t.id for t in tasks])


def _move(conn: Connection, task_id: str, path: tuple[S, ...], status: TaskStatus, now: TickClock) -> None:
    for n, (src, dst) in enumerate(itertools.pairwise(path)):
        last = n == len(path) - 2
        fw.transition(
            raw(conn), RUN_ID, task_id, from_state=src, to_state=dst, reason=f"{src} done", iteration=n,
            workflow_context={"step": n}, status=status if last else TaskStatus.IN_PROGRESS,
            fields={"attempt": 1} if n == 0 else {}, now=now(), fault=None,
        )  # fmt: skip


def _session(
    conn: Connection, task_id: str, role: str, status: SessionStatus, rng: random.Random, now: TickClock
) -> int:
    token = f"tok-{task_id}-{role}"
    made = fw.create_session(
        raw(conn), run_id=RUN_ID, task_id=task_id, role=role, attempt=1, token=token, runner="claude",
        workdir=f"/tmp/wt/task-{task_id}", resumed_from=None, now=now(),
    )  # fmt: skip
    cost = {"cost_usd": round(rng.uniform(0.01, 0.5), 4), "input_tokens": rng.randrange(1_000, 90_000)}
    fields = {"status": status, **cost, "output_tokens": rng.randrange(100, 9_000), "last_lines": "ok"}
    fw.update_session(raw(conn), made.id, fields, now=now())
    return made.id


def _structured(conn: Connection, plan: Plan, mix: Mix, rng: random.Random, now: TickClock) -> list[str]:
    """Tasks, sessions, signals, gates, commits, escalations and risks; the ids of the tasks that started."""
    ids = [t.id for t in plan.tasks]
    done = ids[: mix.completed]
    running = ids[mix.completed : mix.completed + mix.in_progress]
    waiting = ids[len(done) + len(running) : len(done) + len(running) + mix.escalated]
    failed = ids[len(done) + len(running) + len(waiting) : len(done) + len(running) + len(waiting) + mix.failed]
    for task_id in done:
        _move(conn, task_id, COMPLETED_PATH, TaskStatus.COMPLETED, now)
        dev = _session(conn, task_id, "developer", SessionStatus.SIGNALLED, rng, now)
        fs.record_signal(
            raw(conn), run_id=RUN_ID, task_id=task_id, session_id=dev, attempt=1, seq=1, kind="complete",
            payload={"summary": f"task {task_id} done"}, accepted=True, reason="", now=now(), fault=None,
        )  # fmt: skip
        for gate in GATES:
            verdict = (gate, True, f"{gate}: ok")
            fw.record_gate_results(raw(conn), RUN_ID, task_id, attempt=1, results=[verdict], now=now())
        _session(conn, task_id, "reviewer", SessionStatus.SIGNALLED, rng, now)
        sha = f"{int(task_id):040x}"
        fw.record_commit(
            raw(conn), RUN_ID, task_id, sha=sha, branch="pm/bench", message=f"task-{task_id}", now=now(), fault=None
        )
    for task_id in running:
        _move(conn, task_id, COMPLETED_PATH[:3], TaskStatus.IN_PROGRESS, now)
        _session(conn, task_id, "developer", SessionStatus.RUNNING, rng, now)
    for task_id in waiting:
        _move(conn, task_id, (*COMPLETED_PATH[:3], S.WAITING_FOR_HUMAN_INPUT), TaskStatus.ESCALATED, now)
        dev = _session(conn, task_id, "developer", SessionStatus.SIGNALLED, rng, now)
        oc.open_escalation_txn(
            conn, RUN_ID, task_id, source="needs-user-input", problem=f"Which format for batch {task_id}?",
            impact=f"task {task_id} waits", options=["csv", "json"], recommended="json", blocking=True,
            session_id=dev, now=now(),
        )  # fmt: skip
    for task_id in failed:
        _move(conn, task_id, (*COMPLETED_PATH[:4], S.FAILED), TaskStatus.FAILED, now)
        _session(conn, task_id, "developer", SessionStatus.CRASHED, rng, now)
    answered = oc.open_escalation_txn(
        conn, RUN_ID, None, source="pm", problem="Release gate: coverage fell", impact="the release waits",
        options=["accept", "add tests"], recommended="add tests", blocking=False, session_id=None, now=now(),
    )  # fmt: skip
    oc.answer_escalation_txn(conn, answered.id, "add tests", now=now())
    for k in range(8):
        risk = oc.add_risk_txn(
            conn, RUN_ID, description=f"risk {k}: batch input may be large", severity=Severity.NORMAL,
            source_task=ids[k % len(ids)], risk_id=None, now=now(),
        )  # fmt: skip
        if k % 3 == 0:  # 3 of the 8 are mitigated, 5 stay open
            oc.update_risk_status_txn(conn, RUN_ID, risk.id, RiskStatus.MITIGATED, now=now())
    return done + running + waiting + failed


def _filler(conn: Connection, started: list[str], count: int, rng: random.Random, now: TickClock) -> None:
    """`count` free-form events, one in twenty about the run and the rest spread over the started tasks."""
    rows: list[dict[str, Any]] = []
    for seq in range(count):
        task_id = None if seq % 20 == 0 or not started else rng.choice(started)
        kind = FILLER_KINDS[seq % len(FILLER_KINDS)]
        payload = {"seq": seq, "detail": f"{kind} for task {task_id}: 12 files, 3.4 KiB", "ms": rng.randrange(900)}
        rows.append(
            {"run_id": RUN_ID, "task_id": task_id, "kind": kind, "payload": redact(payload), "created_at": now()}
        )
    if rows:
        conn.execute(events.insert(), rows)


def build_run(repo: Path, *, tasks: int = 1000, events_total: int = 100_000, seed: int = 4) -> SyntheticRun:
    """Write the synthetic run into `repo`/.pm-agent/state.db (a fresh store) and say what it holds."""
    rng = random.Random(seed)
    now = TickClock(start=datetime(2026, 3, 2, 8, 0, tzinfo=UTC))
    plan = make_plan(tasks, rng)
    mix = Mix.for_tasks(tasks)
    store = open_store(default_store_path(repo), clock=now)
    try:
        with write_txn(writer(store.engine)) as conn:
            rn.create_run_txn(
                conn, plan, baseline_sha="0" * 40, working_branch="pm/bench", shared_context={"project": "bench"},
                config={"max_parallel": 3}, now=now(), run_id=RUN_ID,
            )  # fmt: skip
            started = _structured(conn, plan, mix, rng, now)
            written = int(conn.scalar(select(func.count()).select_from(events)) or 0)
            _filler(conn, started, max(0, events_total - written), rng, now)
            total = int(conn.scalar(select(func.count()).select_from(events)) or 0)
            busiest = conn.execute(
                select(events.c.task_id)
                .where(events.c.task_id.is_not(None))
                .group_by(events.c.task_id)
                .order_by(func.count().desc(), events.c.task_id)
                .limit(1)
            ).scalar()
        sessions = store.list_sessions(RUN_ID)
    finally:
        store.close()
    live = sum(1 for s in sessions if s.status in (SessionStatus.STARTING, SessionStatus.RUNNING))
    return SyntheticRun(
        repo=repo, run_id=RUN_ID, tasks=tasks, events=total, mix=mix, sessions=len(sessions), live_sessions=live,
        cost_usd=round(sum(s.cost_usd for s in sessions), 6), input_tokens=sum(s.input_tokens for s in sessions),
        output_tokens=sum(s.output_tokens for s in sessions), open_escalations=mix.escalated, open_risks=5,
        busiest_task=str(busiest or "1"),
    )  # fmt: skip
