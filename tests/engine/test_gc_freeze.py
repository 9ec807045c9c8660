"""A run leaves what its start made out of the collector's passes, and thaws only what it froze."""

from __future__ import annotations

import gc

from pm_agent.engine.api import _freeze_startup


def _collectable(obj: object) -> bool:
    """True when the collector still walks `obj` (frozen objects are in none of its generations)."""
    return any(o is obj for o in gc.get_objects())


def test_the_start_is_frozen_once_and_nothing_frozen_by_others_is_taken_over() -> None:
    assert gc.get_freeze_count() == 0
    kept: list[object] = [object() for _ in range(10)]  # alive at the start: frozen with the rest
    try:
        assert _freeze_startup() is True
        assert gc.get_freeze_count() >= len(kept)
        assert not _collectable(kept)
        # The count is no witness here: a frozen object another thread lets go of leaves the count.
        later: list[object] = []
        assert _freeze_startup() is False, "already frozen (by the first call or by anyone): not this run's to thaw"
        assert _collectable(later), "a second freeze took over what was made after the first"
    finally:
        gc.unfreeze()
    assert gc.get_freeze_count() == 0
    assert _collectable(kept)
