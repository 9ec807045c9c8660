"""Seed 001's human escalation format, used by every escalation."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator


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
