"""Gate results and the part of an agent's report the gates read.

`AgentReport` is what the gates need from a `complete` signal (seed 001's sub-agent return). It accepts
the signal_back wire payload (camelCase: `criteriaMapping`, `reviewNote`, `testsClaimedPassing`, ...)
as well as snake_case names, ignores every other field, and `from_payload` never raises: a field that
does not validate is dropped and named in `problems`, so only the gate that needs it fails. Lists and
objects sent as JSON text, lone strings and blank entries are read by signal_back's own readers
(`pm_agent.signals.forms`), so the gates and the signal desk read a value the same way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic.alias_generators import to_camel

from pm_agent.signals.forms import read_list, read_object, read_text_list


class GateId(StrEnum):
    """The six minimum gates (seed 001) and pm-agent's integrity checks."""

    PLAN_ALIGNMENT = "1-plan-alignment"
    TESTS_ADDED = "2-tests-added"
    TESTS_RUN = "3-tests-run"
    LINT_TYPECHECK = "4-lint-typecheck"
    NO_ORPHAN_TODOS = "5-no-orphan-todos"
    REVIEW_NOTE = "6-review-note"
    SCOPE = "scope"
    TESTS_WEAKENED = "tests-weakened"
    CHECKS_WEAKENED = "checks-weakened"
    VCS_TAMPERING = "vcs-tampering"
    SECRETS = "secrets"


MINIMUM_GATES: tuple[GateId, ...] = (
    GateId.PLAN_ALIGNMENT,
    GateId.TESTS_ADDED,
    GateId.TESTS_RUN,
    GateId.LINT_TYPECHECK,
    GateId.NO_ORPHAN_TODOS,
    GateId.REVIEW_NOTE,
)
INTEGRITY_CHECKS: tuple[GateId, ...] = (
    GateId.SCOPE,
    GateId.TESTS_WEAKENED,
    GateId.CHECKS_WEAKENED,
    GateId.VCS_TAMPERING,
    GateId.SECRETS,
)


class GateResult(BaseModel):
    """One gate's verdict: `evidence` is human-readable (file:line, output tails), `details` is JSON data."""

    model_config = ConfigDict(extra="forbid")

    gate: str
    passed: bool
    evidence: str
    details: dict[str, Any] = Field(default_factory=dict)


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore", alias_generator=to_camel, validate_by_name=True, validate_by_alias=True)


_LOC = re.compile(r"^(?P<path>.+?)(?::(?P<line>\d+)(?:[-:](?P<end>\d+))?|#L(?P<line2>\d+)(?:-L?(?P<end2>\d+))?)$")


class CriterionMapping(_Lenient):
    """An acceptance criterion and where the code meets it: `location` is "path:line" or "path:start-end"."""

    criterion: str
    location: str

    @model_validator(mode="before")
    @classmethod
    def _file_and_line(cls, data: Any) -> Any:
        if isinstance(data, dict) and "location" not in data and "file" in data:
            line = data.get("line")
            data = {**data, "location": f"{data['file']}:{line}" if line is not None else str(data["file"])}
        return data

    @field_validator("criterion", mode="before")
    @classmethod
    def _criterion_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    def parsed(self) -> tuple[str, int, int] | None:
        """(path, first line, last line) from `location`, None when it is not `path:line`."""
        match = _LOC.match(self.location.strip())
        if match is None:
            return None
        first = int(match["line"] or match["line2"])
        last = int(match["end"] or match["end2"] or first)
        return match["path"].strip(), first, max(first, last)


class ReviewNoteIn(_Lenient):
    """Seed 001's ReviewNote as the agent sent it; `risks` None means the field was missing."""

    summary: str = ""
    risks: list[str] | None = None
    rollback: str = ""

    @field_validator("risks", mode="before")
    @classmethod
    def _risks_list(cls, value: Any) -> Any:
        return read_text_list(value)[0]


class AgentReport(_Lenient):
    """What the gates read from an agent's `complete` signal; its claims are recorded, not trusted."""

    criteria_mapping: list[CriterionMapping] = Field(default_factory=list)
    review_note: ReviewNoteIn | None = None
    tests_claimed_passing: bool | None = None
    files_created: list[str] = Field(default_factory=list)
    files_modified: list[str] = Field(default_factory=list)
    files_deleted: list[str] = Field(default_factory=list)
    test_evidence: list[str] = Field(default_factory=list)
    lint_evidence: list[str] = Field(default_factory=list)
    typecheck_evidence: list[str] = Field(default_factory=list)
    self_assessment: str | None = None
    summary: str = ""
    risks: list[str] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)

    @field_validator(
        "files_created",
        "files_modified",
        "files_deleted",
        "test_evidence",
        "lint_evidence",
        "typecheck_evidence",
        "risks",
        mode="before",
    )
    @classmethod
    def _lists(cls, value: Any) -> Any:
        return read_text_list(value)[0]

    @field_validator("criteria_mapping", mode="before")
    @classmethod
    def _mapping(cls, value: Any) -> Any:
        value = read_list(value)[0]
        if isinstance(value, dict):  # {"criterion": "path:line"}
            return [{"criterion": k, "location": v} for k, v in value.items()]
        return value

    @field_validator("review_note", mode="before")
    @classmethod
    def _note(cls, value: Any) -> Any:
        return read_object(value)[0]

    @classmethod
    def from_payload(cls, payload: Any) -> AgentReport:
        """Parse a signal payload (dict, pydantic model or None); fields that do not validate are dropped."""
        if payload is None:
            return cls()
        if isinstance(payload, AgentReport):
            return payload
        if isinstance(payload, BaseModel):
            payload = payload.model_dump(mode="json", by_alias=True)
        if isinstance(payload, Mapping):
            payload = dict(payload)
        if not isinstance(payload, dict):
            return cls(problems=[f"(payload): expected an object, got {type(payload).__name__}"])
        data = dict(payload)
        problems: list[str] = []
        for _ in range(len(cls.model_fields) + 1):
            try:
                report = cls.model_validate(data)
            except ValidationError as exc:
                bad = {str(err["loc"][0]) for err in exc.errors() if err["loc"]}
                bad |= {name for name, info in cls.model_fields.items() if info.alias in bad}
                bad |= {to_camel(key) for key in bad}
                problems += [f"{'.'.join(map(str, err['loc']))}: {err['msg']}" for err in exc.errors()]
                if not any(key in data for key in bad):
                    return cls(problems=problems)
                data = {k: v for k, v in data.items() if k not in bad}
                continue
            return report.model_copy(update={"problems": [*report.problems, *problems]})
        return cls(problems=problems)


# What the gates accept as the agent's report: a signal payload dict (wire or snake_case names), a parsed
# signal model (e.g. the `complete` signal), an AgentReport, or nothing.
Payload = AgentReport | BaseModel | Mapping[str, Any] | None

__all__ = [
    "INTEGRITY_CHECKS",
    "MINIMUM_GATES",
    "AgentReport",
    "CriterionMapping",
    "GateId",
    "GateResult",
    "Payload",
    "ReviewNoteIn",
]
