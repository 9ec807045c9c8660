"""Each signal kind's fields as the signal_back tool schema shows them, written out by
`server.tool_fields_source()` from the pydantic models (a test compares): generating them cost every
signal server the build of every signal model before its first answer."""
# ruff: noqa: E501

from __future__ import annotations

from typing import Any

PYDANTIC = "2.14.4"
FIELDS: dict[str, list[tuple[str, dict[str, Any], bool]]] = {
    "complete": [
        (
            "filesCreated",
            {
                "description": "Paths of files you created.",
                "items": {"minLength": 1, "type": "string"},
                "type": "array",
            },
            False,
        ),
        (
            "filesModified",
            {
                "description": "Paths of files you modified.",
                "items": {"minLength": 1, "type": "string"},
                "type": "array",
            },
            False,
        ),
        (
            "filesDeleted",
            {
                "description": "Paths of files you deleted.",
                "items": {"minLength": 1, "type": "string"},
                "type": "array",
            },
            False,
        ),
        (
            "testEvidence",
            {
                "description": "Key output lines of the test run (command and pass/fail summary).",
                "items": {"minLength": 1, "type": "string"},
                "type": "array",
            },
            False,
        ),
        (
            "lintEvidence",
            {
                "description": "Key output lines of the lint command.",
                "items": {"minLength": 1, "type": "string"},
                "type": "array",
            },
            False,
        ),
        (
            "typecheckEvidence",
            {
                "description": "Key output lines of the typecheck command.",
                "items": {"minLength": 1, "type": "string"},
                "type": "array",
            },
            False,
        ),
        (
            "blockers",
            {
                "description": "Blockers or ambiguities you hit.",
                "items": {"minLength": 1, "type": "string"},
                "type": "array",
            },
            False,
        ),
        (
            "risks",
            {
                "description": "Risks you see in what you changed.",
                "items": {"minLength": 1, "type": "string"},
                "type": "array",
            },
            False,
        ),
        ("signal", {"const": "complete", "type": "string"}, True),
        ("stepId", {"description": "The task id you were given.", "minLength": 1, "type": "string"}, True),
        ("summary", {"description": "What was accomplished.", "minLength": 1, "type": "string"}, True),
        (
            "selfAssessment",
            {
                "default": "confident",
                "description": "confident, uncertain or blocked.",
                "enum": ["confident", "uncertain", "blocked"],
                "type": "string",
            },
            False,
        ),
        (
            "criteriaMapping",
            {
                "description": "Each acceptance criterion mapped to 'path:line'.",
                "items": {
                    "additionalProperties": False,
                    "description": "Gate 1 evidence: one acceptance criterion and where the code meets it (`path:line`).",
                    "properties": {
                        "criterion": {
                            "description": "The acceptance criterion, as written in the task contract.",
                            "minLength": 1,
                            "type": "string",
                        },
                        "location": {
                            "description": "Where the code implements it: 'path:line' or 'path:start-end'.",
                            "type": "string",
                        },
                    },
                    "required": ["criterion", "location"],
                    "type": "object",
                },
                "type": "array",
            },
            False,
        ),
        (
            "reviewNote",
            {
                "additionalProperties": False,
                "description": "{summary, risks, rollback}.",
                "properties": {
                    "summary": {"description": "What changed, in a few sentences.", "minLength": 1, "type": "string"},
                    "risks": {
                        "description": "Risks a reviewer should know about.",
                        "items": {"minLength": 1, "type": "string"},
                        "type": "array",
                    },
                    "rollback": {
                        "description": "How to undo the change (e.g. 'revert the commit; no migration').",
                        "minLength": 1,
                        "type": "string",
                    },
                },
                "required": ["summary", "rollback"],
                "type": "object",
                "default": None,
            },
            False,
        ),
        (
            "testsClaimedPassing",
            {"type": "boolean", "default": None, "description": "Whether you saw the tests pass."},
            False,
        ),
    ],
    "partially-complete": [
        (
            "filesCreated",
            {
                "description": "Paths of files you created.",
                "items": {"minLength": 1, "type": "string"},
                "type": "array",
            },
            False,
        ),
        (
            "filesModified",
            {
                "description": "Paths of files you modified.",
                "items": {"minLength": 1, "type": "string"},
                "type": "array",
            },
            False,
        ),
        (
            "filesDeleted",
            {
                "description": "Paths of files you deleted.",
                "items": {"minLength": 1, "type": "string"},
                "type": "array",
            },
            False,
        ),
        (
            "testEvidence",
            {
                "description": "Key output lines of the test run (command and pass/fail summary).",
                "items": {"minLength": 1, "type": "string"},
                "type": "array",
            },
            False,
        ),
        (
            "lintEvidence",
            {
                "description": "Key output lines of the lint command.",
                "items": {"minLength": 1, "type": "string"},
                "type": "array",
            },
            False,
        ),
        (
            "typecheckEvidence",
            {
                "description": "Key output lines of the typecheck command.",
                "items": {"minLength": 1, "type": "string"},
                "type": "array",
            },
            False,
        ),
        (
            "blockers",
            {
                "description": "Blockers or ambiguities you hit.",
                "items": {"minLength": 1, "type": "string"},
                "type": "array",
            },
            False,
        ),
        (
            "risks",
            {
                "description": "Risks you see in what you changed.",
                "items": {"minLength": 1, "type": "string"},
                "type": "array",
            },
            False,
        ),
        ("signal", {"const": "partially-complete", "type": "string"}, True),
        ("stepId", {"description": "The task id you were given.", "minLength": 1, "type": "string"}, True),
        ("progress", {"description": "What was done so far.", "minLength": 1, "type": "string"}, True),
        (
            "continuationPoint",
            {"description": "Where the next session should pick up.", "minLength": 1, "type": "string"},
            True,
        ),
    ],
    "needs-user-input": [
        ("signal", {"const": "needs-user-input", "type": "string"}, True),
        ("stepId", {"description": "The task id you were given.", "minLength": 1, "type": "string"}, True),
        (
            "question",
            {"description": "The question for the human, answerable on its own.", "minLength": 1, "type": "string"},
            True,
        ),
        ("context", {"description": "What you found and the options you see.", "minLength": 1, "type": "string"}, True),
    ],
    "needs-role-followup": [
        ("signal", {"const": "needs-role-followup", "type": "string"}, True),
        ("stepId", {"description": "The task id you were given.", "minLength": 1, "type": "string"}, True),
        (
            "targetRole",
            {"description": "The role that must act (canonical pm-agent role name once parsed).", "type": "string"},
            True,
        ),
        ("reason", {"description": "Why that role is needed.", "minLength": 1, "type": "string"}, True),
        ("context", {"description": "What the target role needs to know.", "minLength": 1, "type": "string"}, True),
        (
            "resume",
            {"description": "true: resume this session after the target role completes.", "type": "boolean"},
            True,
        ),
    ],
}
