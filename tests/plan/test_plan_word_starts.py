"""tiers._WORD_STARTS finds the first three characters of each word, as a lookbehind at every position does."""

from __future__ import annotations

import random
import re

from pm_agent.plan.tiers import _WORD_STARTS

PIECES = ("a", "ab", "abc", "abcd", "0", "12", "x9y", " ", "-", "_", "/", ".", "\n", "auth", "é", "ß")
# The pattern before: the characters after a position where no letter or digit stands before.
_LOOKBEHIND = re.compile(r"(?<![a-z0-9])[a-z0-9]{1,3}")


def test_word_starts_are_the_lookbehind_patterns() -> None:
    rng = random.Random(9)
    for _ in range(20_000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 10)))
        assert _WORD_STARTS.findall(text) == _LOOKBEHIND.findall(text), repr(text)
