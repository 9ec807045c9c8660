"""Seed 004's Lawbringer: one reviewer session over the whole working branch before the release manifest.

    review = await run_review(rc)      # in final_release_gate, once the checks pass

The reviewer reads `git diff <baseline>..HEAD` in a detached worktree of the working branch, with
the design doc and the requirements, and writes its findings (review_findings.py) into
`docs/reviews/<plan-id>-final-review.md` there; pm-agent reads them, or sends the session back with
the reason. Each round is stored as a `final_review.round` event keyed by the head it reviewed, so
a gate that runs again on the same head (a restart, an answered escalation) reuses it instead of
asking again. Findings of `fix_severities` open remediation tasks while rounds are left; the rest
go to the human in the release escalation (release_audit.py). The document committed with the
manifest is pm-agent's own: every round, what became of each finding, and the last review as written.

The sessions are stored under a task row of their own, `task-final-review`: sessions and signals
belong to a task in the store. It is completed from the start (EXISTS, no commit), so the loop
never dispatches it and the completion check passes it; `final_release_gate` leaves it out of the
task counts. A kill -9 during a session is resumed like a task's: a stored signal is used, an
interrupted session is continued (`--resume`) in the same worktree.

A reviewer that answers as it would for a task (a complete signal with a reviewNote, no file) is
read leniently: approved, each of the note's risks a low finding for the human.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

from pm_agent.agents.header import session_header
from pm_agent.agents.session import (
    CONVERSATION_LOST,
    SessionResult,
    conversation_lost,
    lost_conversation_prompt,
    record_lost,
    resume_session,
    start_session,
)
from pm_agent.engine import integrity
from pm_agent.engine.baseline import setup_worktree
from pm_agent.engine.history import typed_signal
from pm_agent.engine.prompt_builder import OVERRIDE_DIR
from pm_agent.engine.review_findings import (
    Finding,
    ReviewFormatError,
    dump_findings,
    format_help,
    load_findings,
    read_findings,
)
from pm_agent.engine.runctx import RunContext
from pm_agent.errors import NotFoundError, SetupError
from pm_agent.internal_tasks import FINAL_REVIEW
from pm_agent.lifecycle import IssueState
from pm_agent.plan.models import Presence, Task, Tier
from pm_agent.signals import CompleteSignal, signal_instructions
from pm_agent.store import EventRecord, SessionRecord, SessionStatus, SignalRecord, TaskRecord
from pm_agent.vcs import Git

CONTAINER = FINAL_REVIEW  # the task row holding the review's sessions
ROLE = "reviewer"
ROUND = "final_review.round"
RESOLVED = "final_review.resolved"
KEEP_TEXT = 20_000  # of the reviewer's document, in the round's event
RESTARTED = (
    "pm-agent restarted while you were reviewing. Check that your review file is written in the "
    "format asked for, then call signal_back exactly once."
)


@dataclass(frozen=True)
class ReviewRound:
    """One stored round: the head it reviewed, the findings, what the reviewer wrote."""

    number: int
    head: str
    findings: list[Finding]
    summary: str
    text: str
    session: int | None


@dataclass
class ReviewResult:
    """What the final review says for this gate."""

    status: str  # "off" | "clean" | "findings" | "failed"
    round: ReviewRound | None = None
    to_fix: list[Finding] = field(default_factory=list)  # remediation tasks, rounds left
    to_ask: list[Finding] = field(default_factory=list)  # for the human: accept or mitigate
    problem: str = ""


def review_path(rc: RunContext) -> str:
    """`docs/reviews/<plan-id>-final-review.md` (under the configured review folder)."""
    return f"{rc.config.review_artifacts_dir.rstrip('/')}/{rc.run.plan_id}-final-review.md"


def _events(rc: RunContext, kind: str) -> list[EventRecord]:
    return [e for e in rc.store.events(rc.run_id, task_id=CONTAINER) if e.kind == kind]


def rounds(rc: RunContext) -> list[ReviewRound]:
    """Every stored round, oldest first."""
    out = []
    for event in _events(rc, ROUND):
        p = event.payload
        out.append(
            ReviewRound(
                number=int(p["round"]),
                head=str(p["head"]),
                findings=load_findings(p.get("findings")),
                summary=str(p.get("summary", "")),
                text=str(p.get("text", "")),
                session=p.get("session"),
            )
        )
    return out


def resolutions(rc: RunContext) -> dict[tuple[int, str], str]:
    """(round, finding id) → what became of it ("remediated by task-r2", "accepted (escalation #4)", ...)."""
    out: dict[tuple[int, str], str] = {}
    for event in _events(rc, RESOLVED):
        p = event.payload
        out[(int(p["round"]), str(p["finding"]))] = str(p["how"])
    return out


def resolve(rc: RunContext, number: int, findings: list[Finding], how: str) -> None:
    """Record what became of these findings of round `number`."""
    for f in findings:
        payload = {"round": number, "finding": f.id, "how": how}
        rc.store.append_event(rc.run_id, RESOLVED, payload, task_id=CONTAINER)


def container(rc: RunContext) -> TaskRecord:
    """The review's task row, created completed on first use."""
    try:
        return rc.store.get_task(rc.run_id, CONTAINER)
    except NotFoundError:
        pass
    task = Task(
        id=CONTAINER,
        title="Final review of the working branch",
        description="Not a plan task: holds the sessions of the final review (seed 004's Lawbringer).",
        tier=Tier.NORMAL,
        presence=Presence.EXISTS,
        presence_reason="the final review's record, not work of its own",
        decision_log=["opened by the final release gate"],
    )
    rc.store.add_tasks(rc.run_id, [task], reason="final review: the record of its reviewer sessions")
    rec = rc.store.get_task(rc.run_id, CONTAINER)
    return rc.move(rec, IssueState.COMPLETED, "final review: holds the reviewer sessions; nothing to dispatch")


