"""How a value's form is read: the same meaning written the ways models write it.

Each reader takes one value as sent and returns it in the form the models validate, with a note
saying what it changed (None when nothing changed). A reader never guesses at meaning: a value it
cannot read is returned unchanged, for validation to refuse with its own message.

The models use the readers as pydantic before-validators through `Lenient`, so a model validated
directly reads the same forms; `pm_agent.signals.leniency` calls them too, to record the notes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

__all__ = [
    "Lenient",
    "Reader",
    "enum_reader",
    "is_blank",
    "is_empty",
    "read_id",
    "read_list",
    "read_object",
    "read_text_list",
]

Reader = Callable[[Any], tuple[Any, str | None]]


class Lenient:
    """A before-validator made of a reader: validation uses the value, `read` also gives the note."""

    def __init__(self, read: Reader) -> None:
        self.read = read

    def __call__(self, value: Any) -> Any:
        return self.read(value)[0]


def is_blank(value: Any) -> bool:
    """A string with nothing but whitespace in it."""
    return isinstance(value, str) and not value.strip()


def is_empty(value: Any) -> bool:
    """`null`, a blank string, `[]` or `{}`, also as JSON text ("[]", "{}", "null"): a value that says nothing."""
    if value is None or value == [] or value == {}:
        return True
    return isinstance(value, str) and value.strip() in ("", "[]", "{}", "null")


def read_list(value: Any) -> tuple[Any, str | None]:
    """A list sent as JSON text ('["a"]'), a lone string ("a") or blank text ("") is read as a list."""
    if not isinstance(value, str):
        return value, None
    text = value.strip()
    if not text:
        return [], f"{value!r} read as []"
    if text.startswith("["):
        try:
            decoded = json.loads(text)
        except ValueError:
            return value, None  # broken JSON is not guessed at; validation says it is not a list
        if isinstance(decoded, list):
            return decoded, "JSON text read as a list"
        return value, None
    return [value], "a single string read as a one-item list"


def read_text_list(value: Any) -> tuple[Any, str | None]:
    """`read_list`, then blank strings inside the list are dropped (they carry no evidence)."""
    value, note = read_list(value)
    if not isinstance(value, list):
        return value, note
    kept = [item for item in value if not is_blank(item)]
    dropped = len(value) - len(kept)
    if not dropped:
        return value, note
    entries = "1 blank entry" if dropped == 1 else f"{dropped} blank entries"
    return kept, _join(note, f"{entries} dropped")


def read_object(value: Any) -> tuple[Any, str | None]:
    """An object sent as JSON text ('{"summary": ...}') is read as the object."""
    if not (isinstance(value, str) and value.strip().startswith("{")):
        return value, None
    try:
        decoded = json.loads(value)
    except ValueError:
        return value, None
    if isinstance(decoded, dict):
        return decoded, "JSON text read as an object"
    return value, None


def read_id(value: Any) -> tuple[Any, str | None]:
    """An id sent as a number (3) is the text "3"; a boolean is not an id and stays as sent."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value), f"the number {value} read as {str(value)!r}"
    return value, None


def enum_reader(choices: Iterable[str]) -> Reader:
    """A reader that takes one of `choices` in any letter case, with surrounding spaces."""
    allowed = frozenset(choices)

    def read(value: Any) -> tuple[Any, str | None]:
        if not isinstance(value, str):
            return value, None
        folded = value.strip().lower()
        if folded == value or folded not in allowed:
            return value, None
        return folded, f"{value!r} read as {folded!r}"

    return read


def _join(first: str | None, second: str) -> str:
    return f"{first}, {second}" if first else second
