"""The plan watched from the loop (`PlanSync`) and from the command line (`reconcile_repo`); see reconcile.py.

    sync = PlanSync(rc)                  # one per drive of the loop
    if sync.poll(running=flows): ...     # each pass; True when the run's tasks changed

A request-born run (`pm-agent new`) also has its locked requirements watched: its design doc is the
approved copy in `.pm-agent/intake/<request run>/`; a stat each pass, and on a move `note_drift`
(intake/drift.py) records `requirements.changed` once per new text and prints it. The run goes on:
the requirements changing is for the human to see, not a reason to stop work already under way.

    found = reconcile_repo(repo)         # `pm-agent reconcile`: applied when stopped, shown while running
"""

from __future__ import annotations

import time
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from pm_agent.engine.plandiff import PlanDiff
from pm_agent.engine.planfiles import content_sha, fingerprint, newest
from pm_agent.engine.reconcile import (
    PLAN_EVENTS,
    Host,
    OfflineHost,
    apply_answers,
    open_plan_escalations,
    plan_path,
    preview,
    reconcile,
)
from pm_agent.errors import PlanError
from pm_agent.statefile import default_store_path

# `.pm-agent/intake/<request run>/`: the approved documents a request's run reads (intake/start.py's handoff_dir).
INTAKE_DIR = "intake"

__all__ = ["FOLDER_RECHECK_S", "SETTLE_S", "PlanSync", "RepoReconcile", "reconcile_repo", "settling"]

FOLDER_RECHECK_S = 2.0  # a plan folder is walked at most this often; a single file is stat'ed every pass
# An editor's save can be a truncate, then a write: a plan file this young may be half written. Read before the
# write landed, an empty file was refused as "no tasks found" (CI at 7e94174), and a half-written one that still
# parses would cancel the tasks it lost. So the loop reads a plan only once its newest file is this old.
SETTLE_S = 0.5


def settling(stamp: tuple[tuple[str, int, int], ...], now: float) -> bool:
    """True while the plan's newest file was written less than SETTLE_S ago (a clock-skewed future mtime is not)."""
    return 0 <= now - newest(stamp) < SETTLE_S


class PlanSync:
    """The loop's watch on its plan: stat each pass, hash on a move, reconcile on a new hash."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.path = plan_path(host.repo, host.run)
        self.stamp = fingerprint(self.path)
        self.stat_at = time.monotonic()
        self.answers_at = 0.0
        self.seen = self._last_seen()
        self.waiting = open_plan_escalations(host.store, host.run.id)
        self.requirements = _requirements_doc(host)
        self.requirements_stamp = fingerprint(self.requirements) if self.requirements is not None else ()

    def _last_seen(self) -> str | None:
        """The sha of the last version looked at; None: look now (edited since the run started)."""
        store, run = self.host.store, self.host.run
        events = store.events_of_kind(run.id, PLAN_EVENTS)
        if events:
            return str(events[-1].payload.get("sha"))
        # The run read the plan when it was created: a file not touched since is that version.
        return content_sha(self.path) if newest(self.stamp) <= run.created_at.timestamp() else None

    def poll(self, running: Collection[str] = ()) -> bool:
        """Look at the plan (and at answers to plan-change escalations); True when the run's tasks changed."""
        now = time.monotonic()
        changed = False
        if not self.path.is_dir() or now - self.stat_at >= FOLDER_RECHECK_S or self.seen is None:
            self.stat_at = now
            stamp = fingerprint(self.path)
            moved = stamp != self.stamp or self.seen is None
            if moved and settling(stamp, time.time()):
                self.stamp = ()  # still being written, perhaps: look again next pass
            elif moved:
                self.stamp = stamp
                sha = content_sha(self.path)
                if sha != self.seen:
                    outcome = reconcile(self.host, running=running, sha=sha)
                    if outcome.unsettled:
                        self.stamp = ()  # still being written: read it again next pass
                    else:
                        self.seen = sha
                        changed = outcome.changed_tasks
                        self.waiting += len(outcome.escalations)
        if self.requirements is not None:
            stamp = fingerprint(self.requirements)
            if stamp != self.requirements_stamp:
                self.requirements_stamp = stamp
                self._note_requirements()
        # With no slot busy the loop is about to end: an answer that just came must be acted on first.
        if self.waiting and (not running or now - self.answers_at >= FOLDER_RECHECK_S):
            self.answers_at = now
            changed |= bool(apply_answers(self.host))
            self.waiting = open_plan_escalations(self.host.store, self.host.run.id)
        return changed

    def _note_requirements(self) -> None:
        """The locked requirements' file moved: record and print each new difference from the lock."""
        from pm_agent.intake.drift import note_drift  # deferred: the intake package imports the engine's api

        host = self.host
        note_drift(host.repo, host.store, host.run, host)


def _requirements_doc(host: Host) -> Path | None:
    """The run's design doc when it is a request's locked requirements (the hand-off's copy), else None."""
    if not host.run.design_doc:
        return None
    doc = Path(host.run.design_doc)
    intake_dir = default_store_path(host.repo).parent / INTAKE_DIR
    return doc if doc.parent.parent == intake_dir else None


# ---------------------------------------------------------------- `pm-agent reconcile`


@dataclass
class RepoReconcile:
    """What `pm-agent reconcile` found: applied to a stopped run, or only shown while a live one runs."""

    run_id: str
    live: dict[str, object] | None  # the process that holds the run lock (it applies the edit itself)
    diff: PlanDiff | None
    error: str = ""
    lines: list[tuple[str, str]] = field(default_factory=list)
    follow_ups: list[str] = field(default_factory=list)


def reconcile_repo(repo: Path, run_id: str | None = None) -> RepoReconcile:
    """Reconcile the run's plan: applied now when the run is stopped; shown (nothing written) while it runs."""
    from pm_agent.engine.runlock import lock_holder, run_lock
    from pm_agent.engine.startup import store_exists
    from pm_agent.errors import NotFoundError
    from pm_agent.lifecycle import default_workflow
    from pm_agent.store import default_store_path, open_store

    if not store_exists(repo):
        raise NotFoundError(f"no pm-agent state in {repo}: no run to reconcile; start one with `pm-agent run PLAN.md`")
    store = open_store(default_store_path(repo))
    try:
        run = store.get_run(run_id) if run_id else store.latest_run()
        if run is None:
            raise NotFoundError(f"no run in {default_store_path(repo)}")
        host = OfflineHost(repo, store, run, default_workflow())
        live = lock_holder(repo)
        if live is not None:
            try:
                return RepoReconcile(run.id, live, preview(host))
            except PlanError as exc:
                return RepoReconcile(run.id, live, None, str(exc))
        with run_lock(repo, "reconcile"):
            outcome = reconcile(host)
            if outcome.unsettled:
                outcome.error = f"{plan_path(repo, run)}: changed while it was read; nothing applied, run this again"
            follow_ups = apply_answers(host) if outcome.diff is not None else []
        return RepoReconcile(run.id, None, outcome.diff, outcome.error, host.lines, follow_ups)
    finally:
        store.close()
