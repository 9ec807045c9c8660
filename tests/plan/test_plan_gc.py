"""load_plan pauses the cyclic garbage collector and leaves it as it found it."""

from __future__ import annotations

import gc
from pathlib import Path

from pm_agent.plan import load_plan

PLAN = Path(__file__).parent / "fixtures" / "2026-03-02-team-invoices.md"


def test_collector_back_on_and_nothing_left_frozen() -> None:
    assert gc.isenabled()
    load_plan(PLAN)
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_collector_left_off_when_it_was_off() -> None:
    gc.disable()
    try:
        load_plan(PLAN)
        assert not gc.isenabled()
    finally:
        gc.enable()


def _in_a_generation(obj: object) -> bool:
    return any(any(o is obj for o in gc.get_objects(generation=g)) for g in range(3))


def test_objects_frozen_by_someone_else_stay_frozen() -> None:
    # Not the freeze count: frozen objects freed by reference counting during the load lower it legitimately.
    # A live object frozen before the load must still be outside every generation after it.
    sentinel: list[object] = [object()]
    assert gc.is_tracked(sentinel)
    gc.freeze()
    try:
        assert not _in_a_generation(sentinel)
        load_plan(PLAN)
        assert gc.get_freeze_count() > 0
        assert not _in_a_generation(sentinel)
    finally:
        gc.unfreeze()
    assert _in_a_generation(sentinel)


def test_the_plan_is_collectable_afterwards() -> None:
    # The plan's objects go to the old generation, not the permanent one: a full pass still sees them.
    before = len(gc.get_objects(generation=2))
    plan = load_plan(PLAN)
    assert len(gc.get_objects(generation=2)) > before
    assert gc.get_freeze_count() == 0
    del plan
