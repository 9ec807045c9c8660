"""Lenient about form, strict about meaning: a signal payload tidied before validation, with notes.

signal_back offers one flat schema with every field of every signal, and models fill it in their
own ways: `null` or `""` in the fields of the signals they are not sending, `null` for a list they
have nothing to put in, `"Confident"` for `confident`, blank lines inside evidence lists, lists and
objects as JSON text. Each refusal costs the agent a turn, so these are read here, and each change
is noted so the stored signal says what pm-agent read differently from what was sent.

What is left alone, for validation to refuse with its message: a non-empty value in another
signal's field, an unknown field, a wrong type, a missing required field (a `null` required field
is treated as missing, so the message says "required").
"""

from __future__ import annotations

import functools
import types
from collections.abc import Mapping
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, BeforeValidator
from pydantic.fields import FieldInfo

from pm_agent.signals.forms import Lenient, is_empty

__all__ = ["normalise"]


def normalise(
    model: type[BaseModel], data: Mapping[str, Any], foreign: Mapping[str, str] | None = None
) -> tuple[dict[str, Any], list[str]]:
    """`data` with its form read for `model`, and one `field: what changed` note per change.

    `foreign` maps the fields of the other signals to the signal they belong to; an empty value in
    one of them is dropped. Nested models (reviewNote, criteriaMapping items) are read the same way.
    """
    notes: list[str] = []
    return _normalise(model, data, foreign or {}, "", notes), notes


def _normalise(
    model: type[BaseModel], data: Mapping[str, Any], foreign: Mapping[str, str], prefix: str, notes: list[str]
) -> dict[str, Any]:
    fields = _wire_fields(model)
    out: dict[str, Any] = {}
    for key, value in data.items():
        where = f"{prefix}{key}"
        field = fields.get(key)
        if field is None:
            if key in foreign and is_empty(value):
                notes.append(f"{where}: {_shown(value)} ignored (a {foreign[key]} field)")
            else:
                out[key] = value  # unknown, or another signal's field with a value: validation refuses it
            continue
        info = field[0]
        if value is None:
            if info.is_required():
                continue  # validation reports it as required
            default = info.get_default(call_default_factory=True)
            if default is not None:
                notes.append(f"{where}: null read as {_shown(default)}")
                continue
        out[key] = _read(field, value, where, notes)
    return out


# A field as the reading needs it: its info, and the model inside it (if any) and whether it is a list of them.
Field = tuple[FieldInfo, type[BaseModel] | None, bool]


@functools.cache  # a model's fields are fixed once it is defined; every payload of a kind reads the same ones
def _wire_fields(model: type[BaseModel]) -> dict[str, Field]:
    """The model's fields by their wire name (the alias when there is one); read-only for the callers."""
    return {info.alias or name: (info, *_nested_model(info.annotation)) for name, info in model.model_fields.items()}


def _read(field: Field, value: Any, where: str, notes: list[str]) -> Any:
    """One field's value through the field's own reader, then into a nested model if it has one."""
    info, nested, many = field
    for meta in info.metadata:
        if isinstance(meta, BeforeValidator) and isinstance(meta.func, Lenient):
            value, note = meta.func.read(value)
            if note:
                notes.append(f"{where}: {note}")
    if nested is None:
        return value
    if many and isinstance(value, list):
        return [
            _normalise(nested, item, {}, f"{where}[{n}].", notes) if isinstance(item, dict) else item
            for n, item in enumerate(value)
        ]
    if not many and isinstance(value, dict):
        return _normalise(nested, value, {}, f"{where}.", notes)
    return value


def _nested_model(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """The model inside `X`, `X | None` or `list[X]`, and whether it is a list."""
    origin = get_origin(annotation)
    if origin is list:
        inner, _ = _nested_model(get_args(annotation)[0])
        return inner, True
    if origin in (Union, types.UnionType):
        for option in get_args(annotation):
            inner, many = _nested_model(option)
            if inner is not None:
                return inner, many
        return None, False
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    return None, False


def _shown(value: Any) -> str:
    if value is None:
        return "null"
    if value == []:
        return "[]"
    if value == {}:
        return "{}"
    return repr(value)
