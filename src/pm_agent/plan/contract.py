"""Fenced ```yaml blocks carrying seed 001's task_contract fields, read with plan-file line numbers."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from pm_agent.errors import PlanError
from pm_agent.plan import fields
from pm_agent.plan.models import EnvironmentContract, ExpectedFiles, IOContract, SecurityFlags, Tier
from pm_agent.plan.refs import parse_refs

# Keys a contract block may carry; each maps onto a Task field.
CONTRACT_KEYS = frozenset(
    {
        "task_id",
        "title",
        "description",
        "steps",
        "tier",
        "ownership",
        "acceptance_criteria",
        "expected_files",
        "non_goals",
        "tests_to_add",
        "tests_to_run",
        "io_contract",
        "environment",
        "security_flags",
        "depends_on",
    }
)
# Seed 001 contract keys pm-agent fills in itself (budgets, definition of done, context): accepted, unused.
PM_OWNED_KEYS = frozenset({"definition_of_done", "context", "retry_budget", "time_budget_ms", "patch_size_limit"})
_DISTINCTIVE = (
    "task_contract",
    "task_id",
    "acceptance_criteria",
    "expected_files",
    "non_goals",
    "tests_to_add",
    "tests_to_run",
    "io_contract",
    "security_flags",
    "depends_on",
)
_LOOKS_LIKE_CONTRACT = re.compile(rf"^\s*(?:{'|'.join(_DISTINCTIVE)})\s*:", re.MULTILINE)
_FILE_KEYS = ("create", "modify", "delete", "test")
M = TypeVar("M", bound=BaseModel)


@dataclass
class Contract:
    """The fields one yaml block sets; None / empty means the block does not set it."""

    line: int
    task_id: str | None = None
    title: str | None = None
    description: str | None = None
    tier: Tier | None = None
    ownership: str | None = None
    depends_on: list[str] | None = None
    # acceptance_criteria, non_goals, tests_to_add, tests_to_run, steps
    lists: dict[str, list[str]] = field(default_factory=dict)
    expected_files: ExpectedFiles | None = None
    io_contract: IOContract | None = None
    environment: EnvironmentContract | None = None
    security_flags: SecurityFlags | None = None
    ignored: list[str] = field(default_factory=list)


def is_contract_block(info: str, text: str) -> bool:
    """A ```yaml fence is a task contract when tagged so (```yaml contract) or it uses contract keys.

    Other yaml blocks in a plan (a docker-compose file, a CI workflow) are example code and left alone.
    """
    words = info.strip().lower().split()
    if not words or words[0] not in ("yaml", "yml"):
        return False
    if any(w in ("contract", "task_contract", "task") for w in words[1:]):
        return True
    return _LOOKS_LIKE_CONTRACT.search(text) is not None


class _Reader:
    def __init__(self, text: str, fence_line: int, path: Path | str | None) -> None:
        self.base = fence_line + 1  # plan line of the block's first content line
        self.fence_line = fence_line
        self.path = path
        self.text = text

    def error(self, message: str, line: int | None = None) -> PlanError:
        return PlanError(message, path=self.path, line=line if line is not None else self.fence_line)

    def load(self) -> tuple[yaml.Node | None, Any]:
        # Every level of nesting takes one of these characters: below the bound neither loader can run
        # out of stack, so they agree; deeper text is left to the pure loader, which says where it fails.
        if sum(self.text.count(c) for c in "[{:-?") < _FAST_NESTING:
            try:
                node, data = _compose(self.text, _FAST_LOADER)
            except yaml.YAMLError:
                node = None  # libyaml refused it: the pure loader says why, with its own words
            if node is not None:
                return node, data
        return self.load_pure()

    def load_pure(self) -> tuple[yaml.Node | None, Any]:
        try:
            node, data = _compose(self.text, yaml.SafeLoader)
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line = self.base + mark.line if mark is not None else None
            raise self.error(f"invalid yaml in task contract: {exc.problem or exc.context}", line) from None
        except yaml.YAMLError as exc:
            raise self.error(f"invalid yaml in task contract: {exc}") from None
        except RecursionError:
            # PyYAML composes recursively: `[[[[...` a few hundred levels deep overflows the stack.
            raise self.error("invalid yaml in task contract: nested too deeply") from None
        return node, data

    def key_lines(self, node: yaml.Node | None) -> dict[str, int]:
        if not isinstance(node, yaml.MappingNode):
            return {}
        return {str(k.value): self.base + k.start_mark.line for k, _ in node.value}

    def value_node(self, node: yaml.Node | None, key: str) -> yaml.Node | None:
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if str(k.value) == key:
                    found: yaml.Node = v
                    return found
        return None


# libyaml's loader when PyYAML has it: the same constructor, a parser in C, 10x faster.
_FAST_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_FAST_NESTING = 150


def _compose(text: str, loader_class: type[yaml.SafeLoader]) -> tuple[yaml.Node | None, Any]:
    """The document's node (for line numbers) and the data constructed from it, from one parse."""
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()
    return node, data