async def run_review(rc: RunContext) -> ReviewResult:
    """This gate's final review: the stored round for the current head, or a new round."""
    settings = rc.config.final_review
    if not settings.enabled:
        return ReviewResult("off")
    head = await asyncio.to_thread(rc.git.rev_parse, rc.run.working_branch)
    done = rounds(rc)
    current = done[-1] if done and done[-1].head == head else None
    if current is None:
        number = len(done) + 1
        found = await _new_round(rc, number, head, done)
        if isinstance(found, str):
            return ReviewResult("failed", problem=found)
        current = found
    settled = resolutions(rc)
    open_ = [f for f in current.findings if (current.number, f.id) not in settled]
    if not open_:
        return ReviewResult("clean" if not current.findings else "findings", current)
    rounds_left = current.number < settings.max_rounds
    to_fix = [f for f in open_ if rounds_left and f.severity in settings.fix_severities]
    to_ask = [f for f in open_ if f not in to_fix]
    return ReviewResult("findings", current, to_fix=to_fix, to_ask=to_ask)


async def _new_round(rc: RunContext, number: int, head: str, earlier: list[ReviewRound]) -> ReviewRound | str:
    """Run (or recover) round `number`'s session until its findings read; the round, or why it failed."""
    rec = container(rc)
    if rec.attempt < number:  # the signal desk refuses sessions of an older attempt
        rec = rc.store.update_task(rc.run_id, CONTAINER, event="final_review.started", attempt=number)
        rc.emit("final.review", f"final review round {number} of {rc.run.working_branch} at {head[:12]}")
    workdir = rc.state_dir / "worktrees" / rc.run_id / f"_final-review-{number}"
    if not workdir.exists():
        workdir.parent.mkdir(parents=True, exist_ok=True)
        await asyncio.to_thread(rc.git.worktree_add_detached, workdir, head)
    try:  # the reviewer may run the tests, as each task's agent does
        await asyncio.to_thread(setup_worktree, rc.config, Git(workdir))
    except SetupError as exc:  # the final gate reports the environment; the review still reads the diff
        rc.emit("final.review", f"final review round {number}: {exc}")
    system = f"{session_header(ROLE, f'task-{CONTAINER}', number, workdir)}\nYou review the whole working branch."
    spent = [s for s in rc.store.list_sessions(rc.run_id, CONTAINER) if s.attempt == number]
    step = await asyncio.to_thread(_recover, rc, spent[-1]) if spent else None
    tries = len(spent)
    while True:
        result: SessionResult | None = None
        signal: SignalRecord | None
        if isinstance(step, _Recovered):
            session, signal = step.session, step.signal
        elif isinstance(step, tuple):  # a session to continue: (its record, the message)
            tries += 1
            result = await resume_session(rc.host, step[0], step[1], system_prompt=system)
            if conversation_lost(result):  # nothing to continue: once, a fresh session told so
                rc.emit(CONVERSATION_LOST, await asyncio.to_thread(record_lost, rc.store, step[0], result))
                prompt = lost_conversation_prompt(review_prompt(rc, number, head, workdir, earlier), step[1])
                result = await start_session(
                    rc.host, run_id=rc.run_id, task_id=CONTAINER, role=ROLE, prompt=prompt,
                    workdir=workdir, attempt=number, system_prompt=system,
                )  # fmt: skip
            session, signal = result.record, result.signal
        else:
            tries += 1
            prompt = review_prompt(rc, number, head, workdir, earlier)
            result = await start_session(
                rc.host, run_id=rc.run_id, task_id=CONTAINER, role=ROLE, prompt=prompt,
                workdir=workdir, attempt=number, system_prompt=system,
            )  # fmt: skip
            session, signal = result.record, result.signal
        escaped = integrity.escape_problem(result) if result is not None else None
        if signal is not None:
            rc.store.mark_signal_consumed(signal.id)
        if escaped is not None:
            return f"the final reviewer changed files outside its worktree: {escaped}"
        outcome = _read(rc, workdir, signal)
        if isinstance(outcome, tuple):
            findings, text = outcome
            return _store_round(rc, number, head, findings, signal, text, session, workdir)
        reason = outcome
        rc.emit("final.review", f"final review round {number}: refused: {reason}")
        if tries >= rc.config.final_review.attempts:
            return f"final review round {number}: no readable review after {tries} session(s): {reason}"
        session = rc.store.get_session(session.id)
        resumable = bool(session.agent_session_id) and session.status is not SessionStatus.STUCK
        step = (session, _retry_message(reason)) if resumable else None


