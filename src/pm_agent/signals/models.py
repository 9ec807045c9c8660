"""The four signal_back payloads (seed 004) and the evidence a complete signal carries (seed 001).

Field names on the wire are exactly seed 004's camelCase names (`signal`, `stepId`, `summary`, ...);
Python code reads them as snake_case attributes. Every model forbids unknown fields, so a typo is
an error the agent can read and correct, never a silently dropped field.

The payloads are read through `pm_agent.signals.reading.read_signal`, which is lenient about form
and says what it read differently, or raises `SignalPayloadError` listing each problem as
`field: problem`, one per line.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Annotated, Any, Final, Literal, get_args

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
)
from pydantic.alias_generators import to_camel

from pm_agent.errors import SignalError
from pm_agent.lifecycle.roles import AGENT_ROLES, ROLES, resolve_role
from pm_agent.signals.forms import Lenient, enum_reader, read_id, read_list, read_object, read_text_list

SignalKind = Literal["complete", "partially-complete", "needs-user-input", "needs-role-followup"]
SIGNAL_KINDS: Final[tuple[str, ...]] = get_args(SignalKind)
SelfAssessment = Literal["confident", "uncertain", "blocked"]

# Seed 004's names for the roles a followup may target, plus the analyst's alias.
SEED_TARGET_ROLES: Final[tuple[str, ...]] = (
    "pathseeker",
    "codeweaver",
    "siegemaster",
    "lawbringer",
    "spiritmender",
    "chaoswhisperer",
)

_LOCATION = re.compile(r"^(?P<path>[^:\s](?:[^:]*[^:\s])?):(?P<line>[1-9][0-9]*)(?:-(?P<end>[1-9][0-9]*))?$")


Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
StepId = Annotated[Text, BeforeValidator(Lenient(read_id))]
TextList = Annotated[list[Text], BeforeValidator(Lenient(read_text_list))]


class _Wire(BaseModel):
    """camelCase on the wire, snake_case in Python, unknown fields refused."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        alias_generator=to_camel,
        validate_by_alias=True,
        validate_by_name=False,
        serialize_by_alias=True,
        defer_build=True,  # built on first use: a signal server validates one kind and builds only its models
    )


class CriterionMapping(_Wire):
    """Gate 1 evidence: one acceptance criterion and where the code meets it (`path:line`)."""

    criterion: Text = Field(description="The acceptance criterion, as written in the task contract.")
    location: str = Field(description="Where the code implements it: 'path:line' or 'path:start-end'.")

    @field_validator("location")
    @classmethod
    def _path_line(cls, value: str) -> str:
        value = value.strip()
        match = _LOCATION.match(value)
        if match is None:
            raise ValueError(f"must be 'path:line' like 'src/app.py:42' (got {show(value)})")
        if match["end"] is not None and int(match["end"]) < int(match["line"]):
            raise ValueError(f"line range ends before it starts (got {show(value)})")
        return value

    @property
    def path(self) -> str:
        """The file part of `location`."""
        match = _LOCATION.match(self.location)
        assert match is not None  # validated on construction
        return match["path"]

    @property
    def line(self) -> int:
        """The (first) line number of `location`."""
        match = _LOCATION.match(self.location)
        assert match is not None
        return int(match["line"])


class ReviewNote(_Wire):
    """Gate 6 evidence: what changed, the risks, and how to roll it back."""

    summary: Text = Field(description="What changed, in a few sentences.")
    risks: TextList = Field(default_factory=list, description="Risks a reviewer should know about.")
    rollback: Text = Field(description="How to undo the change (e.g. 'revert the commit; no migration').")


class _Evidence(_Wire):
    """Seed 001's sub-agent return: files touched, key output lines, blockers and risks."""

    files_created: TextList = Field(default_factory=list, description="Paths of files you created.")
    files_modified: TextList = Field(default_factory=list, description="Paths of files you modified.")
    files_deleted: TextList = Field(default_factory=list, description="Paths of files you deleted.")
    test_evidence: TextList = Field(
        default_factory=list, description="Key output lines of the test run (command and pass/fail summary)."
    )
    lint_evidence: TextList = Field(default_factory=list, description="Key output lines of the lint command.")
    typecheck_evidence: TextList = Field(
        default_factory=list, description="Key output lines of the typecheck command."
    )
    blockers: TextList = Field(default_factory=list, description="Blockers or ambiguities you hit.")
    risks: TextList = Field(default_factory=list, description="Risks you see in what you changed.")

    @property
    def files_changed(self) -> list[str]:
        """Every path the agent says it touched, in the order given."""
        return [*self.files_created, *self.files_modified, *self.files_deleted]


class CompleteSignal(_Evidence):
    """`complete`: the step is finished; the PM runs its gates next."""

    signal: Literal["complete"]
    step_id: StepId = Field(description="The task id you were given.")
    summary: Text = Field(description="What was accomplished.")
    self_assessment: Annotated[SelfAssessment, BeforeValidator(Lenient(enum_reader(get_args(SelfAssessment))))] = Field(
        default="confident", description="confident, uncertain or blocked."
    )
    criteria_mapping: Annotated[list[CriterionMapping], BeforeValidator(Lenient(read_list))] = Field(
        default_factory=list, description="Each acceptance criterion mapped to 'path:line'."
    )
    review_note: Annotated[ReviewNote | None, BeforeValidator(Lenient(read_object))] = Field(
        default=None, description="{summary, risks, rollback}."
    )
    tests_claimed_passing: bool | None = Field(default=None, description="Whether you saw the tests pass.")


