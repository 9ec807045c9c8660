"""WorkflowContext: one task's place in its workflow, with its full history (seed 003).

The context holds plain data only, so the store can persist it as JSON
(`model_dump(mode="json")` and `model_validate` round-trip). The workflow it
validates against is not part of that data: it is the shipped default unless
one is bound with `bind()`, `start(..., workflow=)` or the validation context
`{"workflow": wf}`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Self

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, PrivateAttr

from pm_agent.errors import TransitionError
from pm_agent.lifecycle.states import IssueState, parse_state
from pm_agent.lifecycle.workflow import Workflow
from pm_agent.lifecycle.workflow_file import default_workflow


class StateChange(BaseModel):
    """One recorded transition: seed 003's state_history_with_timestamps entry."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    from_state: IssueState
    to_state: IssueState
    timestamp: AwareDatetime
    reason: str = ""
    iteration: int = Field(ge=0)
    """The context's iteration_count before this transition."""


class WorkflowContext(BaseModel):
    """A task's lifecycle state, its history and the limits that stop runaway loops."""

    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(min_length=1)
    current_state: IssueState = IssueState.RECEIVED
    previous_states: list[IssueState] = Field(default_factory=list)
    state_history_with_timestamps: list[StateChange] = Field(default_factory=list)

    current_agent: str | None = None
    iteration_count: int = Field(default=0, ge=0)
    max_iterations: int = Field(default=10, ge=1)

    confidence_threshold: float = Field(default=0.85, ge=0.0, le=1.0)
    quality_gates_passed: list[str] = Field(default_factory=list)
    blocking_issues: list[str] = Field(default_factory=list)

    _workflow: Workflow | None = PrivateAttr(default=None)

    def model_post_init(self, context: Any, /) -> None:
        """Bind a workflow given as validation context; fill current_agent when not given."""
        if isinstance(context, dict) and isinstance(context.get("workflow"), Workflow):
            self._workflow = context["workflow"]
        if "current_agent" not in self.model_fields_set:
            self.current_agent = self.workflow.owner(self.current_state)

    @classmethod
    def start(
        cls, task_id: str, *, workflow: Workflow | None = None, state: IssueState = IssueState.RECEIVED
    ) -> Self:
        """A fresh context for `task_id` in `state` (RECEIVED), bound to `workflow` (the default)."""
        ctx = cls.model_validate({"task_id": task_id, "current_state": state}, context={"workflow": workflow})
        if workflow is not None:
            ctx.bind(workflow)
        return ctx

    def bind(self, workflow: Workflow) -> Self:
        """Validate this context's transitions against `workflow` from now on; returns self."""
        self._workflow = workflow
        return self

    @property
    def workflow(self) -> Workflow:
        """The workflow transitions are checked against: the bound one, else the shipped default."""
        return self._workflow if self._workflow is not None else default_workflow()

    def transition_to(self, new_state: IssueState | str, reason: str = "") -> None:
        """Move to `new_state`, recording the change; `reason` says why.

        Raises TransitionError naming both states, and changes nothing, when the
        workflow does not allow the move (terminal states are never left).
        """
        current = self.current_state
        try:
            target = parse_state(new_state)
        except ValueError as exc:
            raise TransitionError(f"invalid transition {current.value} -> {new_state!r}: {exc}") from None
        wf = self.workflow
        if wf.is_terminal(current):
            raise TransitionError(
                f"invalid transition {current.value} -> {target.value}: {current.value} is terminal"
            )
        if not wf.is_valid(current, target):
            allowed = ", ".join(s.value for s in wf.next_states(current)) or "nothing"
            raise TransitionError(
                f"invalid transition {current.value} -> {target.value}"
                f" (allowed from {current.value}: {allowed})"
            )
        change = StateChange(
            from_state=current,
            to_state=target,
            timestamp=datetime.now(UTC),
            reason=reason,
            iteration=self.iteration_count,
        )
        owner = wf.owner(target)
        # Everything that can fail is above: the context changes all at once or not at all.
        self.previous_states.append(current)
        self.state_history_with_timestamps.append(change)
        self.current_state = target
        self.current_agent = owner
        self.iteration_count += 1

    def is_in_loop(self, max_same_state_visits: int = 3) -> bool:
        """Seed 003's loop detection, exactly as the seed defines it.

        True when at least `max_same_state_visits` states were left and the last
        `max_same_state_visits` of them hold two or fewer distinct states.
        """
        if len(self.previous_states) < max_same_state_visits:
            return False
        recent_states = self.previous_states[-max_same_state_visits:]
        return len(set(recent_states)) <= 2

    @property
    def iterations_exhausted(self) -> bool:
        """True once iteration_count has reached max_iterations."""
        return self.iteration_count >= self.max_iterations

    @property
    def is_finished(self) -> bool:
        """True in a terminal state of the workflow."""
        return self.workflow.is_terminal(self.current_state)

    def responsible_agent(self) -> str | None:
        """The role that owns the current state (None while waiting or when finished)."""
        return self.workflow.owner(self.current_state)
