"""The workflow: seed 003's transition table and state ownership, kept as data.

A workflow file (YAML) gives, for each state, its owner role, whether it waits
for a human or is terminal, and the states it may move to. `load_workflow()`
reads one (the shipped default when no path is given) and reports any problem
with the file and line of the offending key; `check_workflow()` proves the
graph sound: every state reachable from RECEIVED, every state able to end.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, NoReturn

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pm_agent.errors import WorkflowError
from pm_agent.lifecycle.roles import is_known_role, resolve_role
from pm_agent.lifecycle.states import IssueState, parse_state

START_STATE = IssueState.RECEIVED
"""Where every task starts; every state of a workflow must be reachable from it."""

BUILTIN_WORKFLOWS: Mapping[str, str] = MappingProxyType(
    {"default": "workflow.yaml", "seed003": "workflows/seed003.yaml"}
)
"""Workflow files shipped inside the package, by name."""


@dataclass(frozen=True)
class StateSpec:
    """One state of a workflow: who works in it and where it may go next."""

    owner: str | None
    next: tuple[IssueState, ...] = ()
    terminal: bool = False
    waiting: bool = False


@dataclass(frozen=True)
class Workflow:
    """A transition table: the states a task may be in, their owners and their edges.

    States absent from the table are not part of this workflow: they have no
    owner and no edges, and no transition leads to or from them. A terminal state
    is never left, even if a (bad) table lists edges out of it.
    """

    states: Mapping[IssueState, StateSpec]
    source: Path | str | None = field(default=None, compare=False)
    lines: Mapping[IssueState, int] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "states", MappingProxyType(dict(self.states)))
        object.__setattr__(self, "lines", MappingProxyType(dict(self.lines)))
        for state, spec in self.states.items():
            for target in spec.next:
                if target not in self.states:
                    raise WorkflowError(
                        f"state {state.value!r} lists {target.value!r}, not a state of this workflow",
                        path=self.source,
                        line=self.lines.get(state),
                    )

    def __contains__(self, state: object) -> bool:
        return state in self.states

    def owner(self, state: IssueState) -> str | None:
        """The role that works in `state`; None for waiting, terminal and absent states."""
        spec = self.states.get(state)
        return spec.owner if spec is not None else None

    def next_states(self, state: IssueState) -> tuple[IssueState, ...]:
        """The states `state` may move to, in the file's order (none from a terminal state)."""
        spec = self.states.get(state)
        if spec is None or spec.terminal:
            return ()
        return spec.next

    def is_valid(self, from_state: IssueState, to_state: IssueState) -> bool:
        """True when the workflow allows moving from `from_state` to `to_state`."""
        return to_state in self.next_states(from_state)

    def is_terminal(self, state: IssueState) -> bool:
        """True for states that end a task's lifecycle."""
        spec = self.states.get(state)
        return spec is not None and spec.terminal

    def is_waiting(self, state: IssueState) -> bool:
        """True for states in which the task waits for a human."""
        spec = self.states.get(state)
        return spec is not None and spec.waiting

    def edges(self) -> Iterator[tuple[IssueState, IssueState]]:
        """Every allowed (from, to) pair, in the file's order."""
        for state in self.states:
            for target in self.next_states(state):
                yield state, target


# ---------------------------------------------------------------- checking

ViolationKind = Literal["unreachable", "cannot-terminate", "unknown-role", "terminal-with-edges", "no-owner"]
_KIND_ORDER: tuple[ViolationKind, ...] = (
    "unknown-role",
    "no-owner",
    "terminal-with-edges",
    "unreachable",
    "cannot-terminate",
)


@dataclass(frozen=True)
class Violation:
    """One problem `check_workflow` found with one state."""

    state: IssueState
    kind: ViolationKind
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line is not None else ""
        return f"{where}{self.state.value}: {self.kind}: {self.message}"


