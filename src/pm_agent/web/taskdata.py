"""The task page and the reports page, read from the store and from git (read only)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pm_agent.errors import VcsError
from pm_agent.reports.manifest import manifest_path
from pm_agent.reports.review import review_artifact_path
from pm_agent.store import RunRecord, SessionRecord, Store
from pm_agent.vcs import Git
from pm_agent.web.board import DISPATCHED, slot_numbers
from pm_agent.web.board import card as card_of
from pm_agent.web.models import (
    CostLine,
    GateView,
    ReportsView,
    ReportView,
    SessionView,
    SignalView,
    TaskView,
    TransitionView,
)

NOT_COMMITTED = "(not committed yet)"
LINE_CAP = 300  # characters of one output line shown


def session_facts(store: Store, session_id: int) -> tuple[int | None, str | None]:
    """(turns, model) of a session, from the lines its CLI printed: the init line names the model, the
    result line counts the turns."""
    turns: int | None = None
    model: str | None = None
    for line in store.session_events(session_id):
        try:
            data = json.loads(line.payload)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        if data.get("type") == "system" and isinstance(data.get("model"), str):
            model = data["model"]
        elif data.get("type") == "result" and isinstance(data.get("num_turns"), int):
            turns = data["num_turns"]
    return turns, model


def readable_lines(last_lines: str) -> str:
    """A session's last lines as a person reads them: text, tool calls and results instead of raw stream-json."""
    out = []
    for line in last_lines.splitlines():
        try:
            data = json.loads(line)
        except ValueError:
            # raw text the CLI printed, or a stream-json line the store kept only the end of
            out.append(line if len(line) <= LINE_CAP else line[:LINE_CAP] + " …")
            continue
        out.extend(_describe(data) if isinstance(data, dict) else [line])
    return "\n".join(out)


def _describe(data: dict[str, Any]) -> list[str]:
    kind = data.get("type")
    if kind == "result":
        return [f"[result] {data.get('subtype', '')}: {str(data.get('result', ''))[:LINE_CAP]}"]
    if kind == "system":
        return [f"[{data.get('subtype') or 'system'}]" + (f" model {data['model']}" if data.get("model") else "")]
    message = data.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return [json.dumps(data)[:LINE_CAP]]
    lines = []
    for part in content:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text":
            lines.append(str(part.get("text", "")))
        elif part.get("type") == "tool_use":
            lines.append(f"-> {part.get('name')} {json.dumps(part.get('input'))[:LINE_CAP]}")
        elif part.get("type") == "tool_result":
            lines.append(f"<- {str(part.get('content'))[:LINE_CAP]}")
    return lines


def _session_view(store: Store, rec: SessionRecord) -> SessionView:
    turns, model = session_facts(store, rec.id)
    end = rec.ended_at or (rec.last_output_at if rec.status.value not in ("starting", "running") else store.now())
    return SessionView(
        id=rec.id,
        role=rec.role,
        attempt=rec.attempt,
        status=rec.status.value,
        duration_s=(end - rec.started_at).total_seconds() if end is not None else None,
        turns=turns,
        model=model,
        input_tokens=rec.input_tokens,
        output_tokens=rec.output_tokens,
        cost_usd=rec.cost_usd,
        last_lines=readable_lines(rec.last_lines),
    )


def _git_text(repo: Path, *args: str) -> str:
    """git's output, or "" when git cannot answer (no such commit or file): the page shows what there is."""
    try:
        return Git(repo).run(*args)
    except VcsError:
        return ""


def _config_dir(run: RunRecord, key: str, default: str) -> str:
    value = run.config.get(key, default)
    return value if isinstance(value, str) and value else default


def task_view(store: Store, repo: Path, run_id: str, task_id: str) -> TaskView:
    """Everything about one task: moves, sessions, signals, gates, its diff stat and review artifact."""
    run = store.get_run(run_id)
    rec = store.get_task(run_id, task_id)
    transitions = store.transitions(run_id, task_id)
    sessions = store.list_sessions(run_id, task_id)
    since = transitions[-1].created_at if transitions else rec.updated_at
    slots = slot_numbers(store.events_of_kind(run_id, (DISPATCHED,)), store.list_sessions(run_id))
    card = card_of(rec, since, store.now(), slots, sum(s.cost_usd for s in sessions))
    signals = [
        SignalView(
            id=sig.id,
            session_id=sig.session_id,
            attempt=sig.attempt,
            kind=sig.kind,
            accepted=sig.accepted,
            reason=sig.reason,
            payload=sig.payload,
            at=sig.created_at,
        )
        for session in sessions
        for sig in store.signals_for_session(session.id)
    ]
    diff_stat = review = NOT_COMMITTED
    if rec.commit_sha:
        diff_stat = _git_text(repo, "diff", "--stat", f"{rec.commit_sha}^1", rec.commit_sha, "--") or "(no change)"
        path = review_artifact_path(_config_dir(run, "review_artifacts_dir", "docs/reviews"), f"task-{task_id}")
        review = _git_text(repo, "show", f"{rec.commit_sha}:{path}") or f"(no {path} in {rec.commit_sha[:12]})"
    return TaskView(
        run_id=run_id,
        card=card,
        status=rec.status.value,
        ownership=rec.ownership,
        commit_sha=rec.commit_sha,
        contract=rec.contract,
        transitions=[
            TransitionView(seq=t.seq, from_state=t.from_state, to_state=t.to_state, reason=t.reason, at=t.created_at)
            for t in transitions
        ],
        sessions=[_session_view(store, s) for s in sessions],
        signals=sorted(signals, key=lambda s: s.id),
        gates=[
            GateView(attempt=g.attempt, gate=g.gate, passed=g.passed, evidence=g.evidence, at=g.created_at)
            for g in store.gate_results(run_id, task_id)
        ],
        diff_stat=diff_stat,
        review_artifact=review,
    )


def _cost_lines(groups: Iterable[tuple[str, SessionRecord]]) -> list[CostLine]:
    sums: dict[str, list[SessionRecord]] = defaultdict(list)
    for key, session in groups:
        sums[key].append(session)
    return [
        CostLine(
            key=key,
            sessions=len(found),
            cost_usd=sum(s.cost_usd for s in found),
            input_tokens=sum(s.input_tokens for s in found),
            output_tokens=sum(s.output_tokens for s in found),
        )
        for key, found in sorted(sums.items(), key=lambda item: -sum(s.cost_usd for s in item[1]))
    ]


def reports_view(store: Store, repo: Path, run_id: str) -> ReportsView:
    """Progress reports, cost and tokens per role and per model, the manifest and the handoff."""
    run = store.get_run(run_id)
    sessions = store.list_sessions(run_id)
    models = {s.id: session_facts(store, s.id)[1] or "unknown" for s in sessions}
    progress = [ReportView(id=r.id, kind=r.kind, text=r.text, at=r.created_at) for r in store.list_reports(run_id)]
    handoffs = [r.text for r in store.list_reports(run_id, "handoff")]
    path = manifest_path(_config_dir(run, "release_manifest_dir", "docs/releases"), run.plan_id)
    return ReportsView(
        run_id=run_id,
        progress=[r for r in progress if r.kind == "progress"],
        by_role=_cost_lines((s.role, s) for s in sessions),
        by_model=_cost_lines((models[s.id], s) for s in sessions),
        manifest=_git_text(repo, "show", f"{run.working_branch}:{path}"),
        handoff=handoffs[-1] if handoffs else "",
    )
