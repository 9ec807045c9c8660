"""The text an agent's prompt carries about signal_back: how to call it, which signals its role may send,
and what evidence a complete signal must carry (seed 001's sub-agent return, gates 1 and 6).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from typing import Any, Final

from pm_agent.lifecycle.roles import ALLOWED_SIGNALS, ROLES, Role, resolve_role
from pm_agent.signals.models import SIGNAL_KINDS, required_wire_fields, target_role_names
from pm_agent.signals.reading import parse_signal
from pm_agent.signals.tokens import TOOL_NAME

# Roles whose complete signal is the task's report (engine/history.py's WORK_ROLES): the gates read its evidence,
# its criteria mapping and its review note. The tester's complete goes through the gates too, but it reports only
# the tests it added (its own evidence lines and example below): it never maps criteria nor writes the note.
REPORT_ROLES: Final[frozenset[Role]] = frozenset({Role.DEVELOPER, Role.FIXER})

_WHEN: Final[dict[str, str]] = {
    "complete": "the task is finished and you checked it (pm-agent then runs its own gates)",
    "partially-complete": (
        "you are running out of context before finishing; a fresh session continues from continuationPoint"
    ),
    "needs-user-input": (
        "you are blocked in a way only a human can resolve; your session is resumed with the answer"
    ),
    "needs-role-followup": (
        "another role must act first (e.g. the planner to split the step, the fixer for lint errors); "
        "resume=true brings you back afterwards"
    ),
}

# Seed 004's common followups: Codeweaver -> PathSeeker, Siegemaster -> Codeweaver, Lawbringer -> Spiritmender
# (without coming back), Spiritmender -> Codeweaver.
_FOLLOWUP_EXAMPLE: Final[dict[Role, tuple[Role, bool]]] = {
    Role.DEVELOPER: (Role.PLANNER, True),
    Role.TESTER: (Role.DEVELOPER, True),
    Role.REVIEWER: (Role.FIXER, False),
    Role.FIXER: (Role.DEVELOPER, True),
    Role.PLANNER: (Role.ANALYST, True),
}

_COMPLETE_FOCUS: Final[dict[Role, str]] = {
    Role.ANALYST: "summary: the requirements you locked (contexts, observables) and where you wrote them.",
    Role.PLANNER: "summary: the files you mapped and the steps you produced, in order.",
    Role.TESTER: "summary: the tests you added and what they cover; name failing behaviour in blockers.",
    Role.DEVELOPER: "summary: what you built, in a few sentences.",
    Role.FIXER: "summary: which failures you fixed and how; fix only what was flagged.",
    Role.REVIEWER: "summary: your verdict and the findings that matter; put problems in risks or blockers.",
}


def _example(kind: str, task_id: str, role: Role, criteria: Sequence[str]) -> dict[str, Any]:
    if kind == "complete":
        example: dict[str, Any] = {"signal": kind, "stepId": task_id, "summary": "What was accomplished."}
        if role is Role.TESTER:
            example |= {
                "filesModified": ["tests/test_new_module.py"],
                "testEvidence": ["$ pytest tests/test_new_module.py", "1 failed, 6 passed in 0.52s"],
                "blockers": ["test_empty_input fails: parse('') raises IndexError instead of returning []"],
            }
        elif role in REPORT_ROLES:
            mapped = list(criteria)[:2] or ["<acceptance criterion>"]
            example |= {
                "filesCreated": ["src/pkg/new_module.py", "tests/test_new_module.py"],
                "filesModified": ["src/pkg/app.py"],
                "testEvidence": ["$ pytest tests/test_new_module.py", "5 passed in 0.41s"],
                "lintEvidence": ["$ ruff check src", "All checks passed!"],
                "typecheckEvidence": ["$ mypy src", "Success: no issues found in 12 source files"],
                "criteriaMapping": [
                    {"criterion": text, "location": f"src/pkg/new_module.py:{10 * (i + 1)}"}
                    for i, text in enumerate(mapped)
                ],
                "reviewNote": {
                    "summary": "What changed and why.",
                    "risks": ["What could break."],
                    "rollback": "Revert the commit; no data migration.",
                },
                "testsClaimedPassing": True,
            }
        example |= {"selfAssessment": "confident"}
        return example
    if kind == "partially-complete":
        return {
            "signal": kind,
            "stepId": task_id,
            "progress": "What is done (files, tests).",
            "continuationPoint": "Exactly where to pick up next.",
            "filesModified": ["src/pkg/app.py"],
        }
    if kind == "needs-user-input":
        return {
            "signal": kind,
            "stepId": task_id,
            "question": "One question a human can answer without reading the code.",
            "context": "What you found, the options you see, and which one you would pick.",
        }
    target, resume = _FOLLOWUP_EXAMPLE.get(role, (Role.PLANNER, True))
    return {
        "signal": kind,
        "stepId": task_id,
        "targetRole": target.value,
        "reason": "Why that role must act first.",
        "context": "What it needs to know.",
        "resume": resume,
    }


@cache
def _target_roles() -> str:
    parts = []
    names = target_role_names()
    for name in names:
        role = resolve_role(name)
        if name != role.value:
            continue
        seed = [alias for alias in ROLES[role].aliases if alias in names]
        parts.append(f"{name} ({', '.join(seed)})" if seed else name)
    return ", ".join(parts)


def _evidence_lines(role: Role) -> list[str]:
    lines = [
        "Evidence for `complete` (pm-agent re-runs lint, typecheck and tests itself and compares):",
        f"- {_COMPLETE_FOCUS.get(role, 'summary: what was accomplished.')}",
        "- filesCreated / filesModified / filesDeleted: every path you touched, relative to the repo root.",
    ]
    if role is Role.TESTER:
        lines += [
            "- testEvidence: the test command and its key output lines (copy them, do not paraphrase); a test "
            "you added that fails is a finding, not a mistake: keep it and name it in blockers.",
            "- No criteriaMapping and no reviewNote: the developer's report maps the criteria and describes the "
            "change; yours reports only the tests you added.",
            "- Add tests only, and no suppression or test-runner setting that leaves tests out. Tests you add "
            "must be able to fail: no `assert True`, no lone `is not None`.",
        ]
    elif role in REPORT_ROLES:
        lines += [
            "- testEvidence, lintEvidence, typecheckEvidence: the command and its key output lines "
            "(copy them, do not paraphrase); testsClaimedPassing: true only if you saw them pass.",
            "- criteriaMapping (gate 1): every acceptance criterion mapped to where the code meets it, "
            "as 'path:line' (e.g. 'src/app.py:42').",
            "- reviewNote (gate 6): {summary: what changed, risks: [...], rollback: how to undo it}.",
            "- Checks you must not weaken: each suppression you add (`# noqa`, `# type: ignore`, `eslint-disable`, "
            "`@ts-ignore`, `//nolint`, an ignore or exclude entry in lint or type-check configuration) and each "
            "test-runner setting or conftest.py hook that leaves tests out fails the gates unless reviewNote.risks "
            "justifies it, one entry each: 'path:line CODE: why' (e.g. 'src/app.py:3 F401: re-exported as public "
            "API'). Tests you add or change must be able to fail: no `assert True`, no lone `is not None`.",
        ]
    lines += [
        "- blockers and risks: anything ambiguous, skipped or fragile. Say it; do not hide it.",
        "- selfAssessment: 'confident', 'uncertain' (you doubt part of it) or 'blocked'.",
    ]
    return lines


def signal_instructions(
    role: str | Role, task_id: str, *, criteria: Sequence[str] = (), tool: str = TOOL_NAME
) -> str:
    """The prompt section for an agent of `role` working on task `task_id`.

    Lists only the signals `role` may send, with the fields each one needs and a valid example.
    """
    canonical = resolve_role(role)
    allowed = [kind for kind in SIGNAL_KINDS if kind in ALLOWED_SIGNALS[canonical]]
    if not allowed:
        raise ValueError(f"role {canonical.value!r} is performed by pm-agent itself and sends no signals")
    lines = [
        "## Reporting back: the signal_back tool",
        "",
        f"When you stop, call the tool `{tool}` exactly once, then end your turn without further tool calls.",
        "pm-agent reads only this signal, not your final message; ending without a signal counts as a crash.",
        f'Always pass stepId "{task_id}" (your task). Field names are exact and case-sensitive.',
        "If the tool answers with an error, read the listed problems, correct the payload and call it again.",
        "Do not commit: pm-agent commits accepted work itself.",
        "",
        f"Signals you ({canonical.value}, {ROLES[canonical].summary}) may send:",
    ]
    for kind in allowed:
        required = ", ".join(required_wire_fields(kind))
        lines.append(f"- `{kind}`: when {_WHEN[kind]}. Required: {required}.")
    if "needs-role-followup" in allowed:
        lines.append(f"  targetRole is one of: {_target_roles()}.")
    if "complete" in allowed:
        lines += ["", *_evidence_lines(canonical)]
    lines += ["", "Examples (arguments of the tool call):"]
    for kind in allowed:
        example = _example(kind, task_id, canonical, criteria)
        parse_signal(example)  # the examples we show must themselves be valid
        lines.append(json.dumps(example, ensure_ascii=False))
    return "\n".join(lines) + "\n"