def _closure(start: Iterable[IssueState], step: Mapping[IssueState, Iterable[IssueState]]) -> set[IssueState]:
    """Every state reachable from `start` following `step` (breadth first)."""
    seen = set(start)
    queue = deque(seen)
    while queue:
        for nxt in step.get(queue.popleft(), ()):
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return seen


def _spec_violations(spec: StateSpec) -> Iterator[tuple[ViolationKind, str]]:
    if spec.owner is not None and not is_known_role(spec.owner):
        yield "unknown-role", f"owner {spec.owner!r} is not a known role"
    if spec.owner is None and not spec.terminal and not spec.waiting:
        yield "no-owner", "nobody works in this state, yet it neither waits for a human nor is terminal"
    if spec.terminal and spec.next:
        targets = ", ".join(t.value for t in spec.next)
        yield "terminal-with-edges", f"a terminal state is never left, yet it lists: {targets}"


def check_workflow(wf: Workflow) -> list[Violation]:
    """Every problem with `wf`, ordered by state then kind; an empty list means it is sound.

    Checks that every owner is a known role, that every state that is neither
    waiting nor terminal has an owner, that terminal states list no edges, that
    every state is reachable from RECEIVED and that every non-terminal state can
    reach a terminal one (both by breadth-first search over the table).
    """
    found: list[tuple[IssueState, ViolationKind, str]] = []
    for state, spec in wf.states.items():
        found.extend((state, kind, message) for kind, message in _spec_violations(spec))

    forward = {state: wf.next_states(state) for state in wf.states}
    reachable = _closure([START_STATE] if START_STATE in wf else [], forward)
    backward: dict[IssueState, list[IssueState]] = {}
    for source, target in wf.edges():
        backward.setdefault(target, []).append(source)
    can_end = _closure([s for s in wf.states if wf.is_terminal(s)], backward)

    for state in wf.states:
        if state not in reachable:
            found.append((state, "unreachable", f"no path leads here from {START_STATE.value}"))
        if state not in can_end:
            found.append((state, "cannot-terminate", "no path leads from here to a terminal state"))

    order = {state: i for i, state in enumerate(IssueState)}
    found.sort(key=lambda item: (order[item[0]], _KIND_ORDER.index(item[1])))
    return [Violation(state, kind, message, wf.lines.get(state)) for state, kind, message in found]


# ---------------------------------------------------------------- loading

_TOP_KEYS = frozenset({"version", "description", "states"})
_STATE_KEYS = frozenset({"owner", "next", "terminal", "waiting", "description"})
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
        )
        return spec, [n for _, n in targets]

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
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        raise WorkflowError(f"not valid YAML: {exc.problem or exc}", path=source, line=line) from exc
    except yaml.YAMLError as exc:
        raise WorkflowError(f"not valid YAML: {exc}", path=source) from exc
    if root is None:
        raise WorkflowError("the workflow file is empty", path=source, line=1)
    return _Reader(source).workflow(root)


def require_sound(wf: Workflow) -> Workflow:
    """`wf` itself when `check_workflow` finds nothing; else WorkflowError listing every violation."""
    violations = check_workflow(wf)
    if violations:
        listing = "\n".join(f"  {v}" for v in violations)
        raise WorkflowError(
            f"the workflow does not check ({len(violations)} problems):\n{listing}",
            path=wf.source,
            line=violations[0].line,
        )
    return wf


@functools.cache
def load_builtin_workflow(name: str = "default") -> Workflow:
    """A workflow shipped with pm-agent: "default" (workflow.yaml) or "seed003" (seed 003's raw table)."""
    if name not in BUILTIN_WORKFLOWS:
        raise WorkflowError(f"no built-in workflow {name!r} (known: {', '.join(BUILTIN_WORKFLOWS)})")
    resource = resources.files("pm_agent.lifecycle").joinpath(BUILTIN_WORKFLOWS[name])
    return parse_workflow(resource.read_text(encoding="utf-8"), source=str(resource))


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
