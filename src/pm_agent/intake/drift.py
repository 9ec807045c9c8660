"""After the hand-off: requirements that changed since they were locked are a visible event of the plan's run.

The plan's run reads the approved copy (`run.design_doc`, in `.pm-agent/intake/<request run>/`) and
the working branch holds the committed one. `note_drift` compares both with the hash locked during
the intake and records each new difference once as `requirements.changed` on the plan's run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pm_agent.engine.events import Listener
from pm_agent.errors import VcsError
from pm_agent.intake.context import REQUIREMENTS, STARTED, IntakeInfo
from pm_agent.intake.docs import requirements_hash
from pm_agent.store import RunRecord, Store
from pm_agent.vcs import Git

__all__ = ["CHANGED", "note_drift"]

CHANGED = "requirements.changed"


def _intake_of(store: Store, run: RunRecord) -> tuple[str, IntakeInfo, str] | None:
    """(intake run id, its request, the locked hash) of the request whose hand-off started `run`."""
    for other in store.list_runs():
        events = store.events(other.id)
        handoff = [e for e in events if e.kind == "intake.handoff" and e.payload.get("plan") == run.plan_doc]
        started = [e for e in events if e.kind == STARTED]
        locks = [e for e in events if e.kind == "requirements.locked" and e.task_id == REQUIREMENTS]
        if handoff and started and locks:
            return other.id, IntakeInfo.from_payload(started[0].payload), str(locks[-1].payload["sha256"])
    return None


def note_drift(repo: Path, store: Store, run: RunRecord, listener: Listener) -> list[dict[str, Any]]:
    """Record (once per new text) each place where the plan run's requirements differ from the lock."""
    if any(e.kind == STARTED for e in store.events(run.id, limit=5)):
        return []  # an intake run: its own changes are recorded while it runs (flow.check_lock)
    found = _intake_of(store, run)
    if found is None:
        return []
    intake_id, info, locked = found
    texts: dict[str, str] = {}
    if run.design_doc and Path(run.design_doc).is_file():
        texts[run.design_doc] = Path(run.design_doc).read_text(encoding="utf-8")
    try:
        texts[f"{run.working_branch}:{info.design_rel}"] = Git(repo).run(
            "show", f"{run.working_branch}:{info.design_rel}"
        )
    except VcsError:
        texts[f"{run.working_branch}:{info.design_rel}"] = ""  # deleted on the branch: a change too
    seen = {(e.payload.get("where"), e.payload.get("to")) for e in store.events(run.id) if e.kind == CHANGED}
    recorded = []
    for where, text in texts.items():
        digest = requirements_hash(text)
        if digest == locked or (where, digest) in seen:
            continue
        payload = {"from": locked, "to": digest, "where": where, "request": intake_id}
        store.append_event(run.id, CHANGED, payload)
        listener.emit(
            CHANGED, f"the requirements in {where} changed since they were locked: {locked[:12]} → {digest[:12]}"
        )
        recorded.append(payload)
    return recorded
