"""The tool schema is assembled from fields written out in `signals/_tool_fields.py`: byte for byte what the
pydantic models give, for every role's kinds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pm_agent.lifecycle.roles import Role
from pm_agent.signals import _tool_fields as written
from pm_agent.signals.desk import allowed_kinds
from pm_agent.signals.models import SIGNAL_KINDS, SIGNAL_MODELS, WIRE_FIELD_ORDER, target_role_names
from pm_agent.signals.server import _inline, input_schema, model_kind_fields, tool_fields_source

REGENERATE = (
    "regenerate: python -c \"from pm_agent.signals.server import tool_fields_source as s; "
    "open('src/pm_agent/signals/_tool_fields.py', 'w').write(s())\""
)


def pydantic_schema(kinds: list[str]) -> dict[str, Any]:
    """The schema as the server built it from the models before the fields were written out (the oracle)."""
    properties: dict[str, Any] = {}
    used_by: dict[str, list[str]] = {}
    for kind in kinds:
        schema = SIGNAL_MODELS[kind].model_json_schema(by_alias=True)
        defs = schema.get("$defs", {})
        required = set(schema.get("required", []))
        for name, prop in schema["properties"].items():
            used_by.setdefault(name, []).append(kind + (" (required)" if name in required else ""))
            properties.setdefault(name, _inline(prop, defs))
    properties["signal"] = {"type": "string", "enum": kinds, "description": "Which signal: " + ", ".join(kinds) + "."}
    if "targetRole" in properties:
        properties["targetRole"] = {**properties["targetRole"], "enum": target_role_names()}
    for name, prop in properties.items():
        if name != "signal":
            prop["description"] = f"{prop.get('description', '').strip()} Used by: {', '.join(used_by[name])}."
    ordered = {name: properties[name] for name in WIRE_FIELD_ORDER if name in properties}
    return {"type": "object", "properties": ordered, "required": ["signal", "stepId"], "additionalProperties": False}


def test_the_written_fields_are_the_models() -> None:
    assert Path(written.__file__).read_text(encoding="utf-8") == tool_fields_source(), REGENERATE
    assert {kind: model_kind_fields(kind) for kind in SIGNAL_KINDS} == written.FIELDS


def test_every_roles_schema_is_byte_identical_to_the_pydantic_one() -> None:
    kind_sets = {tuple(allowed_kinds(role)) for role in Role} | {tuple(SIGNAL_KINDS)}
    assert len(kind_sets) > 2
    for kinds in sorted(kind_sets):
        if not kinds:
            continue
        expected = json.dumps(pydantic_schema(list(kinds)), ensure_ascii=False)
        assert json.dumps(input_schema(list(kinds)), ensure_ascii=False) == expected, kinds
        assert json.dumps(input_schema(list(kinds)), ensure_ascii=False) == expected  # no shared state mutated
    assert json.dumps(input_schema()) == json.dumps(pydantic_schema(list(SIGNAL_KINDS)))
