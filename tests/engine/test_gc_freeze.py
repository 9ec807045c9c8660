"""A run leaves what its start made out of the collector's passes, and thaws only what it froze."""

from __future__ import annotations

import gc

from pm_agent.engine.api import _freeze_startup


def test_the_start_is_frozen_once_and_nothing_frozen_by_others_is_taken_over() -> None:
    assert gc.get_freeze_count() == 0
    kept = [object() for _ in range(10)]  # something alive at the start: frozen with the rest
    try:
        assert _freeze_startup() is True
        frozen = gc.get_freeze_count()
        assert frozen >= len(kept)
        assert _freeze_startup() is False, "already frozen (by the first call or by anyone): not this run's to thaw"
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
    assert gc.get_freeze_count() == 0
