"""Plan and design docs in, tasks out: parsing, dependencies, tiers, triage and the shared context.

The exports load on first use (`pm_agent._lazy`), so importing `pm_agent.plan.models` does not import the parser.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pm_agent._lazy import lazy_exports

if TYPE_CHECKING:
    from pm_agent.plan.context import build_shared_context
    from pm_agent.plan.deps import check_cycles, execution_queue, resolve, resolve_dependencies
    from pm_agent.plan.design import DesignDoc, parse_design_text
    from pm_agent.plan.enums import TaskStatus, Tier
    from pm_agent.plan.fields import canonical_id, normalize_task_id, plan_id_from_path
    from pm_agent.plan.loader import load_plan, read_text
    from pm_agent.plan.models import (
        Dependency,
        EnvironmentContract,
        ExpectedFiles,
        IOContract,
        Plan,
        PlanHeader,
        Presence,
        SecurityFlags,
        SharedContext,
        Task,
    )
    from pm_agent.plan.parser import parse_plan_text
    from pm_agent.plan.refs import Ref, parse_refs, read_refs
    from pm_agent.plan.tiers import classify_tier, infer_security_flags
    from pm_agent.plan.triage import RepoView, assign_tests, triage_task

__all__ = [
    "Dependency",
    "DesignDoc",
    "EnvironmentContract",
    "ExpectedFiles",
    "IOContract",
    "Plan",
    "PlanHeader",
    "Presence",
    "Ref",
    "RepoView",
    "SecurityFlags",
    "SharedContext",
    "Task",
    "TaskStatus",
    "Tier",
    "assign_tests",
    "build_shared_context",
    "canonical_id",
    "check_cycles",
    "classify_tier",
    "execution_queue",
    "infer_security_flags",
    "load_plan",
    "normalize_task_id",
    "parse_design_text",
    "parse_plan_text",
    "parse_refs",
    "plan_id_from_path",
    "read_refs",
    "read_text",
    "resolve",
    "resolve_dependencies",
    "triage_task",
]

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "pm_agent.plan.context": "build_shared_context",
        "pm_agent.plan.deps": "check_cycles execution_queue resolve resolve_dependencies",
        "pm_agent.plan.design": "DesignDoc parse_design_text",
        "pm_agent.plan.fields": "canonical_id normalize_task_id plan_id_from_path",
        "pm_agent.plan.refs": "Ref parse_refs read_refs",
        "pm_agent.plan.loader": "load_plan read_text",
        "pm_agent.plan.models": (
            "Dependency EnvironmentContract ExpectedFiles IOContract Plan PlanHeader Presence "
            "SecurityFlags SharedContext Task"
        ),
        "pm_agent.plan.enums": "TaskStatus Tier",
        "pm_agent.plan.parser": "parse_plan_text",
        "pm_agent.plan.tiers": "classify_tier infer_security_flags",
        "pm_agent.plan.triage": "RepoView assign_tests triage_task",
    },
)
