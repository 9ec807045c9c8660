"""The demo model's turns: the session context it reads, and the tool calls each step makes (brain.py scripts them)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pm_agent.agents.header import SessionHeader
from pm_agent.demo.conversation import Conversation, result_text
from pm_agent.demo.project import environment_commands
from pm_agent.demo.tasks import DEMO_ANSWERS, DemoTask, criteria_mapping
from pm_agent.gates.models import GateId
from pm_agent.gates.narrow import command_for_test_files
from pm_agent.signals import TOOL_NAME
from pm_agent.testing.model_server import ModelRequest, ToolCall, Turn

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
