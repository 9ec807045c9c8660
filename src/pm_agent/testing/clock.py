"""A store clock for tests and benchmarks: it moves a fixed step per reading, so stored order is exact."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

START = datetime(2026, 2, 18, 9, 0, tzinfo=UTC)


class TickClock:
    """`step` later at each reading, from `start` (a zero step: every reading is the same instant)."""

    def __init__(self, start: datetime = START, step: timedelta = timedelta(seconds=1)) -> None:
        self.at = start
        self.step = step

    def __call__(self) -> datetime:
        self.at += self.step
        return self.at
