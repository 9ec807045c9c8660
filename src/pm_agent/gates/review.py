"""Gate 6, review note: seed 001's ReviewNote (what changed, risks, rollback) is present and usable."""

from __future__ import annotations

from pm_agent.gates.models import AgentReport, GateId, GateResult, Payload


def gate_review_note(report: Payload) -> GateResult:
    """Gate 6: `summary` and `rollback` non-empty; `risks` present as a list (an empty list is fine)."""
    agent = AgentReport.from_payload(report)
    note = agent.review_note
    problems: list[str] = []
    if note is None:
        problems.append("review note missing: send reviewNote {summary, risks, rollback}")
        problems += [f"payload problem: {p}" for p in agent.problems if p.startswith("review")]
    else:
        if not note.summary.strip():
            problems.append("summary is empty: say what changed")
        if note.risks is None:
            problems.append("risks missing: send a list ([] when there are none)")
        if not note.rollback.strip():
            problems.append("rollback is empty: say how to undo the change")
    risks = [r.strip() for r in (note.risks or []) if r.strip()] if note is not None else []
    if problems:
        evidence = "\n".join(problems)
    else:
        assert note is not None
        evidence = f"summary: {note.summary.strip()}\nrisks: {len(risks)}\nrollback: {note.rollback.strip()}"
    return GateResult(
        gate=GateId.REVIEW_NOTE,
        passed=not problems,
        evidence=evidence,
        details={
            "problems": problems,
            "summary": note.summary.strip() if note else "",
            "risks": risks,
            "rollback": note.rollback.strip() if note else "",
        },
    )


__all__ = ["gate_review_note"]
