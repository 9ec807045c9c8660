"""Seed 001's task contract: built from a task, the configuration and the run's context."""

from __future__ import annotations

from typing import Any

import yaml

from pm_agent.config import PmConfig
from pm_agent.plan.models import Task

DEFINITION_OF_DONE = [
    "Code implements all acceptance criteria",
    "tests_to_add written and passing",
    "tests_to_run all passing",
    "Docs updated if public API or config changed",
    "Migration + rollback notes if schema/infra changed",
    "No TODO/FIXME without linked follow-up task",
]


def task_contract(task: Task, config: PmConfig, *, shared_context: str, task_delta: str) -> dict[str, Any]:
    """The full task contract of seed 001 section 4, as plain data."""
    env = config.environment
    return {
        "task_id": task.ref,
        "title": task.title,
        "tier": task.tier.value,
        "ownership": task.ownership,
        "acceptance_criteria": list(task.acceptance_criteria),
        "expected_files": {
            "create": list(task.expected_files.create),
            "modify": list(task.expected_files.modify),
            "delete": list(task.expected_files.delete),
            "test": list(task.expected_files.test),
        },
        "non_goals": list(task.non_goals),
        "tests_to_add": list(task.tests_to_add),
        "tests_to_run": list(task.tests_to_run),
        "definition_of_done": list(DEFINITION_OF_DONE),
        "io_contract": task.io_contract.model_dump(),
        "environment": {
            "lint_command": task.environment.lint_command or env.lint_command,
            "typecheck_command": task.environment.typecheck_command or env.typecheck_command,
            "test_command": task.environment.test_command or env.test_command,
            "build_command": task.environment.build_command or env.build_command,
        },
        "context": {"shared": shared_context, "task_delta": task_delta},
        "retry_budget": config.retry_budget,
        "time_budget_ms": int(config.agent.time_budget_min * 60_000),
        "patch_size_limit": config.patch_size_limit_files,
        "security_flags": task.security_flags.model_dump(),
        "steps": list(task.steps),
    }


def render_contract(contract: dict[str, Any]) -> str:
    """The contract as YAML for a prompt."""
    return yaml.safe_dump({"task_contract": contract}, sort_keys=False, allow_unicode=True, width=100)