class PartiallyCompleteSignal(_Evidence):
    """`partially-complete`: out of context; a fresh session of the same role continues."""

    signal: Literal["partially-complete"]
    step_id: StepId = Field(description="The task id you were given.")
    progress: Text = Field(description="What was done so far.")
    continuation_point: Text = Field(description="Where the next session should pick up.")


class NeedsUserInputSignal(_Wire):
    """`needs-user-input`: blocked in a way only a human can resolve; resumed with the answer."""

    signal: Literal["needs-user-input"]
    step_id: StepId = Field(description="The task id you were given.")
    question: Text = Field(description="The question for the human, answerable on its own.")
    context: Text = Field(description="What you found and the options you see.")


class NeedsRoleFollowupSignal(_Wire):
    """`needs-role-followup`: another role must act first; `resume` says whether to come back here."""

    signal: Literal["needs-role-followup"]
    step_id: StepId = Field(description="The task id you were given.")
    target_role: str = Field(description="The role that must act (canonical pm-agent role name once parsed).")
    reason: Text = Field(description="Why that role is needed.")
    context: Text = Field(description="What the target role needs to know.")
    resume: bool = Field(description="true: resume this session after the target role completes.")

    @field_validator("target_role", mode="before")
    @classmethod
    def _canonical_role(cls, value: Any) -> str:
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"must be one of {', '.join(target_role_names())}")
        try:
            role = resolve_role(value).value
        except ValueError as exc:
            raise ValueError(
                f"unknown role {show(value)}; use one of {', '.join(target_role_names())}"
            ) from exc
        if role not in _agent_roles():
            raise ValueError(
                f"{show(value)} is not a role an agent can play; use one of {', '.join(target_role_names())}"
            )
        return role


Signal = Annotated[
    CompleteSignal | PartiallyCompleteSignal | NeedsUserInputSignal | NeedsRoleFollowupSignal,
    Field(discriminator="signal"),
]
AnySignal = CompleteSignal | PartiallyCompleteSignal | NeedsUserInputSignal | NeedsRoleFollowupSignal

SIGNAL_MODELS: Final[dict[str, type[AnySignal]]] = {
    "complete": CompleteSignal,
    "partially-complete": PartiallyCompleteSignal,
    "needs-user-input": NeedsUserInputSignal,
    "needs-role-followup": NeedsRoleFollowupSignal,
}


class SignalPayloadError(SignalError):
    """A signal_back payload that does not validate; `problems` holds one `field: problem` per entry."""

    def __init__(self, problems: list[str], *, kind: str | None = None) -> None:
        self.problems = list(problems)
        self.kind = kind
        what = f"{kind} signal" if kind else "signal"
        count = "1 problem" if len(problems) == 1 else f"{len(problems)} problems"
        lines = "\n".join(f"- {p}" for p in problems)
        super().__init__(f"Invalid {what} ({count}):\n{lines}")


@cache
def _agent_roles() -> tuple[str, ...]:
    return tuple(role.value for role in ROLES if role in AGENT_ROLES)


@cache
def _target_role_names() -> tuple[str, ...]:
    return (*_agent_roles(), *SEED_TARGET_ROLES)


def target_role_names() -> list[str]:
    """The names accepted for `targetRole`: pm-agent's role names, then seed 004's."""
    return list(_target_role_names())


# Every wire field in the order people read them: what the signal is, then its own fields, then evidence.
WIRE_FIELD_ORDER: Final[tuple[str, ...]] = (
    "signal",
    "stepId",
    "summary",
    "progress",
    "continuationPoint",
    "question",
    "targetRole",
    "reason",
    "context",
    "resume",
    "selfAssessment",
    "testsClaimedPassing",
    "filesCreated",
    "filesModified",
    "filesDeleted",
    "testEvidence",
    "lintEvidence",
    "typecheckEvidence",
    "criteriaMapping",
    "reviewNote",
    "blockers",
    "risks",
)


def field_order(name: str) -> int:
    """Where a wire field comes in WIRE_FIELD_ORDER (unknown ones last)."""
    return WIRE_FIELD_ORDER.index(name) if name in WIRE_FIELD_ORDER else len(WIRE_FIELD_ORDER)


def wire_fields(kind: str) -> list[str]:
    """The camelCase field names a signal of this kind accepts, in reading order."""
    model = SIGNAL_MODELS[kind]
    return sorted((info.alias or name for name, info in model.model_fields.items()), key=field_order)


def required_wire_fields(kind: str) -> list[str]:
    """The camelCase field names a signal of this kind must carry."""
    model = SIGNAL_MODELS[kind]
    names = (info.alias or name for name, info in model.model_fields.items() if info.is_required())
    return sorted(names, key=field_order)


def show(value: Any, limit: int = 40) -> str:
    """A value as messages quote it: its repr, cut to `limit` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def signal_payload(signal: AnySignal) -> dict[str, Any]:
    """The signal as a JSON-ready dict with its wire (camelCase) field names and canonical targetRole."""
    return signal.model_dump(mode="json", by_alias=True)