@dataclass(frozen=True)
class _Recovered:
    session: SessionRecord
    signal: SignalRecord


def _recover(rc: RunContext, last: SessionRecord) -> _Recovered | tuple[SessionRecord, str] | None:
    """After a restart: the stored signal of the round's last session, or that session to continue."""
    store = rc.store
    signal = next((g for g in store.signals_for_session(last.id) if g.accepted and not g.consumed), None)
    interrupted = last.status in (SessionStatus.STARTING, SessionStatus.RUNNING)
    if signal is not None:
        if interrupted:  # pm-agent died between the signal and the monitor closing the session
            last = store.update_session(last.id, status=SessionStatus.SIGNALLED, ended_at=datetime.now(UTC))
        return _Recovered(last, signal)
    if interrupted:
        store.update_session(last.id, status=SessionStatus.KILLED, ended_at=datetime.now(UTC))
        if last.agent_session_id:
            rc.emit("session.resumed", f"final review: the reviewer continues session {last.id}")
            return (store.get_session(last.id), RESTARTED)
    return None


def _read(rc: RunContext, workdir: Path, signal: SignalRecord | None) -> tuple[list[Finding], str] | str:
    """The findings and the text the reviewer wrote, or why they are refused."""
    typed = typed_signal(signal) if signal is not None else None
    if not isinstance(typed, CompleteSignal):
        kind = signal.kind if signal is not None else "no signal"
        return f"the session ended with {kind}; write the review file, then send a complete signal"
    path = workdir / review_path(rc)
    if not path.is_file():
        if typed.review_note is None:
            return f"no review file at {review_path(rc)}: write it with the findings block, then signal again"
        # Lenient: a reviewer that answered as for a task (a reviewNote, no file) approved; its risks are
        # findings a human may accept.
        note = typed.review_note
        risks = [Finding(id=f"F{n}", severity="low", finding=r) for n, r in enumerate(note.risks, start=1)]
        return risks, f"(no review file written; the reviewer's signal) {typed.summary}\n\n{note.summary}"
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        return read_findings(text), text
    except ReviewFormatError as exc:
        return f"{review_path(rc)}: {exc}"


def _retry_message(reason: str) -> str:
    return (
        f"pm-agent could not take your review: {reason}\n\n"
        f"Correct the review file; the findings block must look like this:\n{format_help()}\n"
        "Then call signal_back exactly once with a complete signal."
    )


