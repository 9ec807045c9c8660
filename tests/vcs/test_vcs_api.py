"""The vcs package's public API is what `__all__` says."""

from __future__ import annotations

import pm_agent.vcs as vcs


def test_every_exported_name_exists() -> None:
    for name in vcs.__all__:
        assert hasattr(vcs, name), name
