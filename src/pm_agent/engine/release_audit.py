"""The release escalation (seed 001 section 7's risk audit, with the final review's findings).

Open risks of CRITICAL tasks, and final review findings left for a human (low severities, or any
left after the last review round), hold the release until a human answers one escalation:
accept (risks accepted; findings recorded as accepted risks, so the manifest lists them), mitigate
(a remediation task for each, through the normal loop) or abort. Risks of other tasks were reviewed
with their task: the PM accepts them and says so. An unanswered plan-change escalation holds the
release as well (`plan_changes_held`).
"""

from __future__ import annotations

from pm_agent.engine import final_review
from pm_agent.engine.reconcile import SOURCE as PLAN_CHANGE
from pm_agent.engine.review_findings import Finding
from pm_agent.engine.runctx import RunContext
from pm_agent.plan.models import Task, Tier
from pm_agent.reports.escalation import Escalation
from pm_agent.store import EscalationRecord, EscalationStatus, RiskRecord, RiskStatus, Severity, TaskRecord

SOURCE = "risk-audit"
HELD_STATUSES = (EscalationStatus.OPEN, EscalationStatus.ANSWERED)  # answered: not acted on yet
RISK_OPTIONS = [
    "accept: ship with the risks and findings recorded as accepted",
    "mitigate: open a remediation task for each risk and finding",
    "abort: stop the release",
]


def plan_changes_held(rc: RunContext) -> list[str]:
    """The plan-change escalations (reconcile.py) not yet settled: the release waits for each.

    A plan edit that touched work already done asks the human first (continue, restart or re-open); a
    release cut before that answer would ship the old contract as if the edit had never been made."""
    return [
        f"plan-change escalation #{e.id} ({e.source.removeprefix(PLAN_CHANGE + ':')}) waits for an answer"
        for e in rc.store.list_escalations(rc.run_id)
        if e.source.startswith(PLAN_CHANGE) and e.status in HELD_STATUSES
    ]


async def risk_audit(
    rc: RunContext, records: list[TaskRecord], review: final_review.ReviewResult | None = None
) -> tuple[str, list[str]]:
    """("clear" | "held" | "remediated", what is open): open CRITICAL risks and left findings need a human's word."""
    tiers = {r.task_id: r.tier for r in records}
    risks = rc.store.list_risks(rc.run_id)
    critical_open = [
        r for r in risks if r.status is RiskStatus.OPEN and tiers.get(r.source_task or "") is Tier.CRITICAL
    ]
    for risk in risks:
        if risk.status is RiskStatus.OPEN and risk not in critical_open:
            # Non-critical risks were reviewed with their task; the PM accepts them and says so.
            rc.store.update_risk_status(rc.run_id, risk.id, RiskStatus.ACCEPTED)
            rc.store.append_event(rc.run_id, "risk.accepted", {"risk": risk.id, "by": "pm (non-critical task)"})
    findings = review.to_ask if review is not None else []
    if not critical_open and not findings:
        return "clear", []
    described = [f"{r.id} {r.description}" for r in critical_open]
    described += [f"final review {f.describe()}" for f in findings]
    esc = _latest(rc)
    if esc is None or esc.status is EscalationStatus.APPLIED:  # an applied one answered earlier items
        parts = []
        if critical_open:
            parts.append("open risks on CRITICAL tasks: " + "; ".join(f"{r.id} {r.description}" for r in critical_open))
        if findings:
            parts.append("final review findings: " + "; ".join(f.describe() for f in findings))
        body = Escalation(
            problem="; ".join(parts),
            impact="the release is held until the risks and findings are accepted or mitigated",
            options=RISK_OPTIONS,
            recommended="accept if the review notes' rollback covers them; else mitigate",
        )
        esc = rc.open_escalation(None, SOURCE, body)
    if esc.status is EscalationStatus.OPEN:
        while rc.pending_escalations:  # the loop is not running: hand it to the channel here
            pending, text = rc.pending_escalations.pop(0)
            await rc.channel.escalate(rc.store, pending, text)
        esc = rc.store.get_escalation(esc.id)
    if esc.status is EscalationStatus.OPEN:
        return "held", described
    word = (esc.answer or "").strip().lower()
    if esc.status is EscalationStatus.ANSWERED:
        rc.store.mark_escalation_applied(esc.id)
    number = review.round.number if review is not None and review.round is not None else 0
    return _apply(rc, word, esc.id, number, critical_open, findings), described


