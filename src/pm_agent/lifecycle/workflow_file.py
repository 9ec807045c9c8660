"""Reading a workflow file: YAML to `Workflow`, every problem reported with its file and line."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, NoReturn

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pm_agent.errors import WorkflowError
from pm_agent.lifecycle.roles import resolve_role
from pm_agent.lifecycle.states import IssueState, parse_state
from pm_agent.lifecycle.workflow import START_STATE, StateSpec, Workflow, require_sound

BUILTIN_WORKFLOWS: Mapping[str, str] = MappingProxyType(
    {"default": "workflow.yaml", "seed003": "workflows/seed003.yaml"}
)
"""Workflow files shipped inside the package, by name."""


_TOP_KEYS = frozenset({"version", "description", "states"})
_STATE_KEYS = frozenset(
    {"owner", "next", "terminal", "waiting", "description", "on_complete", "followup", "on_answer", "status"}
)
TASK_STATUSES = ("pending", "ready", "in_progress", "completed", "failed", "escalated")  # plan.models.TaskStatus
_REQUIRED_STATE_KEYS = ("owner", "next")


class _Reader:
    """Turns the composed YAML node tree of one workflow file into a Workflow."""

    def __init__(self, source: Path | str | None) -> None:
        self.source = source
        self._constructor = SafeConstructor()

    def fail(self, message: str, node: Node | None) -> NoReturn:
        line = node.start_mark.line + 1 if node is not None else None
        raise WorkflowError(message, path=self.source, line=line)

    def value(self, node: Node) -> Any:
        try:
            return self._constructor.construct_object(node, deep=True)
        except yaml.YAMLError as exc:
            self.fail(f"cannot read this value: {getattr(exc, 'problem', None) or exc}", node)

    def mapping(self, node: Node, what: str, allowed: frozenset[str]) -> dict[str, tuple[Node, Node]]:
        """The keys of a mapping node (key -> (key node, value node)); refuses unknown and repeated keys."""
        if not isinstance(node, MappingNode):
            self.fail(f"{what} must be a mapping", node)
        out: dict[str, tuple[Node, Node]] = {}
        for key_node, value_node in node.value:
            key = self.value(key_node) if isinstance(key_node, ScalarNode) else None
            if not isinstance(key, str):
                self.fail(f"{what}: keys must be strings", key_node)
            if allowed and key not in allowed:
                self.fail(f"{what}: unknown key {key!r} (expected: {', '.join(sorted(allowed))})", key_node)
            if key in out:
                self.fail(f"{what}: key {key!r} given twice", key_node)
            out[key] = (key_node, value_node)
        return out

    def scalar(self, node: Node, what: str, kind: type | tuple[type, ...]) -> Any:
        value = self.value(node) if isinstance(node, ScalarNode) else node
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
            self.fail(f"{what} has the wrong type", node)
        return value

    def state(self, node: Node, what: str) -> IssueState:
        text = self.value(node) if isinstance(node, ScalarNode) else None
        if not isinstance(text, str):
            self.fail(f"{what} must be a state name", node)
        try:
            return parse_state(text)
        except ValueError as exc:
            self.fail(f"{what}: {exc}", node)

    def owner(self, node: Node, state: IssueState) -> str | None:
        text = self.scalar(node, f"state {state.value!r}: owner", (str, type(None)))
        if text is None:
            return None
        try:
            return resolve_role(text).value
        except ValueError as exc:
            self.fail(f"state {state.value!r}: {exc}", node)

    def targets(self, node: Node, state: IssueState) -> list[tuple[IssueState, Node]]:
        if not isinstance(node, SequenceNode):
            self.fail(f"state {state.value!r}: next must be a list of states", node)
        out: list[tuple[IssueState, Node]] = []
        for item in node.value:
            target = self.state(item, f"state {state.value!r}: next")
            if any(target == seen for seen, _ in out):
                self.fail(f"state {state.value!r}: {target.value!r} listed twice in next", item)
            out.append((target, item))
        return out

    def state_spec(self, key_node: Node, node: Node, state: IssueState) -> tuple[StateSpec, list[Node]]:
        body = self.mapping(node, f"state {state.value!r}", _STATE_KEYS)
        for required in _REQUIRED_STATE_KEYS:
            if required not in body:
                self.fail(f"state {state.value!r}: missing {required!r}", key_node)
        targets = self.targets(body["next"][1], state)
        flags = {
            name: self.scalar(body[name][1], f"state {state.value!r}: {name}", bool)
            for name in ("terminal", "waiting")
            if name in body
        }
        spec = StateSpec(
            owner=self.owner(body["owner"][1], state),
            next=tuple(t for t, _ in targets),
            terminal=flags.get("terminal", False),
            waiting=flags.get("waiting", False),
            on_complete=self.state(body["on_complete"][1], f"state {state.value!r}: on_complete")
            if "on_complete" in body
            else None,
            followup=self.followup(body["followup"][1], state) if "followup" in body else (),
            on_answer=self.state(body["on_answer"][1], f"state {state.value!r}: on_answer")
            if "on_answer" in body
            else None,
            status=self.status(body["status"][1], state) if "status" in body else None,
        )
        return spec, [n for _, n in targets]

    def followup(self, node: Node, state: IssueState) -> tuple[tuple[str, IssueState], ...]:
        """`followup: {role: state, ...}`, roles by any of their names."""
        out: list[tuple[str, IssueState]] = []
        for name, (key_node, value_node) in self.mapping(node, f"state {state.value!r}: followup", frozenset()).items():
            try:
                role = resolve_role(name).value
            except ValueError as exc:
                self.fail(f"state {state.value!r}: followup: {exc}", key_node)
            out.append((role, self.state(value_node, f"state {state.value!r}: followup.{name}")))
        return tuple(out)

    def status(self, node: Node, state: IssueState) -> str:
        text = self.scalar(node, f"state {state.value!r}: status", str)
        if text not in TASK_STATUSES:
            self.fail(f"state {state.value!r}: status must be one of {', '.join(TASK_STATUSES)}", node)
        return str(text)

    def workflow(self, root: Node) -> Workflow:
        top = self.mapping(root, "the workflow file", _TOP_KEYS)
        if "version" in top and self.scalar(top["version"][1], "version", int) != 1:
            self.fail("unsupported workflow version (this pm-agent reads version 1)", top["version"][1])
        if "description" in top:
            self.scalar(top["description"][1], "description", str)
        if "states" not in top:
            self.fail("the workflow file has no 'states' mapping", root)
        states_key, states_node = top["states"]

        specs: dict[IssueState, StateSpec] = {}
        lines: dict[IssueState, int] = {}
        target_nodes: dict[IssueState, list[Node]] = {}
        for name, (key_node, value_node) in self.mapping(states_node, "states", frozenset()).items():
            state = self.state(key_node, "states")
            if state in specs:
                self.fail(f"state {state.value!r} given twice (as {name!r})", key_node)
            specs[state], target_nodes[state] = self.state_spec(key_node, value_node, state)
            lines[state] = key_node.start_mark.line + 1

        for state, spec in specs.items():
            for target, item in zip(spec.next, target_nodes[state], strict=True):
                if target not in specs:
                    self.fail(f"state {state.value!r}: next state {target.value!r} is not defined here", item)
        if START_STATE not in specs:
            self.fail(f"the workflow has no {START_STATE.value!r} state, where every task starts", states_key)
        return Workflow(specs, source=self.source, lines=lines)


def parse_workflow(text: str, source: Path | str | None = None) -> Workflow:
    """The workflow in YAML `text`; `source` names the file in error messages.

    Raises WorkflowError with the line of the offending key for a YAML syntax
    error, an unknown state, an unknown role, a next state that is not defined
    and any malformed structure.
    """
    return _parse(text, source, yaml.SafeLoader)


# The shipped workflows are composed by libyaml when PyYAML has it: the same nodes and lines, about 10 ms less
# CPU at every run's start than the pure-Python composer. A user's file keeps the pure-Python one, whose
# syntax error messages (problem and line) are the ones documented.
_BUILTIN_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _parse(text: str, source: Path | str | None, loader: type[yaml.SafeLoader]) -> Workflow:
    try:
        root = yaml.compose(text, Loader=loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        raise WorkflowError(f"not valid YAML: {exc.problem or exc}", path=source, line=line) from exc
    except yaml.YAMLError as exc:
        raise WorkflowError(f"not valid YAML: {exc}", path=source) from exc
    if root is None:
        raise WorkflowError("the workflow file is empty", path=source, line=1)
    return _Reader(source).workflow(root)


@functools.cache
def load_builtin_workflow(name: str = "default") -> Workflow:
    """A workflow shipped with pm-agent: "default" (workflow.yaml) or "seed003" (seed 003's raw table)."""
    if name not in BUILTIN_WORKFLOWS:
        raise WorkflowError(f"no built-in workflow {name!r} (known: {', '.join(BUILTIN_WORKFLOWS)})")
    resource = resources.files("pm_agent.lifecycle").joinpath(BUILTIN_WORKFLOWS[name])
    return _parse(resource.read_text(encoding="utf-8"), str(resource), _BUILTIN_LOADER)


def load_workflow(path: Path | None = None, *, check: bool = False) -> Workflow:
    """The workflow in the YAML file at `path`, or the shipped default when `path` is None.

    With `check=True` a workflow that `check_workflow` faults raises WorkflowError too.
    """
    if path is None:
        wf = load_builtin_workflow("default")
    else:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise WorkflowError(f"cannot read the workflow file: {exc.strerror or exc}", path=path) from exc
        wf = parse_workflow(text, source=path)
    return require_sound(wf) if check else wf


def default_workflow() -> Workflow:
    """The shipped default workflow (loaded once)."""
    return load_builtin_workflow("default")
