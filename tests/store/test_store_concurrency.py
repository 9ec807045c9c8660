"""Several processes on one store file, as pm-agent and its MCP signal servers use it."""

from __future__ import annotations

import itertools
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from pm_agent.errors import StoreError
from pm_agent.store import SqliteStore, _connect, open_store
from pm_agent.store.database import write_txn, writer

WORKER = """
import sys, time
from pathlib import Path
from pm_agent.store import open_store
path, worker, count, barrier = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
task = {"a": "1", "b": "2"}[worker]
with open_store(path) as store:
    session = store.create_session("run1", task, "developer", 1, "tok-" + worker, "fake", "/w")
    other = {"a": "b", "b": "a"}[worker]
    state = "received"
    for i in range(count):
        # Lockstep within two ticks of the other writer: the writes interleave however busy the machine is.
        deadline = time.monotonic() + 30
        while i >= 2 and not (barrier / f"{other}-{i - 2}").exists() and time.monotonic() < deadline:
            time.sleep(0.001)
        store.append_event("run1", "worker.tick", {"worker": worker, "i": i}, task_id=task)
        store.record_signal(run_id="run1", task_id=task, session_id=session.id, attempt=1, seq=i,
                            kind="progress", payload={"i": i}, accepted=True)
        if i % 20 == 0:
            nxt = "implementing" if state == "received" else "received"
            store.transition("run1", task, from_state=state, to_state=nxt, reason="tick", iteration=i,
                             workflow_context={"i": i})
            state = nxt
        store.list_tasks("run1")  # reads interleave with the other process's writes
        (barrier / f"{worker}-{i}").touch()
"""


def test_two_processes_write_concurrently(
    store: SqliteStore, run_id: str, db_path: Path, tmp_path: Path
) -> None:
    count = 200
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(db_path), worker, str(count), str(barrier)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for worker in ("a", "b")
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert "locked" not in err + out

    ticks = [e for e in store.events(run_id) if e.kind == "worker.tick"]
    assert len(ticks) == 2 * count
    for worker in ("a", "b"):
        seen = [e.payload["i"] for e in ticks if e.payload["worker"] == worker]
        assert seen == list(range(count))  # each process's events in its own order
    order = [e.payload["worker"] for e in ticks]
    switches = sum(1 for x, y in itertools.pairwise(order) if x != y)
    assert switches > 10, "the two writers did not actually overlap"
    for task_id in ("1", "2"):
        assert [t.seq for t in store.transitions(run_id, task_id)] == list(range(1, count // 20 + 1))
        (session,) = store.list_sessions(run_id, task_id)
        assert [s.seq for s in store.signals_for_session(session.id)] == list(range(count))
    assert len(store.unconsumed_signals(run_id)) == 2 * count


def test_a_writer_waits_for_the_lock_instead_of_failing(
    store: SqliteStore, run_id: str, db_path: Path
) -> None:
    holding = threading.Event()
    release = threading.Event()

    def hold_lock() -> None:
        with open_store(db_path) as other, write_txn(writer(other.engine)):
            holding.set()
            release.wait(10)
            time.sleep(0.5)

    holder = threading.Thread(target=hold_lock)
    holder.start()
    try:
        assert holding.wait(10)
        release.set()
        began = time.monotonic()
        store.append_event(run_id, "after.wait", {})  # blocks on BEGIN IMMEDIATE, then succeeds
        waited = time.monotonic() - began
    finally:
        release.set()
        holder.join(10)
    assert waited >= 0.3
    assert store.events(run_id)[-1].kind == "after.wait"


def test_readers_are_not_blocked_by_a_writer(store: SqliteStore, run_id: str, db_path: Path) -> None:
    with open_store(db_path) as other, write_txn(writer(other.engine)) as conn:
        from pm_agent.store.events import append_event_txn

        append_event_txn(conn, run_id, None, "uncommitted", {}, now=other.now())
        began = time.monotonic()
        kinds = [e.kind for e in store.events(run_id)]  # WAL: the committed snapshot, at once
        assert time.monotonic() - began < 1.0
        assert "uncommitted" not in kinds
    assert store.events(run_id)[-1].kind == "uncommitted"


def _free_elsewhere(lock: threading.RLock) -> bool:
    """Whether another thread could take `lock` now."""
    answer: list[bool] = []

    def probe() -> None:
        got = lock.acquire(blocking=False)
        if got:
            lock.release()
        answer.append(got)

    thread = threading.Thread(target=probe)
    thread.start()
    thread.join(10)
    return answer == [True]


def test_writers_of_one_process_queue_on_one_lock_per_file(store: SqliteStore, run_id: str, db_path: Path) -> None:
    """In-process writers wait on a Python lock, woken the moment it is free, rather than in SQLite's busy
    handler, which sleeps 1-25 ms between tries: both kinds of write transaction hold it throughout."""
    lock = _connect._lock_of(db_path)
    assert _connect._lock_of(db_path.parent / "." / db_path.name) is lock  # one lock per file, however spelled
    assert _free_elsewhere(lock)
    with store._fast.write():
        assert not _free_elsewhere(lock)
    with write_txn(writer(store.engine)):
        assert not _free_elsewhere(lock)
    assert _free_elsewhere(lock)
    store.append_event(run_id, "after.both", {})
    assert store.events(run_id)[-1].kind == "after.both"


def test_a_writer_held_off_past_the_busy_timeout_fails_like_sqlite(
    store: SqliteStore, run_id: str, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_connect, "BUSY_TIMEOUT_MS", 200)  # write_lock lives in _connect (no SQLAlchemy)
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with _connect.write_lock(db_path):
            holding.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert holding.wait(10)
        with pytest.raises(StoreError, match="database is locked"):
            store.append_event(run_id, "never.written", {})
    finally:
        release.set()
        holder.join(10)
    assert "never.written" not in [e.kind for e in store.events(run_id)]
