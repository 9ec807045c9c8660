"""The workflow: seed 003's transition table, state ownership and routing, kept as data.

A workflow gives, for each state, its owner role, whether it waits for a human or
is terminal, the states it may move to, and the routing the engine follows among
them (`on_complete`, `followup`, `on_answer`, `status`). `workflow_file.py` reads
one from YAML; `check_workflow()` proves it sound: every state reachable from
RECEIVED, every state able to end, every routing target an edge of its state.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from pm_agent.errors import WorkflowError
from pm_agent.lifecycle.roles import ROLES, is_known_role, resolve_role
from pm_agent.lifecycle.states import IssueState

START_STATE = IssueState.RECEIVED
"""Where every task starts; every state of a workflow must be reachable from it."""


@dataclass(frozen=True)
class StateSpec:
    """One state of a workflow: who works in it and where it may go next."""

    owner: str | None
    next: tuple[IssueState, ...] = ()
    terminal: bool = False
    waiting: bool = False
    on_complete: IssueState | None = None  # where the state goes when its owner finishes
    followup: tuple[tuple[str, IssueState], ...] = ()  # needs-role-followup: (target role, state) pairs
    on_answer: IssueState | None = None  # waiting states: where a human's answer moves the task
    status: str | None = None  # the coarse task status in this state (None: in_progress)

    def routes(self) -> Iterator[tuple[str, IssueState]]:
        """Every routing target with the key that names it (`on_complete`, `followup.<role>`, `on_answer`)."""
        if self.on_complete is not None:
            yield "on_complete", self.on_complete
        for role, target in self.followup:
            yield f"followup.{role}", target
        if self.on_answer is not None:
            yield "on_answer", self.on_answer


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

    def on_complete(self, state: IssueState) -> IssueState | None:
        """Where `state` goes when its owner finishes; None when the workflow does not say."""
        spec = self.states.get(state)
        return spec.on_complete if spec is not None else None

    def followup(self, state: IssueState, role: str) -> IssueState | None:
        """The state a needs-role-followup to `role` moves to from `state`; None: not allowed here."""
        spec = self.states.get(state)
        return dict(spec.followup).get(role) if spec is not None else None

    def on_answer(self, state: IssueState) -> IssueState | None:
        """Where a human's answer moves a task waiting in `state`; None when it waits for no answer."""
        spec = self.states.get(state)
        return spec.on_answer if spec is not None else None

    def status(self, state: IssueState) -> str | None:
        """The coarse task status the workflow gives `state` (None: in progress)."""
        spec = self.states.get(state)
        return spec.status if spec is not None else None

    def edges(self) -> Iterator[tuple[IssueState, IssueState]]:
        """Every allowed (from, to) pair, in the file's order."""
        for state in self.states:
            for target in self.next_states(state):
                yield state, target


# ---------------------------------------------------------------- checking

ViolationKind = Literal[
    "unreachable", "cannot-terminate", "unknown-role", "terminal-with-edges", "no-owner", "bad-route", "cannot-escalate"
]
_KIND_ORDER: tuple[ViolationKind, ...] = (
    "unknown-role",
    "no-owner",
    "terminal-with-edges",
    "bad-route",
    "cannot-escalate",
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
    for key, target in spec.routes():
        if target not in spec.next or spec.terminal:
            yield "bad-route", f"{key} routes to {target.value}, which is not in its next states"
    for role, _ in spec.followup:
        if not is_known_role(role):
            yield "unknown-role", f"followup names {role!r}, not a known role"


def _cannot_escalate(wf: Workflow, spec: StateSpec) -> bool:
    """An agent's state that cannot hand its task to a human, in a workflow that has the state for it: a session
    that keeps ending without a signal escalates there, and the move would be refused (the task would error)."""
    return (
        IssueState.WAITING_FOR_HUMAN_INPUT in wf
        and spec.owner is not None
        and is_known_role(spec.owner)
        and ROLES[resolve_role(spec.owner)].is_agent
        and not spec.terminal
        and IssueState.WAITING_FOR_HUMAN_INPUT not in spec.next
    )


def check_workflow(wf: Workflow) -> list[Violation]:
    """Every problem with `wf`, ordered by state then kind; an empty list means it is sound.

    Checks that every owner is a known role, that every state that is neither
    waiting nor terminal has an owner, that terminal states list no edges, that
    every state is reachable from RECEIVED and that every non-terminal state can
    reach a terminal one (both by breadth-first search over the table), and that
    every routing target (`on_complete`, `followup`, `on_answer`) is an edge of its
    state and reachable, and that every agent's state can escalate to a human.
    """
    found: list[tuple[IssueState, ViolationKind, str]] = []
    for state, spec in wf.states.items():
        found.extend((state, kind, message) for kind, message in _spec_violations(spec))
        if _cannot_escalate(wf, spec):
            why = "an agent works here, yet waiting_for_human_input is not among its next states (a spent retry budget)"
            found.append((state, "cannot-escalate", why))

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
        for key, target in wf.states[state].routes():
            if target not in reachable and state in reachable:
                why = f"{key} routes to {target.value}, unreachable from {START_STATE.value}"
                found.append((state, "bad-route", why))

    order = {state: i for i, state in enumerate(IssueState)}
    found.sort(key=lambda item: (order[item[0]], _KIND_ORDER.index(item[1])))
    return [Violation(state, kind, message, wf.lines.get(state)) for state, kind, message in found]


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
