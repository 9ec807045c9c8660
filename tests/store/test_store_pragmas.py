"""`apply_pragmas`: a new connection's pragmas, retried while SQLite answers "database is locked" at once."""

from __future__ import annotations

import sqlite3

import pytest

from pm_agent.store._connect import PRAGMAS, apply_pragmas


class Flaky:
    """An `execute` that says "database is locked" `fails` times for the WAL switch, then runs."""

    def __init__(self, fails: int, error: str = "database is locked") -> None:
        self.fails, self.error, self.ran = fails, error, []

    def __call__(self, pragma: str) -> None:
        if "journal_mode" in pragma and self.fails:
            self.fails -= 1
            raise sqlite3.OperationalError(self.error)
        self.ran.append(pragma)


def test_a_locked_answer_is_retried_and_every_pragma_runs_once_in_order() -> None:
    execute = Flaky(fails=3)
    apply_pragmas(execute)
    assert execute.ran == list(PRAGMAS)
    assert execute.fails == 0


def test_another_error_is_not_retried() -> None:
    execute = Flaky(fails=1, error="disk I/O error")
    with pytest.raises(sqlite3.OperationalError, match="disk I/O error"):
        apply_pragmas(execute)
    assert execute.ran == [PRAGMAS[0]]


def test_a_lock_that_lasts_past_the_limit_is_raised() -> None:
    execute = Flaky(fails=10**6)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        apply_pragmas(execute, limit_s=0.1)
    assert execute.fails > 10**6 - 100  # a bounded number of tries
