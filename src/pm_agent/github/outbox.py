"""The sender: performs the outbox's unsent rows on GitHub, in order, and marks each sent.

Never twice: an issue is created only after no `pm-agent` issue carries its marker, and a comment is posted
only after its issue has no comment carrying its key (looked up whenever an earlier attempt may have gone
through, i.e. the row's attempts are counted before each call). A transient failure (network, 5xx, rate
limit) stops the pass and keeps the row; the next pass waits for the rate limit's reset or an exponential,
bounded backoff. Any other failure is recorded on the row (`pm-agent status` shows it) and the pass goes on;
such a row is tried again when the bridge restarts.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pm_agent.errors import PmAgentError
from pm_agent.github import render
from pm_agent.github import rows as R
from pm_agent.github.api import GitHubApi, GitHubError, Issue
from pm_agent.github.pulls import kept_task_branches, open_task_pull, publish_release, task_pull_body
from pm_agent.plan.github_source import issue_number
from pm_agent.reports.manifest import manifest_path
from pm_agent.store import SqliteStore
from pm_agent.store.outbox import Outbox, OutboxRecord


@dataclass(frozen=True)
class Backoff:
    """Waits after consecutive transient failures: base * 2^(n-1), at most cap."""

    base_s: float = 1.0
    cap_s: float = 60.0

    def delay(self, failures: int) -> float:
        """Seconds to wait after the `failures`-th transient failure in a row."""
        return float(min(self.cap_s, self.base_s * 2 ** max(0, failures - 1)))


@dataclass
class SendResult:
    """What one pass did."""

    sent: int = 0
    failed: int = 0
    wait_until: float | None = None
    """Epoch seconds before which the next call should not be made (a transient failure)."""


class BridgeError(PmAgentError):
    """A row cannot be performed (its issue is unknown, its record gone); not retried in this process."""


@dataclass(frozen=True)
class ReleaseTarget:
    """Where the release is pushed from and to, for the pull request at the end of a run."""

    repo_dir: Path
    remote: str
    manifest_dir: str


@dataclass
class Sender:
    """Performs one run's outbox rows through a `GitHubApi`."""

    api: GitHubApi
    store: SqliteStore
    run_id: str
    backoff: Backoff = field(default_factory=Backoff)
    clock: Callable[[], float] = time.time
    release: ReleaseTarget | None = None
    outbox: Outbox = field(init=False)
    not_before: float = 0.0
    failures: int = 0
    _given_up: set[int] = field(default_factory=set)
    _issues: dict[int, Issue] | None = None
    _labels_read: bool = False

    def __post_init__(self) -> None:
        self.outbox = Outbox(self.store.engine, self.store.now)

    # -- the pass
    def send(self, limit: int = 200) -> SendResult:
        """Perform the unsent rows in order until one fails transiently (or none are left)."""
        result = SendResult()
        if self.clock() < self.not_before:
            result.wait_until = self.not_before
            return result
        rows = [r for r in self.outbox.pending(self.run_id, limit) if r.id not in self._given_up]
        self._labels_read = False
        for n, row in enumerate(rows):
            if self._superseded(row, rows[n + 1 :]):
                self.outbox.mark_sent(row.id)  # a later label change of the same task says more
                continue
            self.outbox.begin(row.id)
            try:
                self._perform(row)
            except GitHubError as exc:
                self.outbox.mark_failed(row.id, f"{row.kind} {row.key}: {exc}")
                result.failed += 1
                if exc.transient:
                    self.failures += 1
                    wait = self.clock() + self.backoff.delay(self.failures)
                    self.not_before = max(wait, exc.retry_at or 0.0)
                    result.wait_until = self.not_before
                    return result
                self._given_up.add(row.id)
                continue
            except PmAgentError as exc:
                self.outbox.mark_failed(row.id, f"{row.kind} {row.key}: {exc}")
                self._given_up.add(row.id)
                result.failed += 1
                continue
            self.outbox.mark_sent(row.id)
            self.failures = 0
            result.sent += 1
        return result

    def pending(self) -> int:
        """Unsent rows that a pass would try."""
        return len([r for r in self.outbox.pending(self.run_id) if r.id not in self._given_up])

    @staticmethod
    def _superseded(row: OutboxRecord, later: list[OutboxRecord]) -> bool:
        task = row.payload.get("task_id")
        return row.kind == R.LABELS and any(r.kind == R.LABELS and r.payload.get("task_id") == task for r in later)

    def _perform(self, row: OutboxRecord) -> None:
        retry = row.attempts > 0  # an earlier attempt may have reached GitHub
        if row.kind == R.RUN_ISSUE:
            self._run_issue(retry)
        elif row.kind == R.TASK_ISSUE:
            self._task_issue(str(row.payload["task_id"]), retry)
        elif row.kind == R.LABELS:
            self._labels(str(row.payload["task_id"]), str(row.payload["state"]))
        elif row.kind == R.TASK_DONE:
            self._done(row, str(row.payload["task_id"]), retry)
        elif row.kind == R.ESCALATION:
            self._escalation(row, retry)
        elif row.kind == R.ANSWERED:
            self._answered(row, retry)
        elif row.kind == R.REFUSED:
            self._comment(int(row.payload["issue"]), row.key, retry, lambda: render.refused_comment(
                int(row.payload["escalation_id"]), row.key, str(row.payload["author"])))  # fmt: skip
        elif row.kind == R.REPORT:
            self._report(row, retry)
        elif row.kind == R.TASK_PULL:
            self._task_pull(row, retry)
        elif row.kind == R.RELEASE:
            self._release(row, retry)
        elif row.kind == R.RUN_DONE:
            self._remember(self.api.update_issue(self._require(None), state="closed"))
        else:
            raise BridgeError(f"unknown outbox row kind {row.kind!r}")

    # -- issue numbers
    def issue_number(self, task_id: str) -> int | None:
        """The task's issue number, once known."""
        value = self.outbox.get_state(R.issue_key(self.run_id, task_id))
        return None if value is None else int(value)

    def run_issue_number(self) -> int | None:
        """The run issue's number, once known."""
        value = self.outbox.get_state(R.run_issue_key(self.run_id))
        return None if value is None else int(value)

    def load_issues(self) -> int:
        """Read the repository's `pm-agent` issues now (the bridge does at start); how many there are."""
        return len(self._known_issues(True))

    def _known_issues(self, refresh: bool) -> dict[int, Issue]:
        if self._issues is None or refresh:
            listed = {i.number: i for i in self.api.issues(labels=("pm-agent",), state="all")}
            self._issues = {**(self._issues or {}), **listed}  # an issue read by number and not labelled yet stays
        return self._issues

    def _find(self, marker: str, refresh: bool) -> Issue | None:
        # A fresh process (or an attempt that may have reached GitHub) reads the list again.
        for issue in self._known_issues(refresh).values():
            if marker in issue.body:
                return issue
        return None

    def _remember(self, issue: Issue) -> Issue:
        self._known_issues(False)[issue.number] = issue
        return issue

    def _run_issue(self, retry: bool) -> None:
        if self.run_issue_number() is not None:
            return
        run = self.store.get_run(self.run_id)
        issue = self._find(render.run_marker(self.run_id), retry) or self._remember(
            self.api.create_issue(render.run_title(run), render.run_body(run, {}), ("pm-agent", "pm-agent:run"))
        )
        self.outbox.set_state(R.run_issue_key(self.run_id), issue.number)

    def _task_issue(self, task_id: str, retry: bool) -> None:
        if self.issue_number(task_id) is not None:
            return
        record = self.store.get_task(self.run_id, task_id)
        given = issue_number(record.task())  # a task read from a GitHub issue keeps it
        if given is not None:
            self._remember(self.api.update_issue(given))  # changes nothing: reads its labels, a human's kept
            self.outbox.set_state(R.issue_key(self.run_id, task_id), given)
            self._labels(task_id, record.state.value)
            return
        labels = render.task_labels(record.tier.value, record.state.value)
        issue = self._find(render.task_marker(self.run_id, task_id), retry) or self._remember(
            self.api.create_issue(render.task_title(record), render.task_body(record, self.issue_number), labels)
        )
        self.outbox.set_state(R.issue_key(self.run_id, task_id), issue.number)

    def _require(self, task_id: str | None) -> int:
        number = self.issue_number(task_id) if task_id is not None else self.run_issue_number()
        if number is None:
            raise BridgeError(f"no issue for {'task ' + task_id if task_id else 'the run'} (its creation failed)")
        return number

    def _current_labels(self, number: int) -> tuple[str, ...]:
        """The issue's labels as GitHub has them now (a human may have added some), read once per pass."""
        known = self._known_issues(not self._labels_read).get(number)
        self._labels_read = True
        return known.labels if known is not None else ()

    def _labels(self, task_id: str, state: str) -> None:
        number = self._require(task_id)
        record = self.store.get_task(self.run_id, task_id)
        labels = render.task_labels(record.tier.value, state, self._current_labels(number))
        self._remember(self.api.update_issue(number, labels=labels))

    # -- comments
    def _comment(self, number: int, key: str, retry: bool, text: Callable[[], str]) -> None:
        marker = render.comment_marker(key)
        if retry and any(marker in c.body for c in self.api.comments(number)):
            return
        self.api.create_comment(number, text())

    def _done(self, row: OutboxRecord, task_id: str, retry: bool) -> None:
        number = self._require(task_id)
        record = self.store.get_task(self.run_id, task_id)
        self._comment(number, row.key, retry, lambda: render.done_comment(record, row.key))
        labels = render.task_labels(record.tier.value, "completed", self._current_labels(number))
        self._remember(self.api.update_issue(number, labels=labels, state="closed"))

    def _target(self, task_id: str | None) -> tuple[int, bool]:
        """The task's issue, or the run issue for the run's own escalations and tasks without an issue."""
        number = self.issue_number(task_id) if task_id is not None and task_id not in R.INTERNAL_TASKS else None
        return (number, False) if number is not None else (self._require(None), True)

    def _escalation(self, row: OutboxRecord, retry: bool) -> None:
        esc = self.store.get_escalation(int(row.payload["escalation_id"]))
        number, on_run = self._target(esc.task_id)
        run_issue = self.run_issue_number()
        self._comment(number, row.key, retry, lambda: render.escalation_comment(esc, row.key, run_issue, on_run))

    def _answered(self, row: OutboxRecord, retry: bool) -> None:
        esc = self.store.get_escalation(int(row.payload["escalation_id"]))
        number, _ = self._target(esc.task_id)
        taken = [e for e in self.store.events_of_kind(self.run_id, ["github.answer"])
                 if e.payload.get("escalation_id") == esc.id]  # fmt: skip
        via = (
            f"on GitHub by @{taken[-1].payload.get('author')}"
            if taken
            else "outside GitHub (in the terminal or with `pm-agent answer`)"
        )
        self._comment(number, row.key, retry, lambda: render.answered_comment(esc, row.key, via))

    def _report(self, row: OutboxRecord, retry: bool) -> None:
        report_id = int(row.payload["report_id"])
        found = [r for r in self.store.list_reports(self.run_id) if r.id == report_id]
        if not found:
            raise BridgeError(f"report {report_id} is not in the store")
        number = self._require(None)
        self._comment(number, row.key, retry, lambda: render.report_comment(found[0].kind, found[0].text, row.key))

    def _release(self, row: OutboxRecord, retry: bool) -> None:
        if self.release is None:
            raise BridgeError("the release cannot be published: the bridge was started without the repository")
        run = self.store.get_run(self.run_id)
        report_id = int(row.payload["report_id"])
        found = [r for r in self.store.list_reports(self.run_id, "handoff") if r.id == report_id]
        tasks = [r.task() for r in self.store.list_tasks(self.run_id) if r.task_id not in R.INTERNAL_TASKS]
        done = publish_release(
            self.api,
            self.release.repo_dir,
            self.release.remote,
            run.plan_id,
            summary=found[0].text if found else "",
            manifest=manifest_path(self.release.manifest_dir, run.plan_id),
            task_branches=kept_task_branches(run.plan_id, tasks),
            branch=run.working_branch,
        )
        number = self._require(None)
        self._comment(number, row.key, retry, lambda: render.release_comment(done, row.key))

    def _task_pull(self, row: OutboxRecord, retry: bool) -> None:
        """A kept CRITICAL branch's pull request into the working branch (pulls.open_task_pull), its link (or why
        there is none, recorded in the bridge state too) on the task's issue."""
        if self.release is None:
            raise BridgeError("the task's pull request cannot be opened: the bridge was started without the repository")
        task_id = str(row.payload["task_id"])
        record = self.store.get_task(self.run_id, task_id)
        work = str(row.payload.get("working_branch") or self.store.get_run(self.run_id).working_branch)
        head = str(row.payload["branch"])
        artifact = row.payload.get("review_artifact")
        task = record.task()
        body = task_pull_body(task.ref, record.title, task.tier_reason, str(artifact) if artifact else None, work)
        done = open_task_pull(
            self.api, self.release.repo_dir, self.release.remote, head=head, work=work,
            title=f"{task.ref}: {record.title} (CRITICAL, into {work})", body=body,
        )  # fmt: skip
        pull = done.pull
        self.outbox.set_state(row.key, pull.number if pull is not None else {"skipped": done.skipped})
        if pull is not None:
            text = f"Pull request #{pull.number} ({head} into {work}): {pull.html_url}"
        else:
            text = f"No pull request for `{head}` into `{work}`: {done.skipped}."
        self._comment(self._require(task_id), row.key, retry, lambda: f"{text}\n\n{render.comment_marker(row.key)}")
