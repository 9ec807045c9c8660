"""Seed 001's human escalation format, used by every escalation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, field_validator

if TYPE_CHECKING:
    from pm_agent.store.records import EscalationRecord


class Escalation(BaseModel):
    """One escalation: what failed or is ambiguous, and 2-3 concrete options."""

    model_config = ConfigDict(extra="forbid")

    problem: str
    impact: str
    options: list[str] = Field(min_length=2, max_length=3)
    recommended: str
    blocking: bool = True

    @field_validator("problem", "impact", "recommended")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value.strip()


def render_escalation(escalation: Escalation, escalation_id: int | None = None) -> str:
    """The escalation as seed 001's text template."""
    head = "ESCALATION" if escalation_id is None else f"ESCALATION #{escalation_id}"
    options = "\n".join(
        f"{'Options:' if i == 0 else '':<13}{i + 1}) {opt}" for i, opt in enumerate(escalation.options)
    )
    return "\n".join(
        [
            head,
            f"{'Problem:':<13}{escalation.problem}",
            f"{'Impact:':<13}{escalation.impact}",
            options,
            f"{'Recommended:':<13}{escalation.recommended}",
            f"{'Blocking:':<13}{'yes' if escalation.blocking else 'no'}",
        ]
    )


def render_stored(esc: EscalationRecord) -> str:
    """A stored escalation as seed 001's text template, with its id (as it was stored: not validated again)."""
    body = Escalation.model_construct(
        problem=esc.problem,
        impact=esc.impact,
        options=list(esc.options),
        recommended=esc.recommended,
        blocking=esc.blocking,
    )
    return render_escalation(body, esc.id)
