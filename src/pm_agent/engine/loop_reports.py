"""What the PM loop tells as it goes (seed 001): the progress report every N completed tasks or M minutes, and
each cycle's incremental diff. Both are read and written off the loop's thread once the freed slots are
refilled (`PmLoop` calls `write_due` and `cycle_diff` after its dispatch), and told on the loop's thread."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, TypeVar

from pm_agent.engine.runctx import RunContext
from pm_agent.plan.models import Tier
from pm_agent.reports.progress import ReportClock
from pm_agent.reports.progress_data import progress_text

T = TypeVar("T")


class LoopReports:
    """The loop's progress reports and cycle diffs; `jobs` is the loop's set of background jobs, which it awaits
    before it returns."""

    def __init__(self, rc: RunContext, jobs: set[asyncio.Task[Any]]) -> None:
        self.rc = rc
        self.jobs = jobs
        self.clock = ReportClock(
            task_interval=rc.config.progress_report_task_interval,
            time_interval_s=rc.config.progress_report_time_interval_min * 60,
            last_report_at=time.monotonic(),
        )
        self.due: str | None = None  # why a progress report is due, written once the slots are refilled
        self.last_cycle_sha = rc.run.current_sha or rc.run.baseline_sha
        self.diffing: asyncio.Task[None] | None = None  # the cycle diff being taken, if any

    def task_completed(self, task_id: str, tier: Tier) -> None:
        """Count a completed task; a CRITICAL one is reported at once."""
        self.clock.task_completed()
        if tier is Tier.CRITICAL:
            self.now(f"critical task-{task_id} completed")

    def look(self) -> None:
        """Note a report that has come due (by count or time), for `write_due`."""
        self.due = self.clock.due(time.monotonic()) or self.due

    def now(self, why: str) -> None:
        """A progress report, written and told now."""
        self.clock.reported(time.monotonic())
        self.rc.emit("report.progress", f"{self._progress()}\n(trigger: {why})")

    def write_due(self) -> None:
        """The due report, if any, read and stored in a thread: at a few ms per report, growing with the plan,
        it used to come between a finished task and the dispatch into its slot."""
        why, self.due = self.due, None
        if why is None:
            return
        self.clock.reported(time.monotonic())

        def told(text: str) -> None:
            self.rc.emit("report.progress", f"{text}\n(trigger: {why})")

        self._background(self._progress, told, "report.failed", "the progress report could not be written")

    def cycle_diff(self) -> None:
        """Seed 001 per cycle: the incremental diff since the last task SHA, taken in a thread unless one is."""
        if self.diffing is not None:
            return
        # After the dispatch: the cycle's diff (two git calls) runs beside the new flows, not before them.
        self.diffing = self._background(self._diff, _nothing, "cycle.diff", "the cycle's diff could not be taken")
        self.diffing.add_done_callback(self._diffed)

    def _diffed(self, _job: asyncio.Task[None]) -> None:
        self.diffing = None

    def _progress(self) -> str:
        """The progress report, stored; its text."""
        rc = self.rc
        text = progress_text(rc.db_path, rc.run_id, rc.run.plan_id)
        rc.store.add_report(rc.run_id, "progress", text)
        return text

    def _diff(self) -> None:
        rc = self.rc
        head = rc.git.rev_parse(rc.run.working_branch)
        if head == self.last_cycle_sha:
            return
        stat = rc.git.diff_stat(self.last_cycle_sha, head)
        rc.store.append_event(rc.run_id, "cycle.diff", {"from": self.last_cycle_sha, "to": head, "stat": stat})
        self.last_cycle_sha = head

    def _background(self, work: Callable[[], T], told: Callable[[T], None], kind: str, failure: str) -> asyncio.Task[T]:
        """`work` in a worker thread, among the loop's jobs; its result `told` on the loop's thread (listeners
        print in order). These are informative: a failure is told as `kind`, and the run goes on."""
        job = asyncio.create_task(asyncio.to_thread(work))

        def finished(done: asyncio.Task[T]) -> None:
            self.jobs.discard(done)
            failed = None if done.cancelled() else done.exception()
            if failed is not None:
                self.rc.emit(kind, f"{failure}: {failed}")
            elif not done.cancelled():
                told(done.result())

        self.jobs.add(job)
        job.add_done_callback(finished)
        return job


def _nothing(_: object) -> None:
    """A job whose result is only stored (the cycle diff): nothing to tell."""