def read_contract(text: str, fence_line: int, path: Path | str | None) -> Contract:
    """Parse one contract block; PlanError with the plan line on bad yaml, unknown keys or bad values."""
    reader = _Reader(text, fence_line, path)
    node, data = reader.load()
    if data is None:
        return Contract(line=fence_line)
    if not isinstance(data, dict):
        raise reader.error("a task contract yaml block must be a mapping of contract fields")
    lines = reader.key_lines(node)
    if "task_contract" in data:
        extra = [k for k in data if k != "task_contract"]
        if extra:
            raise reader.error(f"unknown key {extra[0]!r} in task contract", lines.get(str(extra[0])))
        node = reader.value_node(node, "task_contract")
        data = data["task_contract"]
        if not isinstance(data, dict):
            raise reader.error("task_contract must be a mapping", lines.get("task_contract"))
        lines = reader.key_lines(node)
    contract = Contract(line=fence_line)
    for key, value in data.items():
        key_text = str(key)
        line = lines.get(key_text, fence_line)
        if key_text in PM_OWNED_KEYS:
            contract.ignored.append(key_text)
            continue
        if key_text not in CONTRACT_KEYS:
            raise reader.error(f"unknown key {key_text!r} in task contract", line)
        try:
            _set(contract, key_text, value, reader, reader.value_node(node, key_text))
        except ValueError as exc:
            raise reader.error(f"{key_text}: {exc}", line) from None
    return contract


def _set(contract: Contract, key: str, value: Any, reader: _Reader, node: yaml.Node | None) -> None:
    if key == "task_id":
        contract.task_id = fields.normalize_task_id(_scalar(value))
    elif key in ("title", "ownership", "description"):
        setattr(contract, key, _scalar(value))
    elif key == "tier":
        contract.tier = fields.parse_tier(_scalar(value))
    elif key == "depends_on":
        contract.depends_on = _refs(value)
    elif key == "expected_files":
        contract.expected_files = _expected_files(value, reader, node)
    elif key == "io_contract":
        contract.io_contract = _model(IOContract, value, reader, node, key)
    elif key == "environment":
        contract.environment = _model(EnvironmentContract, value, reader, node, key)
    elif key == "security_flags":
        contract.security_flags = _model(SecurityFlags, value, reader, node, key)
    else:
        contract.lists[key] = _strings(value)


def _scalar(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(f"expected a single value, got {type(value).__name__}")
    return str(value).strip()


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return [str(value).strip()]
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return [str(v).strip() for v in value]
    raise ValueError("expected a list of strings")


def _refs(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, int) and not isinstance(value, bool):
        return [str(value)]
    if isinstance(value, str):
        return parse_refs(value)
    if isinstance(value, list):
        refs: list[str] = []
        for item in value:
            refs.extend(_refs(item))
        return refs
    raise ValueError("expected task references like [task-2, task-3]")


def _expected_files(value: Any, reader: _Reader, node: yaml.Node | None) -> ExpectedFiles:
    if value is None:
        return ExpectedFiles()
    if not isinstance(value, dict):
        raise ValueError("expected a mapping with create, modify, delete (and test) lists")
    lines = reader.key_lines(node)
    files = ExpectedFiles()
    for key, paths in value.items():
        if key not in _FILE_KEYS:
            raise reader.error(f"unknown key {key!r} in expected_files", lines.get(str(key)))
        for raw in _strings(paths):
            path, line_range = fields.split_range(raw)
            path = fields.clean_path(path)
            fields.add_path(files, key, path)
            if key == "modify" and line_range:
                files.modify_ranges[path] = line_range
    return files


def _model(model: type[M], value: Any, reader: _Reader, node: yaml.Node | None, key: str) -> M:
    if value is None:
        return model()
    if not isinstance(value, dict):
        raise ValueError("expected a mapping")
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = str(first["loc"][0]) if first["loc"] else ""
        line = reader.key_lines(node).get(loc)
        if first["type"] == "extra_forbidden":
            raise reader.error(f"unknown key {loc!r} in {key}", line) from None
        raise reader.error(f"{key}.{loc}: {first['msg']}", line) from None
