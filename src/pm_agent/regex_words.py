"""The literal words a regular expression's matches must hold, read from its parse tree.

A search for those words (one regex of them, `words_pattern`) costs a fraction of the expression's own
search at every position, so a text holding none of them is ruled out first: redaction's prefilter
(redaction.py) and the path rules of tier classification (plan/tiers.py) both use it. Only what is sure
is taken: a part this reading does not know makes the answer None, and the expression always runs.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import Any

_sre: Any = importlib.import_module("re._constants")
_sre_parser: Any = importlib.import_module("re._parser")
_MAX_WORDS = 128  # strings in one word set; beyond it a sequence is cut into shorter runs


def _joined(parts: list[set[str]]) -> set[str]:
    found = {""}
    for part in parts:
        found = {a + b for a in found for b in part}
    return found


def _language(items: Any) -> set[str] | None:
    """Every string the parsed sequence `items` can match, when they are few; else None."""
    parts: list[set[str]] = []
    for op, av in items:
        options = _item_language(op, av)
        if options is None:
            return None
        parts.append(options)
        if len(_joined(parts)) > _MAX_WORDS:
            return None
    return _joined(parts)


def _item_language(op: Any, av: Any) -> set[str] | None:
    """Every string one parsed item can match, when they are few; a zero-width assertion matches ""."""
    if op is _sre.LITERAL:
        return {chr(av)}
    if op is _sre.IN:
        return {chr(code) for _, code in av} if all(kind is _sre.LITERAL for kind, _ in av) else None
    if op in (_sre.AT, _sre.ASSERT, _sre.ASSERT_NOT):
        return {""}
    if op is _sre.SUBPATTERN:
        return None if av[1] or av[2] else _language(av[3])
    if op is _sre.BRANCH:
        found = _each_branch(av[1], _language)
        return found if found is not None and len(found) <= _MAX_WORDS else None
    if op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT) and av[1] <= 2:
        inner = _language(av[2])
        if inner is None:
            return None
        return set().union(*(_joined([inner] * count) for count in range(av[0], av[1] + 1)))
    return None


def _required(items: Any) -> set[str] | None:
    """Strings one of which is in every match of the parsed sequence `items` (the longest such set found)."""
    best: set[str] = set()

    def consider(found: set[str] | None) -> None:
        nonlocal best
        if found and min(map(len, found)) > min(map(len, best), default=0):
            best = found

    run: list[set[str]] = []
    for op, av in items:
        options = _item_language(op, av)
        if options is None:
            consider(_joined(run))
            run = []
            consider(_required_inside(op, av))
            continue
        run.append(options)
        # A run's start may be dropped (what is left is still in every match), not its middle.
        while len(run) > 1 and len(_joined(run)) > _MAX_WORDS:
            consider(_joined(run[:-1]))
            run.pop(0)
    consider(_joined(run))
    return best or None


def _required_inside(op: Any, av: Any) -> set[str] | None:
    if op is _sre.SUBPATTERN and not (av[1] or av[2]):
        return _required(av[3])
    if op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT) and av[0] >= 1:
        return _required(av[2])
    if op is _sre.BRANCH:
        return _each_branch(av[1], _required)
    return None


def _each_branch(alternatives: Any, read: Callable[[Any], set[str] | None]) -> set[str] | None:
    """The union of what `read` finds in every alternative of a branch; None if one yields nothing sure."""
    found: set[str] = set()
    for alternative in alternatives:
        words = read(alternative)
        if words is None:
            return None
        found |= words
    return found


def words_pattern(words: set[str]) -> str:
    """A regex matching where any of `words` starts, as a trie (re tries alternatives one by one)."""
    tree: dict[str, Any] = {}
    for word in words:
        node = tree
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        if "" in node:  # a shorter word ends here: its longer continuations add nothing
            return ""
        options = [re.escape(char) + emit(child) for char, child in sorted(node.items())]
        return options[0] if len(options) == 1 else "(?:" + "|".join(options) + ")"

    return emit(tree)


def required_words(pattern: str, flags: int = 0) -> set[str] | None:
    """Strings one of which is in every match of `pattern` (as written: lower them for a case-blind
    search), or None when that cannot be told."""
    return _required(_sre_parser.parse(pattern, flags))
