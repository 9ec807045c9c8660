"""The bridge thread of a run: sends the outbox and polls for answers while the run goes on locally.

    bridge = Bridge(api, db_path, run_id, config.github)
    bridge.start()        # after the run exists; outbox rows are written by the store hook (`enable`)
    ...
    left = bridge.stop()  # flush what is pending, for at most `flush_s` seconds

The thread has its own store connection; a GitHub that is down or rate-limited only delays the thread, never
the run: rows wait in the outbox and go out, in order, when GitHub answers again.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pm_agent.config import GitHubConfig, PmConfig
from pm_agent.errors import ConfigError, PmAgentError
from pm_agent.github.answers import AnswerPoller
from pm_agent.github.api import GitHubApi, GitHubError
from pm_agent.github.outbox import Backoff, ReleaseTarget, Sender
from pm_agent.github.rows import catch_up_rows, outbox_rows
from pm_agent.store import EscalationStatus, SqliteStore, open_store
from pm_agent.store.outbox import Outbox, register_hook, unregister_hook

FLUSH_S = 20.0
"""How long the end of a run waits for the outbox to empty."""
POLL_FAILED = "github.poll_failed"


def require_token(config: GitHubConfig) -> str:
    """The token from the variable `token_env` names; ConfigError naming the variable when it is unset or empty."""
    token = os.environ.get(config.token_env, "").strip()
    if not token:
        raise ConfigError(
            f"github.repo is {config.repo!r} but ${config.token_env} is not set: export a GitHub token in"
            f" {config.token_env} (or name another variable in github.token_env), or remove github.repo"
        )
    return token


def enable(db_path: Path) -> None:
    """From now on, state changes written to this store (by this process) write their GitHub outbox rows."""
    register_hook(db_path, outbox_rows)


def disable(db_path: Path) -> None:
    """Stop writing outbox rows for this store."""
    unregister_hook(db_path)


@dataclass
class Bridge:
    """Sender and poller of one run, in one daemon thread."""

    api: GitHubApi
    db_path: Path
    run_id: str
    config: GitHubConfig
    tick_s: float = 0.25
    backoff: Backoff = field(default_factory=Backoff)
    clock: Callable[[], float] = time.time
    release: ReleaseTarget | None = None
    """Where the release is pushed from (the run's repository); None: no pull request."""
    last_error: str | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _store: SqliteStore | None = None
    _sender: Sender | None = None
    _poller: AnswerPoller | None = None
    _next_poll: float = 0.0

    def start(self) -> None:
        """Open the bridge's own store connection and start the thread."""
        enable(self.db_path)
        self._store = open_store(self.db_path)
        self._catch_up(self._store)
        self._sender = Sender(
            self.api, self._store, self.run_id, backoff=self.backoff, clock=self.clock, release=self.release
        )
        self._poller = AnswerPoller(self.api, self._store, self.run_id, tuple(self.config.answerers))
        self._thread = threading.Thread(target=self._loop, name="pm-agent-github", daemon=True)
        self._thread.start()

    def _catch_up(self, store: SqliteStore) -> None:
        """Queue the issues (and open questions) of a run that began without the bridge; no-op keys otherwise."""
        tasks = store.task_ids(self.run_id)
        asked = [(e.id, e.task_id) for e in store.list_escalations(self.run_id, EscalationStatus.OPEN)]
        Outbox(store.engine, store.now).add(self.run_id, catch_up_rows(self.run_id, tasks, asked))

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.step()
            except Exception as exc:  # a bug or an unmapped library error must not end the thread: the run
                self._poll_failed(f"bridge error: {type(exc).__name__}: {exc}")  # goes on, the outbox waits
            self._stop.wait(self.tick_s)

    def step(self) -> None:
        """One pass: send what is pending; poll for comments when it is time and GitHub is not backing off."""
        if self._sender is None or self._poller is None:
            raise PmAgentError("Bridge.step() before Bridge.start()")
        try:
            self._sender.send()
        except PmAgentError as exc:  # the store itself failed (locked past its timeout): next pass
            self.last_error = str(exc)
        now = self.clock()
        if now < self._next_poll or now < self._sender.not_before:
            return
        self._next_poll = now + self.config.poll_interval_s
        try:
            self._poller.poll()
        except GitHubError as exc:
            if exc.retry_at is not None:
                self._next_poll = max(self._next_poll, exc.retry_at)
            self._poll_failed(str(exc))
        except PmAgentError as exc:
            self._poll_failed(str(exc))

    def _poll_failed(self, error: str) -> None:
        """Record a failure as an event, once while it repeats."""
        if error != self.last_error and self._store is not None:
            with contextlib.suppress(PmAgentError):  # the store is busy or gone: last_error still says it
                self._store.append_event(self.run_id, POLL_FAILED, {"error": error})
        self.last_error = error

    def pending(self) -> int:
        """Rows the sender would still try."""
        return self._sender.pending() if self._sender is not None else 0

    def stop(self, flush_s: float = FLUSH_S) -> int:
        """Stop the thread, then send what is pending for at most `flush_s` seconds; the rows left unsent."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        left = 0
        if self._sender is not None:
            deadline = time.monotonic() + flush_s
            while (left := self._sender.pending()) and time.monotonic() < deadline:
                result = self._sender.send()
                if result.wait_until is not None:
                    pause = min(result.wait_until - self.clock(), deadline - time.monotonic())
                    if pause > 0:
                        time.sleep(pause)
                elif not result.sent:
                    break  # what is left failed for good in this process
        if self._store is not None:
            self._store.close()
        disable(self.db_path)
        return left


def github_api(config: PmConfig) -> GitHubApi | None:
    """The GitHub client of a run whose configuration turns the bridge on (None when it does not)."""
    if config.github.repo is None:
        return None
    token = require_token(config.github)
    from pm_agent.github.client import GitHubClient  # githubkit is loaded only when the bridge is on

    return GitHubClient(config.github.repo, config.github.api_url, token)
