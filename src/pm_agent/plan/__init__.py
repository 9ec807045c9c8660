"""Plan and design docs in, tasks out: parsing, dependencies, tiers, triage and the shared context."""

from __future__ import annotations

from pm_agent.plan.context import build_shared_context
from pm_agent.plan.deps import check_cycles, execution_queue, resolve, resolve_dependencies
from pm_agent.plan.design import DesignDoc, parse_design_text
from pm_agent.plan.fields import Ref, canonical_id, normalize_task_id, parse_refs, plan_id_from_path, read_refs
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
    TaskStatus,
    Tier,
)
from pm_agent.plan.parser import parse_plan_text
from pm_agent.plan.tiers import classify_tier, infer_security_flags
from pm_agent.plan.triage import RepoView, assign_tests, triage, triage_task

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
    "triage",
    "triage_task",
]
