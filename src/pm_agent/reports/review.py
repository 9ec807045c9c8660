"""The per-task review artifact, `docs/reviews/<task-id>-review.md`, committed with the task."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class GateLine:
    """One gate's outcome with its evidence."""

    gate: str
    passed: bool
    evidence: str


@dataclass(frozen=True)
class ReviewArtifact:
    """What the artifact records."""

    task_ref: str
    title: str
    tier: str
    review_tier: str
    summary: str
    criteria: Sequence[tuple[str, str]]  # (criterion, "path:line")
    gates: Sequence[GateLine]
    risks: Sequence[str] = field(default_factory=tuple)
    rollback: str = ""
    attempts: int = 1
    reviewer: str = ""
    breaking_change: bool = False


def review_artifact_path(reviews_dir: str, task_ref: str) -> str:
    """Where a task's review artifact lives in the repository."""
    return f"{reviews_dir.rstrip('/')}/{task_ref}-review.md"


def _fence(text: str) -> list[str]:
    return ["```", text.strip() or "(no output)", "```"]


def render_review(artifact: ReviewArtifact) -> str:
    """The artifact as Markdown."""
    lines = [
        f"# Review: {artifact.task_ref} — {artifact.title}",
        "",
        f"- Tier: {artifact.tier} (review: {artifact.review_tier})",
        f"- Attempts: {artifact.attempts}",
        f"- Breaking change: {'yes' if artifact.breaking_change else 'no'}",
        "",
        "## What changed",
        "",
        artifact.summary.strip() or "(no summary)",
        "",
        "## Acceptance criteria",
        "",
        "| criterion | location |",
        "|---|---|",
        *[f"| {c.replace('|', '/')} | `{loc}` |" for c, loc in artifact.criteria],
        "",
        "## Gates",
        "",
    ]
    for gate in artifact.gates:
        lines += [f"### {gate.gate}: {'PASS' if gate.passed else 'FAIL'}", "", *_fence(gate.evidence), ""]
    if artifact.reviewer:
        lines += ["## Reviewer", "", artifact.reviewer.strip(), ""]
    lines += ["## Risks", ""]
    lines += [f"- {r}" for r in artifact.risks] or ["- none identified"]
    lines += ["", "## Rollback", "", artifact.rollback.strip() or "Revert the commit.", ""]
    return "\n".join(lines)
