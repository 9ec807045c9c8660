"""The text pm-agent writes on GitHub: issue titles and bodies, comments, and the hidden markers that find them again.

Every issue body and comment ends with an HTML comment (invisible on GitHub) naming what wrote it, so that a
sender restarted after a crash finds what it already did instead of doing it twice, and so that the poller
never takes pm-agent's own comments for answers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import PurePath

from pm_agent.github.pulls import Published
from pm_agent.plan.models import Task
from pm_agent.reports.escalation import render_stored
from pm_agent.store.records import EscalationRecord, RunRecord, TaskRecord

MARK = "<!-- pm-agent "
ANSWER_WORDS = "`retry: <what to do differently>`, `skip`, `abort`, `accept` or `mitigate`"


def task_marker(run_id: str, task_id: str) -> str:
    """The hidden marker in a task issue's body."""
    return f"<!-- pm-agent run={run_id} task={task_id} -->"


def run_marker(run_id: str) -> str:
    """The hidden marker in the run issue's body."""
    return f"<!-- pm-agent run={run_id} -->"


def comment_marker(key: str) -> str:
    """The hidden marker of a comment: the outbox key that wrote it."""
    return f"<!-- pm-agent key={key} -->"


def is_ours(body: str) -> bool:
    """Whether pm-agent wrote this text (it carries one of its markers)."""
    return MARK in body


def task_title(record: TaskRecord) -> str:
    """`task-<id>: <title>`."""
    return f"task-{record.task_id}: {record.title}"


def task_labels(tier: str, state: str, keep: tuple[str, ...] = ()) -> tuple[str, ...]:
    """`pm-agent`, `tier:<tier>`, `state:<state>`, and the issue's other labels (`keep`) untouched."""
    own = ("pm-agent", f"tier:{tier}", f"state:{state}")
    others = tuple(lb for lb in keep if lb != "pm-agent" and not lb.startswith(("tier:", "state:")))
    return (*own, *others)


def _bullets(items: list[str]) -> list[str]:
    return [f"- {item}" for item in items] or ["- (none given)"]


def task_body(record: TaskRecord, issue_of: Callable[[str], int | None]) -> str:
    """The task issue: summary, acceptance criteria, tier and why, dependencies as `#N`, files, marker."""
    task = Task.model_validate(record.contract)
    summary = task.description.strip() or task.title
    deps = []
    for dep in task.depends_on:
        number = issue_of(dep.task_id)
        ref = f"#{number}" if number is not None else f"task-{dep.task_id}"
        deps.append(ref + (f" ({dep.reason})" if dep.inferred and dep.reason else ""))
    files = task.expected_files
    touched = [*files.create, *files.modify, *files.delete, *files.test]
    lines = [
        summary,
        "",
        "**Acceptance criteria**",
        *_bullets(task.acceptance_criteria),
        "",
        f"**Tier:** {task.tier.value}" + (f" ({task.tier_reason})" if task.tier_reason else ""),
        "**Depends on:** " + (", ".join(deps) if deps else "none"),
    ]
    if touched:
        lines.append("**Files:** " + ", ".join(f"`{f}`" for f in touched))
    lines += ["", f"_Driven by pm-agent, run `{record.run_id}`; labels follow the task's state._", "",
              task_marker(record.run_id, record.task_id)]  # fmt: skip
    return "\n".join(lines)


def run_title(run: RunRecord) -> str:
    """The run issue's title."""
    return f"pm-agent run {run.id}: {run.plan_id}"


def run_body(run: RunRecord, tasks: Mapping[str, int]) -> str:
    """The run issue: the plan, the branch, how to answer, the task issues, marker."""
    lines = [
        # The plan's name only: its absolute path is this machine's business.
        f"pm-agent runs plan `{PurePath(run.plan_doc).name}` on branch `{run.working_branch}` (run `{run.id}`).",
        "",
        "Progress reports and run-level escalations are posted here. To answer an escalation, reply on the",
        "task's issue, or comment here: `/answer <escalation id> <answer>`. Only answerers' comments count.",
    ]
    if tasks:
        lines += ["", "**Tasks:** " + ", ".join(f"#{n}" for n in tasks.values())]
    lines += ["", run_marker(run.id)]
    return "\n".join(lines)


def escalation_comment(esc: EscalationRecord, key: str, run_issue: int | None, on_run_issue: bool) -> str:
    """Seed 001's escalation text and how to answer it."""
    how = (
        f"Answer with a comment `/answer {esc.id} <answer>` on this issue"
        if on_run_issue
        else "Answer by replying on this issue"
        + (f" (or `/answer {esc.id} <answer>` on the run issue #{run_issue})" if run_issue is not None else "")
    )
    lines = [
        f"**pm-agent needs an answer** (escalation #{esc.id})",
        "",
        "```",
        render_stored(esc),
        "```",
        "",
        f"{how}: one of the options, your own instructions, or {ANSWER_WORDS}. "
        f'`pm-agent answer {esc.id} "..."` in a terminal works too; the first answer is taken.',
        "",
        comment_marker(key),
    ]
    return "\n".join(lines)


def answered_comment(esc: EscalationRecord, key: str, via: str) -> str:
    """The answer that was taken, and through which channel."""
    quoted = "\n".join(f"> {line}" for line in (esc.answer or "").splitlines()) or "> (empty)"
    return "\n".join([f"Escalation #{esc.id} was answered {via}; pm-agent took this answer:", "", quoted, "",
                      comment_marker(key)])  # fmt: skip


def refused_comment(escalation_id: int, key: str, author: str) -> str:
    """A GitHub answer that came after another channel had answered."""
    return "\n".join([f"@{author}: escalation #{escalation_id} was already answered; this comment was not taken.",
                      "", comment_marker(key)])  # fmt: skip


def done_comment(record: TaskRecord, key: str) -> str:
    """A completed task: its commit and review artifact."""
    artifacts = [a for a in record.artifacts if "review" in a] or record.artifacts
    lines = [f"Completed in commit {record.commit_sha or '(not recorded)'}."]
    if artifacts:
        lines.append("Review artifact: " + ", ".join(f"`{a}`" for a in artifacts))
    lines += ["", comment_marker(key)]
    return "\n".join(lines)


def report_comment(kind: str, text: str, key: str) -> str:
    """A progress report or the handoff, as pm-agent printed it."""
    title = {"progress": "Progress report", "handoff": "Release handoff"}.get(kind, kind)
    return "\n".join([f"**{title}**", "", "```", text.strip(), "```", "", comment_marker(key)])


def release_comment(done: Published, key: str) -> str:
    """The release's pull request (and the kept CRITICAL branches'), on the run issue."""
    lines = [f"Release pull request: #{done.release.number} ({done.release.head} into {done.release.base}),"
             " for a human to review and merge; pm-agent never merges."]  # fmt: skip
    lines += [f"- CRITICAL branch `{head}`: #{pull.number}" for head, pull in done.task_pulls.items()]
    lines += [f"- CRITICAL branch `{head}`: no pull request ({why})" for head, why in done.skipped.items()]
    return "\n".join([*lines, "", comment_marker(key)])
