"""Words a path pattern's hits must hold, so that most paths are ruled out without running the pattern.

The path patterns (tier_rules.py) are alternations such as `(^|/)(migrations?|alembic)/|\\.sql$`: the
regex engine tries them at every position of the path, a few microseconds a path and pattern. Every
hit of an alternative holds the literal text its mandatory parts spell, so a path holding none of
the words found this way for any alternative cannot hit the pattern. Only what is sure is taken:
an alternative with no mandatory literal (or anything this reading does not know) makes the pattern
unfilterable, and then it always runs.
"""

from __future__ import annotations

_QUANTIFIERS = "?*{"


def _group_end(text: str, start: int) -> int:
    """The index of the `)` closing the group opened at text[start]."""
    depth, index = 0, start
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == "[":
            index = _class_end(text, index)
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    raise ValueError("unbalanced group")


def _class_end(text: str, start: int) -> int:
    """The index of the `]` closing the character class opened at text[start]."""
    index = start + 1
    if index < len(text) and text[index] == "^":
        index += 1
    if index < len(text) and text[index] == "]":
        index += 1
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        if text[index] == "]":
            return index
        index += 1
    raise ValueError("unbalanced class")


def split_alternatives(body: str) -> list[str]:
    """The top-level alternatives of a regex (`a|b(c|d)` -> `a`, `b(c|d)`)."""
    found: list[str] = []
    start, index = 0, 0
    while index < len(body):
        char = body[index]
        if char == "\\":
            index += 2
            continue
        if char == "[":
            index = _class_end(body, index)
        elif char == "(":
            index = _group_end(body, index)
        elif char == "|":
            found.append(body[start:index])
            start = index + 1
        index += 1
    return [*found, body[start:]]


def _optional(text: str, index: int) -> bool:
    """Whether the element ending just before `index` may be absent (`?`, `*`, `{0,...}` follow it)."""
    return index < len(text) and text[index] in _QUANTIFIERS


def _group_words(alternative: str, start: int) -> tuple[frozenset[str] | None, int]:
    """The words one of which the group opened at `start` surely holds (None if unsure), and where it ends."""
    end = _group_end(alternative, start)
    inner = alternative[start + 1 : end]
    if inner.startswith("?:"):
        inner = inner[2:]
    elif inner.startswith("?"):
        return None, end + 1  # a lookaround or flags: no text of its own
    if _optional(alternative, end + 1):
        return None, end + 1
    words = [required_words(part) for part in split_alternatives(inner)]
    if any(w is None for w in words):
        return None, end + 1
    return frozenset(word for w in words if w is not None for word in w), end + 1


def required_words(alternative: str) -> frozenset[str] | None:
    """Words one of which every hit of the alternative holds (the most telling such set), or None."""
    choices: list[frozenset[str]] = []
    run: list[str] = []

    def close_run() -> None:
        if run:
            choices.append(frozenset(("".join(run),)))
            run.clear()

    index = 0
    while index < len(alternative):
        char = alternative[index]
        if char == "\\":
            if index + 1 < len(alternative) and not alternative[index + 1].isalnum():
                literal, index = alternative[index + 1], index + 2
            else:  # `\b`, `\d`, `\1`, ...: no literal text
                close_run()
                index += 2
                continue
        elif char == "(":
            close_run()
            group, index = _group_words(alternative, index)
            if group is not None:
                choices.append(group)
            continue
        elif char == "[":
            close_run()
            index = _class_end(alternative, index) + 1
            continue
        elif char in ".^$+*?{}|)":
            close_run()
            index += 1
            if char == "{":
                index = alternative.index("}", index) + 1
            continue
        else:
            literal, index = char, index + 1
        if _optional(alternative, index):
            close_run()  # the character may be absent: the run ends before it
            continue
        run.append(literal)
    close_run()
    usable = [c for c in choices if c and "" not in c]
    if not usable:
        return None
    return max(usable, key=lambda c: min(len(word) for word in c))


def pattern_words(source: str) -> tuple[str, ...] | None:
    """Words (lowercase) one of which every hit of the pattern holds, or None when that cannot be told."""
    found: set[str] = set()
    try:
        for alternative in split_alternatives(source):
            words = required_words(alternative)
            if words is None:
                return None
            found.update(word.lower() for word in words)
    except ValueError:
        return None
    return tuple(sorted(found))