def _apply(
    rc: RunContext, word: str, esc_id: int, number: int, critical_open: list[RiskRecord], findings: list[Finding]
) -> str:
    """Act on the human's answer: "clear", "remediated" or "held"."""
    if word.startswith("accept"):
        for risk in critical_open:
            rc.store.update_risk_status(rc.run_id, risk.id, RiskStatus.ACCEPTED)
        for f in findings:
            risk = rc.store.add_risk(
                rc.run_id, description=f"final review {f.describe()}", severity=_severity(f), source_task=None
            )
            rc.store.update_risk_status(rc.run_id, risk.id, RiskStatus.ACCEPTED)
        final_review.resolve(rc, number, findings, f"accepted by a human (escalation #{esc_id})")
        return "clear"
    if word.startswith("mitigate"):
        existing = {t.task_id for t in rc.store.list_tasks(rc.run_id)}
        new = [_mitigation(existing, risk.id, risk.description) for risk in critical_open]
        fixes = remediation(rc, number, findings, existing)
        rc.store.add_tasks(rc.run_id, [*new, *fixes], reason=f"release escalation: mitigate ({esc_id})")
        for risk in critical_open:
            rc.store.update_risk_status(rc.run_id, risk.id, RiskStatus.MITIGATED)
        for f, task in zip(findings, fixes, strict=True):
            final_review.resolve(rc, number, [f], f"mitigated by {task.ref} (escalation #{esc_id})")
        rc.emit("final.mitigate", "opened " + ", ".join(t.ref for t in [*new, *fixes]) + " to mitigate")
        return "remediated"
    if word.startswith("abort"):
        rc.aborted = True
    return "held"


def free_id(existing: set[str]) -> str:
    """The next unused remediation id (r1, r2, ...), reserved in `existing`: the release gate's one allocator."""
    n = 1
    while f"r{n}" in existing:
        n += 1
    existing.add(f"r{n}")
    return f"r{n}"


def remediation(rc: RunContext, number: int, findings: list[Finding], existing: set[str]) -> list[Task]:
    """One remediation task per finding, through the normal loop."""
    tasks = []
    for f in findings:
        where = f" in {f.where}" if f.file else ""
        body = f"The final review (round {number}) found{where}: {f.finding}" + (f"\n\nFix: {f.fix}" if f.fix else "")
        tasks.append(
            Task(
                id=free_id(existing),
                title=f"Fix final review finding {f.id}: {f.finding[:60]}",
                description=body,
                body=body,
                tier=Tier.CRITICAL if f.severity == "critical" else Tier.NORMAL,
                tier_reason=f"remediation of a {f.severity} final review finding",
                acceptance_criteria=[f"final review finding {f.id} is fixed: {f.finding}"],
                decision_log=[f"opened by the final review, round {number}: {f.describe()}"],
            )
        )
    return tasks


def _severity(f: Finding) -> Severity:
    """The risks table's severity for a finding's."""
    if f.severity == "critical":
        return Severity.CRITICAL
    return Severity.NORMAL if f.severity in ("high", "medium") else Severity.LOW


def _mitigation(existing: set[str], risk_id: str, description: str) -> Task:
    return Task(
        id=free_id(existing),
        title=f"Mitigate risk {risk_id}",
        description=description,
        body=f"Mitigate this risk found during review: {description}",
        tier=Tier.CRITICAL,
        tier_reason="CRITICAL: mitigates an open risk of a CRITICAL task",
        acceptance_criteria=[f"risk {risk_id} is mitigated: {description}"],
        decision_log=[f"opened by the risk audit for {risk_id}"],
    )


def _latest(rc: RunContext) -> EscalationRecord | None:
    found = [e for e in rc.store.list_escalations(rc.run_id) if e.source == SOURCE]
    return found[-1] if found else None
