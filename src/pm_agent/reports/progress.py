"""Seed 001's progress report, plus cost and tokens.

Stdlib only, and statuses, states and tiers compared by value (the enums are StrEnums): `pm-agent status` renders
this report from plain strings without importing the plan models or the lifecycle package.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

SEVERITY_RANK = {"critical": 0, "normal": 1, "low": 2}
TIERS = ("critical", "normal", "low")  # Tier values, most severe first


@dataclass(frozen=True)
class TaskLine:
    """One task as the report sees it."""

    task_id: str
    title: str
    tier: str  # a Tier value
    status: str  # a TaskStatus value
    state: str  # an IssueState value
    blocked_reason: str = ""


@dataclass(frozen=True)
class RiskLine:
    """One unresolved risk."""

    risk_id: str
    description: str
    severity: str


@dataclass(frozen=True)
class ProgressData:
    """Everything a progress report shows."""

    plan_name: str
    tasks: Sequence[TaskLine]
    risks: Sequence[RiskLine] = field(default_factory=tuple)
    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    plan_edits: str = ""  # plan edits during the run (issue 12 part 4), `plan_edit_line`; "" when none


def render_progress(data: ProgressData) -> str:
    """The report in seed 001's format."""
    done = [t for t in data.tasks if t.status == "completed"]
    running = [t for t in data.tasks if t.status == "in_progress"]
    blocked = [t for t in data.tasks if t.status in ("escalated", "failed") or t.blocked_reason]
    remaining = [t for t in data.tasks if t.status != "completed"]
    by_tier = {tier: sum(1 for t in remaining if t.tier == tier) for tier in TIERS}
    top = sorted(data.risks, key=lambda r: (SEVERITY_RANK.get(r.severity, 3), r.risk_id))[:3]
    lines = [
        f"PROGRESS — {data.plan_name}",
        f"Completed: {len(done)}/{len(data.tasks)} tasks",
        "In progress: " + (", ".join(f"task-{t.task_id} ({t.state})" for t in running) or "none"),
        "Blocked: "
        + ("; ".join(f"task-{t.task_id}: {t.blocked_reason or t.status}" for t in blocked) if blocked else "none"),
        f"Unresolved risks: {len(data.risks)}"
        + ("" if not top else " — " + "; ".join(f"[{r.severity}] {r.description}" for r in top)),
        "Estimated remaining: " + ", ".join(f"{by_tier[tier]} {tier}" for tier in TIERS),
        f"Cost so far: ${data.cost_usd:.4f} ({data.input_tokens} input / {data.output_tokens} output tokens)",
    ]
    if data.plan_edits:
        lines.insert(-1, data.plan_edits)
    return "\n".join(lines)


@dataclass
class ReportClock:
    """Seed 001's triggers: every N completed tasks or every M minutes, whichever first."""

    task_interval: int
    time_interval_s: float
    last_report_at: float
    completed_since: int = 0

    def task_completed(self) -> None:
        """Count one completion toward the next report."""
        self.completed_since += 1

    def due(self, now: float) -> str | None:
        """Why a periodic report is due now, or None."""
        if self.completed_since >= self.task_interval:
            return f"{self.completed_since} tasks completed"
        if now - self.last_report_at >= self.time_interval_s:
            return f"{int((now - self.last_report_at) // 60)} minutes elapsed"
        return None

    def reported(self, now: float) -> None:
        """Reset both triggers after a report."""
        self.completed_since = 0
        self.last_report_at = now
