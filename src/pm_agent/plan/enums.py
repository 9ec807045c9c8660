"""A task's tier and coarse status: enums the store's records need without the plan's pydantic models.

`pm_agent.store.records` is imported by every agent session's `signal_back` server; importing
`pm_agent.plan.models` there built the plan's models (~13 ms of CPU a session) for two enums.
"""

from __future__ import annotations

from enum import StrEnum


class Tier(StrEnum):
    """Review depth of a task (seed 001)."""

    CRITICAL = "critical"
    NORMAL = "normal"
    LOW = "low"


class TaskStatus(StrEnum):
    """Seed 001's coarse status; the fine-grained state is the lifecycle state (seed 003)."""

    PENDING = "pending"
    READY = "ready"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    FAILED = "failed"
    ESCALATED = "escalated"
