"""Task lifecycle: states, roles, the workflow (transition table as data) and WorkflowContext.

Seed 003's state machine, reconciled with seed 004's roles and signals as
shared/DESIGN.md describes. The transition table lives in `workflow.yaml`;
`check_workflow` proves a workflow sound and `WorkflowContext` walks a task
through it, refusing any move the table does not allow.

The exports load on first use (`pm_agent._lazy`): importing `pm_agent.lifecycle.roles` does not load the
default workflow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pm_agent._lazy import lazy_exports

if TYPE_CHECKING:
    from pm_agent.lifecycle.context import StateChange, WorkflowContext
    from pm_agent.lifecycle.render import describe_workflow, workflow_rows
    from pm_agent.lifecycle.roles import (
        AGENT_ROLES,
        ALLOWED_SIGNALS,
        FOLLOWUP_TARGETS,
        PM_AGENT_ROLES,
        ROLES,
        Role,
        RoleInfo,
        SignalKind,
        can_signal,
        is_known_role,
        resolve_role,
    )
    from pm_agent.lifecycle.states import IssueState, parse_state
    from pm_agent.lifecycle.workflow import (
        START_STATE,
        StateSpec,
        Violation,
        ViolationKind,
        Workflow,
        check_workflow,
        require_sound,
    )
    from pm_agent.lifecycle.workflow_file import (
        BUILTIN_WORKFLOWS,
        default_workflow,
        load_builtin_workflow,
        load_workflow,
        parse_workflow,
    )

__all__ = [
    "AGENT_ROLES",
    "ALLOWED_SIGNALS",
    "BUILTIN_WORKFLOWS",
    "FOLLOWUP_TARGETS",
    "PM_AGENT_ROLES",
    "ROLES",
    "START_STATE",
    "IssueState",
    "Role",
    "RoleInfo",
    "SignalKind",
    "StateChange",
    "StateSpec",
    "Violation",
    "ViolationKind",
    "Workflow",
    "WorkflowContext",
    "can_signal",
    "check_workflow",
    "default_workflow",
    "describe_workflow",
    "is_known_role",
    "load_builtin_workflow",
    "load_workflow",
    "parse_state",
    "parse_workflow",
    "require_sound",
    "resolve_role",
    "workflow_rows",
]

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "pm_agent.lifecycle.context": "StateChange WorkflowContext",
        "pm_agent.lifecycle.render": "describe_workflow workflow_rows",
        "pm_agent.lifecycle.roles": (
            "AGENT_ROLES ALLOWED_SIGNALS FOLLOWUP_TARGETS PM_AGENT_ROLES ROLES Role RoleInfo SignalKind "
            "can_signal is_known_role resolve_role"
        ),
        "pm_agent.lifecycle.states": "IssueState parse_state",
        "pm_agent.lifecycle.workflow": (
            "START_STATE StateSpec Violation ViolationKind Workflow check_workflow require_sound"
        ),
        "pm_agent.lifecycle.workflow_file": (
            "BUILTIN_WORKFLOWS default_workflow load_builtin_workflow load_workflow parse_workflow"
        ),
    },
)