def _store_round(
    rc: RunContext,
    number: int,
    head: str,
    findings: list[Finding],
    signal: SignalRecord | None,
    text: str,
    session: SessionRecord,
    workdir: Path,
) -> ReviewRound:
    summary = str(signal.payload.get("summary", "")) if signal is not None else ""
    payload: dict[str, Any] = {
        "round": number,
        "head": head,
        "findings": dump_findings(findings),
        "summary": summary,
        "text": text[:KEEP_TEXT],
        "session": session.id,
    }
    rc.store.append_event(rc.run_id, ROUND, payload, task_id=CONTAINER)
    said = "; ".join(f.describe() for f in findings) or "no findings"
    rc.emit("final.review", f"final review round {number}: {said}")
    with contextlib.suppress(Exception):  # best effort: a leftover worktree is harmless and listed by git
        rc.git.worktree_remove(workdir, force=True)
    return ReviewRound(number, head, findings, summary, text[:KEEP_TEXT], session.id)


def review_prompt(rc: RunContext, number: int, head: str, workdir: Path, earlier: list[ReviewRound]) -> str:
    """The reviewer's prompt for round `number` of the branch at `head`, checked out in `workdir`."""
    base = rc.run.baseline_sha
    stat = Git(workdir).diff_stat(base, "HEAD") or "(no change found)"
    settled = resolutions(rc)
    before = "".join(
        f"\n- round {r.number} {f.describe()} → {settled.get((r.number, f.id), 'open')}"
        for r in earlier
        for f in r.findings
    )
    req_path = rc.config.final_review.requirements_doc
    requirements = ""
    if req_path and (rc.repo / req_path).is_file():
        requirements = (rc.repo / req_path).read_text(encoding="utf-8", errors="replace")[:8000]
    values = {
        "head": head[:12],
        "baseline": base[:12],
        "stat": stat,
        "review_path": review_path(rc),
        "format": format_help(),
        "round": str(number),
        "earlier": (" Earlier rounds found (check that each is fixed):" + before) if before else "",
        "design_path": _in_repo(rc, rc.run.design_doc) or "none",
        "design": rc.design_text[:8000] or "(no design doc given)",
        "requirements_path": req_path or "none",
        "requirements": requirements or "(no requirements doc given: review against the design doc and the plan)",
        "signal_instructions": signal_instructions(ROLE, f"task-{CONTAINER}"),
    }
    return Template(_template(rc.repo)).safe_substitute(values).strip() + "\n"


def _template(repo: Path) -> str:
    override = repo / OVERRIDE_DIR / "final-review.md"
    if override.is_file():
        return override.read_text(encoding="utf-8")
    return resources.files("pm_agent.engine").joinpath("prompts", "final-review.md").read_text(encoding="utf-8")


def _in_repo(rc: RunContext, path: str | None) -> str:
    """`path` relative to the repository when it is inside it."""
    if not path:
        return ""
    try:
        return str(Path(path).resolve().relative_to(rc.repo.resolve()))
    except ValueError:
        return path


def render_review(rc: RunContext) -> str:
    """The document committed with the manifest: every round, each finding's fate, the last review as written."""
    settled = resolutions(rc)
    done = rounds(rc)
    lines = [
        f"# Final review: {rc.run.plan_id}",
        "",
        f"Working branch `{rc.run.working_branch}` against baseline `{rc.run.baseline_sha[:12]}`; "
        f"design doc: {_in_repo(rc, rc.run.design_doc) or 'none'}; "
        f"requirements: {rc.config.final_review.requirements_doc or 'none'}.",
        "",
    ]
    for r in done:
        lines += [f"## Round {r.number} (head `{r.head[:12]}`)", "", r.summary or "(no summary)", ""]
        if not r.findings:
            lines += ["No findings.", ""]
            continue
        lines += ["| id | severity | where | finding | fix | outcome |", "|---|---|---|---|---|---|"]
        for f in r.findings:
            cells = [f.id, f.severity, f.where, f.finding, f.fix or "-", settled.get((r.number, f.id), "open")]
            lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
        lines.append("")
    if done:
        lines += [f"## The last review as written (round {done[-1].number})", "", done[-1].text.strip(), ""]
    return "\n".join(lines).rstrip() + "\n"
