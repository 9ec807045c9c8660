"""The scripted model of the demo: answers Claude Code's requests for every role of every demo task.

`DemoBrain()(request)` reads who is asking from the first line of the system prompt that pm-agent
appends to every session,

    pm-agent session: role=developer task=task-3 attempt=1 workdir=/abs/worktree

and how far the session got from the conversation itself (the tool calls it already made, a
`The user answered:` message), so it keeps no state between requests and a resumed session picks
up where it left off. Requests without that line (Claude Code's auxiliary calls) get None, which the
model server answers with a short text.

A developer reads the files it will modify, writes every file (exact final content), runs the
contract's test, lint and typecheck commands with Bash, then calls `signal_back` with the evidence
the gates check: files, the real output lines of its Bash call, each acceptance criterion mapped to
the `path:line` that meets it, a review note. The fixer rewrites what the gates flagged; the
reviewer looks at `git status` and approves; the tester runs the suite. See `tasks.py` for the plan.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Final

from pm_agent.agents.header import SESSION_RE, SessionHeader, parse_session_header, session_header
from pm_agent.demo.conversation import ANSWER_RE, Conversation, parse_contract
from pm_agent.demo.tasks import DemoTask, ReviewText, criteria_mapping, demo_task, line_of
from pm_agent.demo.turns import (
    _ask_turn,
    _bash_turn,
    _complete_turn,
    _Context,
    _done_turn,
    _read_turn,
    _signal_only,
    _Step,
    _write_turn,
)
from pm_agent.internal_tasks import FINAL_REVIEW_STEP
from pm_agent.signals import TOOL_NAME
from pm_agent.testing.model_server import ModelRequest, ToolCall, Turn

__all__ = [
    "ANSWER_RE",
    "SESSION_RE",
    "DemoBrain",
    "SessionHeader",
    "criteria_mapping",
    "line_of",
    "parse_contract",
    "parse_session_header",
    "session_header",
]


def _code_steps(
    ctx: _Context,
    files: Mapping[str, str],
    *,
    reads: Sequence[str],
    summary: str,
    test_files: Sequence[str] = (),
    fixing: bool = False,
) -> list[_Step]:
    task = ctx.task
    created = [] if fixing else [p for p in files if p not in task.modify]
    modified = [p for p in files if p not in created]
    steps = [_read_turn(reads)] if reads else []
    on_disk = {**task.final_files(ctx.answer()), **files}
    steps += [
        _write_turn(files),
        _bash_turn(test_files),
        _complete_turn(summary, on_disk, created=created, modified=modified, test_files=test_files),
        _done_turn(f"Done: {task.ref} is ready for pm-agent's gates."),
    ]
    return steps


def _developer(ctx: _Context) -> list[_Step]:
    task = ctx.task
    if task.question is not None and ctx.conversation.answer is None and ctx.header.attempt <= 1:
        return [_ask_turn(), _done_turn("I asked the user and am waiting for the answer.")]
    files = task.attempt_files(ctx.header.attempt, ctx.answer())
    # Claude Code's Write refuses to replace a file the session has not read. A first attempt starts
    # from a clean worktree (only the files it modifies exist); a later one may find its own earlier work.
    reads = [p for p in files if p in task.modify or ctx.header.attempt > 1]
    if ctx.header.attempt <= 1 and task.first_attempt:
        summary = task.first_attempt_summary or task.summary
        return _code_steps(ctx, files, reads=reads, summary=summary, test_files=task.first_attempt_tests)
    summary = task.summary
    if ctx.conversation.answer:
        summary += f" The user's answer: {ctx.conversation.answer}"
    return _code_steps(ctx, files, reads=reads, summary=summary)


def _fixer(ctx: _Context) -> list[_Step]:
    task = ctx.task
    files = task.fixed_files(ctx.answer())
    gates = ctx.failed_gates()
    flagged = f"Fixed the failed gate(s) {', '.join(gates)}. " if gates else ""
    summary = flagged + (task.fix_summary or f"Rewrote {', '.join(files)} to the contract.")
    return _code_steps(ctx, files, reads=list(files), summary=summary, fixing=True)


def _reviewer(ctx: _Context) -> list[_Step]:
    task = ctx.task

    def look(ctx: _Context) -> Turn:
        call = ToolCall(
            "Bash",
            {"command": "git status --short --untracked-files=all", "description": "List the task's changes"},
        )
        return Turn(text="Looking at the change before the verdict.", tool_calls=[call])

    summary = f"Approved {task.ref} ({task.title}): {task.review.summary}"
    steps = [
        _Step(1, look),
        _complete_turn(summary, task.final_files(ctx.answer()), created=(), modified=(), code=False),
        _done_turn(f"Review of {task.ref} sent."),
    ]
    return steps


def _tester(ctx: _Context) -> list[_Step]:
    task = ctx.task
    files = task.final_files(ctx.answer())
    summary = f"Ran the suite against {task.ref}: the tests in {', '.join(task.tests) or 'the suite'} cover it."
    return [
        _bash_turn(),
        _complete_turn(summary, files, created=(), modified=(), code=True),
        _done_turn(f"Testing of {task.ref} reported."),
    ]


FINAL_REVIEW_TASK = FINAL_REVIEW_STEP
_REVIEW_FILE = re.compile(r"your review, `([^`]+)`")
CLEAN_REVIEW = (
    "# Final review\n\nThe tasks fit together and do what the design doc asks; the tests cover each module.\n\n"
    "```yaml\nfindings: []\n```\n"
)


def _final_reviewer(ctx: _Context) -> list[_Step]:
    """The final review of the whole branch: look at the log, write a clean review, report."""
    found = _REVIEW_FILE.search(ctx.conversation.prompt)
    review_file = found.group(1) if found else "docs/reviews/final-review.md"

    def look(ctx: _Context) -> Turn:
        call = ToolCall("Bash", {"command": "git log --oneline -20", "description": "List the task commits"})
        return Turn(text="Reading the whole change before the final verdict.", tool_calls=[call])

    def report(ctx: _Context) -> Turn:
        payload = {"signal": "complete", "stepId": ctx.header.task, "summary": "Final review written: no findings."}
        return Turn(text="Reporting back to pm-agent.", tool_calls=[ToolCall(TOOL_NAME, payload)])

    return [_Step(1, look), _write_turn({review_file: CLEAN_REVIEW}), _Step(1, report), _done_turn("Review sent.")]


def _unknown_task(ctx: _Context) -> list[_Step]:
    def ask(ctx: _Context) -> Turn:
        payload = {
            "signal": "needs-user-input",
            "stepId": ctx.header.task,
            "question": f"The demo's scripted model has no script for {ctx.header.task}. How should it proceed?",
            "context": "Only the tasks of the demo plan (docs/plans/*-textstats.md) are scripted.",
        }
        return Turn(tool_calls=[ToolCall(TOOL_NAME, payload)])

    return [_Step(1, ask), _done_turn("No script for this task.")]


_ROLES: Final[dict[str, Callable[[_Context], list[_Step]]]] = {
    "developer": _developer,
    "fixer": _fixer,
    "reviewer": _reviewer,
    "tester": _tester,
}


def _script(ctx: _Context) -> list[_Step]:
    role = ctx.header.role
    if role in _ROLES:
        return _ROLES[role](ctx)
    # analyst, planner (and any other role): report what the plan already says.
    summary = f"{ctx.task.ref} ({ctx.task.title}) is specified by the plan: {ctx.task.description}"
    return [_signal_only(summary), _done_turn("Reported.")]


def _pick(steps: Sequence[_Step], used: int) -> _Step | None:
    """The step after `used` tool calls; None when the script ran out."""
    made = 0
    for step in steps:
        if used <= made:
            return step
        made += step.calls
    return None


class DemoBrain:
    """The demo's scripted model: `brain(request)` is the next assistant turn, or None (not a session).

    `python` is the interpreter named in commands when the contract gives none.
    """

    def __init__(self, *, python: str | None = None) -> None:
        self.python = python or sys.executable

    def __call__(self, request: ModelRequest) -> Turn | None:
        header = parse_session_header(request.system_text())
        if header is None:
            return None
        conversation = Conversation.read(request.messages)
        contract = parse_contract(conversation.prompt) or {}
        task = demo_task(header.task)
        if header.task == FINAL_REVIEW_TASK:
            stub = _placeholder_task(header.task)
            ctx = _Context(header, stub, request, conversation, contract, self.python)
            step = _pick(_final_reviewer(ctx), conversation.used)
        elif task is None:
            stub = _placeholder_task(header.task)
            ctx = _Context(header, stub, request, conversation, contract, self.python)
            step = _pick(_unknown_task(ctx), conversation.used)
        else:
            ctx = _Context(header, task, request, conversation, contract, self.python)
            step = _pick(_script(ctx), conversation.used)
        if step is None:
            return Turn(text="Done.")
        return step.make(ctx)


def _placeholder_task(ref: str) -> DemoTask:
    return DemoTask(
        number=0,
        title=ref,
        description="",
        ownership="",
        tier=None,
        depends_on=(),
        create=(),
        modify=(),
        tests=(),
        criteria=(),
        summary="",
        review=ReviewText(summary="-", risks=(), rollback="-"),
    )
