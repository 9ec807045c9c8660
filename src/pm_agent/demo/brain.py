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
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pm_agent.agents.header import SESSION_RE, SessionHeader, parse_session_header, session_header
from pm_agent.demo.conversation import ANSWER_RE, Conversation, parse_contract, result_text
from pm_agent.demo.project import environment_commands
from pm_agent.demo.tasks import DEMO_ANSWERS, DemoTask, ReviewText, criteria_mapping, demo_task, line_of
from pm_agent.gates.common import command_for_test_files
from pm_agent.gates.models import GateId
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

# The summary lines of pytest -q, ruff and mypy (told apart: ruff's "Found 2 errors." has no " in ").
_TEST_SUMMARY = re.compile(r"\b\d+ (?:passed|failed|errors?)\b.* in \d+(?:\.\d+)?s\b|^no tests ran in ")
_LINT_SUMMARY = re.compile(r"^All checks passed!$|^Found \d+ errors?\.$")
_TYPECHECK_SUMMARY = re.compile(r"^Success: no issues found|^Found \d+ errors? in \d+ files?")
# Gate ids a fixer's prompt names (the generic words "scope" and "secrets" would match any prompt).
_GATE_IDS: Final = tuple(g.value for g in GateId if g not in (GateId.SCOPE, GateId.SECRETS))


@dataclass(frozen=True)
class _Context:
    header: SessionHeader
    task: DemoTask
    request: ModelRequest
    conversation: Conversation
    contract: dict[str, Any]
    python: str

    @property
    def ref(self) -> str:
        return self.task.ref

    def path(self, relative: str) -> str:
        return str(self.header.workdir / relative)

    def answer(self) -> str | None:
        return self.conversation.answer or DEMO_ANSWERS.get(self.task.ref)

    def command(self, name: str) -> str | None:
        env = self.contract.get("environment")
        if isinstance(env, dict) and env.get(name):
            return str(env[name])
        if isinstance(env, dict):  # the contract says which commands are configured
            return None
        return environment_commands(self.python).get(name)

    def criteria_texts(self) -> list[str] | None:
        found = self.contract.get("acceptance_criteria")
        return [str(c) for c in found] if isinstance(found, list) else None

    def failed_gates(self) -> list[str]:
        """The gate ids named in the prompt before the contract (where the fixer's evidence is)."""
        text = self.conversation.prompt.split("task_contract:", 1)[0]
        return [gate for gate in _GATE_IDS if re.search(rf"(?<![\w-]){re.escape(gate)}(?![\w-])", text)]


@dataclass(frozen=True)
class _Step:
    """One assistant turn making `calls` tool calls."""

    calls: int
    make: Callable[[_Context], Turn]


# -- the turns --------------------------------------------------------------------------------------


def _read_turn(paths: Sequence[str]) -> _Step:
    def make(ctx: _Context) -> Turn:
        calls = [ToolCall("Read", {"file_path": ctx.path(p)}) for p in paths]
        return Turn(text=f"Reading {', '.join(paths)} before changing it.", tool_calls=calls)

    return _Step(len(paths), make)


def _write_turn(files: Mapping[str, str]) -> _Step:
    def make(ctx: _Context) -> Turn:
        calls = [ToolCall("Write", {"file_path": ctx.path(p), "content": c}) for p, c in files.items()]
        return Turn(text=f"Writing {', '.join(files)}.", tool_calls=calls)

    return _Step(len(files), make)


def _check_commands(ctx: _Context, test_files: Sequence[str]) -> list[tuple[str, str]]:
    """(kind, command) for the checks a code role runs: tests (only `test_files` when given), lint, types."""
    python = shlex.quote(ctx.python)
    test = ctx.command("test_command") or f"{python} -m pytest -q"
    if test_files:
        test = command_for_test_files(test, test_files)
    checks = [("test", test)]
    for kind, name in (("lint", "lint_command"), ("typecheck", "typecheck_command")):
        command = ctx.command(name)
        if command:
            checks.append((kind, command))
    return checks


def _bash_turn(test_files: Sequence[str] = ()) -> _Step:
    def make(ctx: _Context) -> Turn:
        command = "; ".join(cmd for _, cmd in _check_commands(ctx, test_files))
        what = f"the tests in {', '.join(test_files)}" if test_files else "the test suite"
        call = ToolCall("Bash", {"command": command, "description": f"Run {what}, the linter and the type checker"})
        return Turn(text=f"Running {what} and the other checks.", tool_calls=[call])

    return _Step(1, make)


def _evidence(ctx: _Context, test_files: Sequence[str]) -> dict[str, Any]:
    """testEvidence, lintEvidence, typecheckEvidence from the output of the Bash call, and the claim."""
    output = ctx.request.tool_result_text()
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    patterns = {"test": _TEST_SUMMARY, "lint": _LINT_SUMMARY, "typecheck": _TYPECHECK_SUMMARY}
    evidence: dict[str, Any] = {}
    passed = False
    for kind, command in _check_commands(ctx, test_files):
        found = [line for line in lines if patterns[kind].search(line)]
        shown = [f"$ {command}", *(found[-1:] or ["(no summary line in the output)"])]
        evidence[f"{kind}Evidence"] = shown
        if kind == "test":
            passed = bool(found) and "passed" in found[-1] and not re.search(r"failed|error", found[-1])
    evidence["testsClaimedPassing"] = passed
    return evidence


def _complete_turn(
    summary: str,
    files: Mapping[str, str],
    *,
    created: Sequence[str],
    modified: Sequence[str],
    test_files: Sequence[str] = (),
    code: bool = True,
) -> _Step:
    def make(ctx: _Context) -> Turn:
        task = ctx.task
        payload: dict[str, Any] = {"signal": "complete", "stepId": ctx.ref, "summary": summary}
        payload["selfAssessment"] = "confident"
        if code:
            payload["filesCreated"] = list(created)
            payload["filesModified"] = list(modified)
            payload.update(_evidence(ctx, test_files))
            payload["criteriaMapping"] = criteria_mapping(task, files, ctx.criteria_texts())
        note = task.review
        payload["reviewNote"] = {"summary": note.summary, "risks": list(note.risks), "rollback": note.rollback}
        return Turn(text="Reporting back to pm-agent.", tool_calls=[ToolCall(TOOL_NAME, payload)])

    return _Step(1, make)


def _done_turn(text: str) -> _Step:
    def make(ctx: _Context) -> Turn:
        refused = [r for r in ctx.request.tool_results() if r.get("is_error")]
        if refused:
            return Turn(text=f"signal_back refused the call: {result_text(refused[0])[:300]}")
        return Turn(text=text)

    return _Step(0, make)


def _ask_turn() -> _Step:
    def make(ctx: _Context) -> Turn:
        question = ctx.task.question
        assert question is not None
        payload = {
            "signal": "needs-user-input",
            "stepId": ctx.ref,
            "question": question.question,
            "context": question.context,
        }
        return Turn(text="This needs a decision from the user first.", tool_calls=[ToolCall(TOOL_NAME, payload)])

    return _Step(1, make)


def _signal_only(summary: str) -> _Step:
    def make(ctx: _Context) -> Turn:
        payload = {"signal": "complete", "stepId": ctx.ref, "summary": summary, "selfAssessment": "confident"}
        return Turn(text="Reporting back to pm-agent.", tool_calls=[ToolCall(TOOL_NAME, payload)])

    return _Step(1, make)


# -- the scripts per role ---------------------------------------------------------------------------


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


FINAL_REVIEW_TASK = "task-final-review"
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
