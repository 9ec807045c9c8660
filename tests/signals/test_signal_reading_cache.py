"""Reading a signal with the per-kind and per-model answers cached reads it exactly as without the caches.

`reading._foreign_fields` and `leniency._wire_fields` are `functools.cache`d; here each is swapped for its
uncached function (`__wrapped__`) and many payloads of every kind, in every form the leniency reads, must give
the same signal and notes, or the same problems, both ways.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from pm_agent.signals import SIGNAL_KINDS, SignalPayloadError, leniency, read_signal, reading
from pm_agent.signals.models import wire_fields

VALUES: list[Any] = [
    None,
    "",
    "  ",
    [],
    {},
    "text",
    "Confident",
    "fixer",
    "Developer",
    3,
    True,
    ["a", "", "b"],
    "[]",
    '["x", "y"]',
    '{"summary": "s", "rollback": "r", "risks": []}',
    {"summary": "s", "rollback": "r", "risks": None},
    {"summary": "", "rollback": None},
    [{"criterion": "c", "location": "f.py:1"}, {"criterion": "", "location": None}],
    '[{"criterion": "c", "location": "f.py:1"}]',
    [json.dumps({"criterion": "c", "location": "x"})],
]


VALID: dict[str, dict[str, Any]] = {
    "complete": {"stepId": "3", "summary": "done"},
    "partially-complete": {"stepId": "3", "summary": "half", "progress": "p", "continuationPoint": "c"},
    "needs-user-input": {"stepId": "3", "question": "which?"},
    "needs-role-followup": {"stepId": "3", "targetRole": "fixer", "reason": "r", "context": "c", "resume": True},
}


def _payload(rnd: random.Random) -> dict[str, Any]:
    """A valid payload of some kind, with a few fields (its own, other signals', made up) set to other forms."""
    kind = rnd.choice(SIGNAL_KINDS)
    data: dict[str, Any] = {"signal": rnd.choice([kind, kind, kind.title(), "nope"]), **VALID.get(kind, {})}
    every = sorted({name for k in SIGNAL_KINDS for name in wire_fields(k)} - {"signal"})
    for name in rnd.sample(every, rnd.randint(0, 4)):
        data[name] = rnd.choice(VALUES)
    if rnd.random() < 0.05:
        data["madeUp"] = rnd.choice(VALUES)
    return data


def _read(data: dict[str, Any]) -> tuple[str, Any]:
    try:
        got = read_signal(data)
    except SignalPayloadError as exc:
        return "refused", exc.problems
    return "read", (type(got.signal).__name__, got.signal.model_dump(mode="json"), got.normalised)


def test_cached_and_uncached_reading_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    rnd = random.Random(5)
    payloads = [_payload(rnd) for _ in range(1500)]
    cached = [_read(p) for p in payloads]
    monkeypatch.setattr(reading, "_foreign_fields", reading._foreign_fields.__wrapped__)
    monkeypatch.setattr(leniency, "_wire_fields", leniency._wire_fields.__wrapped__)
    uncached = [_read(p) for p in payloads]
    assert cached == uncached
    outcomes = {outcome for outcome, _ in cached}
    assert outcomes == {"read", "refused"}  # both paths were exercised
    assert sum(outcome == "read" for outcome, _ in cached) > 100
