"""Naming a few items of a list in a message: `a, b, c and 4 more`."""

from __future__ import annotations

from collections.abc import Sequence


def few(items: Sequence[str], limit: int) -> str:
    """The first `limit` items joined by commas, then how many more there are."""
    more = len(items) - limit
    return ", ".join(items[:limit]) + (f" and {more} more" if more > 0 else "")
