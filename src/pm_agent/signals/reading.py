"""Reading a signal_back payload: its form read leniently, then validated, every problem said plainly.

`read_signal(data)` is the one entry point: it tidies the payload's form (`pm_agent.signals.leniency`),
validates it against the model of its kind, and returns the signal with notes of what it read
differently, or raises `SignalPayloadError` whose message lists each problem as `field: problem`, one
per line. `parse_signal(data)` is the same without the notes.
"""

from __future__ import annotations

import difflib
import functools
import json
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from pydantic.alias_generators import to_camel

from pm_agent.signals.forms import enum_reader
from pm_agent.signals.leniency import normalise
from pm_agent.signals.models import (
    SIGNAL_KINDS,
    SIGNAL_MODELS,
    AnySignal,
    NeedsRoleFollowupSignal,
    SignalPayloadError,
    field_order,
    show,
    wire_fields,
)

__all__ = ["SignalReading", "parse_signal", "read_signal", "signal_kind"]

_read_kind = enum_reader(SIGNAL_KINDS)


@dataclass(frozen=True)
class SignalReading:
    """A valid signal and what was read leniently to get it (`field: what changed`, in payload order)."""

    signal: AnySignal
    normalised: tuple[str, ...] = ()


def read_signal(data: Any) -> SignalReading:
    """Validate a signal_back payload, lenient about form (see `pm_agent.signals.leniency`).

    Raises SignalPayloadError (a SignalError) listing every problem as `field: problem`.
    """
    if not isinstance(data, dict):
        raise SignalPayloadError([f"(payload): must be an object, got {type(data).__name__}"])
    sent = data.get("signal")
    if sent is None:
        hint = " (the field is 'signal', not 'type')" if "type" in data else ""
        raise SignalPayloadError([f"signal: required; one of {', '.join(SIGNAL_KINDS)}{hint}"])
    kind, kind_note = _read_kind(sent)
    if not isinstance(kind, str) or kind not in SIGNAL_MODELS:
        close = difflib.get_close_matches(str(kind), SIGNAL_KINDS, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise SignalPayloadError(
            [f"signal: must be one of {', '.join(SIGNAL_KINDS)} (got {show(kind)}){hint}"]
        )
    model = SIGNAL_MODELS[kind]
    tidy, notes = normalise(model, {**data, "signal": kind}, _foreign_fields(kind))
    if kind_note:
        notes.insert(0, f"signal: {kind_note}")
    try:
        signal = model.model_validate(tidy)
    except ValidationError as exc:
        errors = sorted(
            exc.errors(include_url=False), key=lambda err: field_order(str(err["loc"][0]) if err["loc"] else "")
        )
        problems = [_problem(err, kind) for err in errors]
        raise SignalPayloadError(problems, kind=kind) from None
    sent_role = tidy.get("targetRole")
    if isinstance(signal, NeedsRoleFollowupSignal) and sent_role != signal.target_role:
        notes.append(f"targetRole: {show(sent_role)} read as {signal.target_role!r}")
    return SignalReading(signal, tuple(notes))


def parse_signal(data: Any) -> AnySignal:
    """Validate a signal_back payload (`read_signal` without the notes)."""
    return read_signal(data).signal


def signal_kind(value: Any) -> str | None:
    """The signal kind `value` names, read as `read_signal` reads it ("Complete" is complete), or None."""
    kind, _ = _read_kind(value)
    return kind if isinstance(kind, str) and kind in SIGNAL_MODELS else None


@functools.cache  # the models are fixed: one answer per kind, read-only for its callers (`normalise` only reads)
def _foreign_fields(kind: str) -> dict[str, str]:
    """The fields of the other signals that `kind` does not take, each with the first signal that does."""
    own = set(wire_fields(kind))
    foreign: dict[str, str] = {}
    for other in SIGNAL_KINDS:
        for name in wire_fields(other):
            if name not in own:
                foreign.setdefault(name, other)
    return foreign


def _loc(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            name = _clip_name(str(part))
            out += f".{name}" if out else name
    return out or "(payload)"


def _clip_name(name: str, limit: int = 64) -> str:
    """A field name as shown in a message: an agent's made-up key can be any length."""
    return name if len(name) <= limit else name[: limit - 3] + "..."


def _unknown_field(name: str, kind: str) -> str:
    allowed = wire_fields(kind)
    camel = to_camel(name) if "_" in name else name
    close = [camel] if camel in allowed else difflib.get_close_matches(name, allowed, n=1, cutoff=0.6)
    if close:
        return f"unknown field; did you mean {close[0]!r}?"
    owners = [k for k in SIGNAL_KINDS if k != kind and camel in wire_fields(k)]
    if owners:
        return f"not a field of the {kind} signal (it belongs to {owners[0]})"
    return f"unknown field; a {kind} signal takes: {', '.join(allowed)}"


def _problem(error: Any, kind: str) -> str:
    loc = tuple(error["loc"])
    kind_of = error["type"]
    if kind_of == "extra_forbidden":
        if len(loc) == 1:
            return f"{_clip_name(str(loc[0]))}: {_unknown_field(str(loc[0]), kind)}"
        return f"{_loc(loc)}: unknown field"
    if kind_of == "missing":
        return f"{_loc(loc)}: required"
    if kind_of == "string_too_short":
        return f"{_loc(loc)}: must not be empty"
    message = str(error["msg"])
    if kind_of == "value_error":
        return f"{_loc(loc)}: {message.removeprefix('Value error, ')}"
    message = message[:1].lower() + message[1:]
    sent = error["input"]
    if kind_of in ("model_type", "dict_type", "list_type") and isinstance(sent, str):
        return f"{_loc(loc)}: {_text_problem(sent, 'a list' if kind_of == 'list_type' else 'an object')}"
    if kind_of == "model_type":
        message = "input should be an object"
    if kind_of == "literal_error" or not kind_of.endswith("_type"):
        return f"{_loc(loc)}: {message} (got {show(error['input'])})"
    return f"{_loc(loc)}: {message} (got {type(error['input']).__name__})"


def _text_problem(sent: str, shape: str) -> str:
    """Why text is not the list or object wanted, saying so when it is JSON that does not parse."""
    if not sent.strip().startswith(("[", "{")):
        return f"must be {shape} (got str)"
    try:
        value = json.loads(sent)
    except ValueError as exc:
        return f"JSON text that does not parse ({exc}); send {shape}"
    got = "a list" if isinstance(value, list) else "an object" if isinstance(value, dict) else "other"
    if got == shape:
        return f"must be {shape} itself, not JSON text"
    return f"must be {shape} (got JSON text of {got})"
