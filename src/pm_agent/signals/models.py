"""The four signal_back payloads (seed 004) and the evidence a complete signal carries (seed 001).

Field names on the wire are exactly seed 004's camelCase names (`signal`, `stepId`, `summary`, ...);
Python code reads them as snake_case attributes. Every model forbids unknown fields, so a typo is
an error the agent can read and correct, never a silently dropped field.

`parse_signal(data)` is the one entry point: it returns one of the four models or raises
`SignalPayloadError` whose message lists each problem as `field: problem`, one per line.
"""

from __future__ import annotations

import difflib
import json
import re
from typing import Annotated, Any, Final, Literal, get_args

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
)
from pydantic.alias_generators import to_camel

from pm_agent.errors import SignalError
from pm_agent.lifecycle.roles import AGENT_ROLES, ROLES, resolve_role

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


def _json_list(value: Any) -> Any:
    """Accept a list sent as a JSON string (some clients stringify arrays) or a lone string."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                return json.loads(text)
            except ValueError:
                return value
        return [value] if text else []
    return value


def _json_object(value: Any) -> Any:
    """Accept an object sent as a JSON string."""
    if isinstance(value, str) and value.strip().startswith("{"):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _number_to_text(value: Any) -> Any:
    """A task id sent as a number (3) is the string "3"."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
StepId = Annotated[Text, BeforeValidator(_number_to_text)]
TextList = Annotated[list[Text], BeforeValidator(_json_list)]


class _Wire(BaseModel):
    """camelCase on the wire, snake_case in Python, unknown fields refused."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        alias_generator=to_camel,
        validate_by_alias=True,
        validate_by_name=False,
        serialize_by_alias=True,
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
            raise ValueError(f"must be 'path:line' like 'src/app.py:42' (got {_show(value)})")
        if match["end"] is not None and int(match["end"]) < int(match["line"]):
            raise ValueError(f"line range ends before it starts (got {_show(value)})")
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
    self_assessment: SelfAssessment = Field(
        default="confident", description="confident, uncertain or blocked."
    )
    criteria_mapping: Annotated[list[CriterionMapping], BeforeValidator(_json_list)] = Field(
        default_factory=list, description="Each acceptance criterion mapped to 'path:line'."
    )
    review_note: Annotated[ReviewNote | None, BeforeValidator(_json_object)] = Field(
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
                f"unknown role {_show(value)}; use one of {', '.join(target_role_names())}"
            ) from exc
        if role not in _agent_roles():
            raise ValueError(
                f"{_show(value)} is not a role an agent can play; use one of {', '.join(target_role_names())}"
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


def _agent_roles() -> list[str]:
    return [role.value for role in ROLES if role in AGENT_ROLES]


def target_role_names() -> list[str]:
    """The names accepted for `targetRole`: pm-agent's role names, then seed 004's."""
    return [*_agent_roles(), *SEED_TARGET_ROLES]


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


def _order(name: str) -> int:
    return WIRE_FIELD_ORDER.index(name) if name in WIRE_FIELD_ORDER else len(WIRE_FIELD_ORDER)


def wire_fields(kind: str) -> list[str]:
    """The camelCase field names a signal of this kind accepts, in reading order."""
    model = SIGNAL_MODELS[kind]
    return sorted((info.alias or name for name, info in model.model_fields.items()), key=_order)


def required_wire_fields(kind: str) -> list[str]:
    """The camelCase field names a signal of this kind must carry."""
    model = SIGNAL_MODELS[kind]
    names = (info.alias or name for name, info in model.model_fields.items() if info.is_required())
    return sorted(names, key=_order)


def _show(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _loc(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(payload)"


def _unknown_field(name: str, kind: str) -> str:
    allowed = wire_fields(kind)
    camel = to_camel(name) if "_" in name else name
    close = [camel] if camel in allowed else difflib.get_close_matches(name, allowed, n=1, cutoff=0.6)
    if close:
        return f"unknown field; did you mean {close[0]!r}?"
    owners = [k for k in SIGNAL_KINDS if k != kind and camel in wire_fields(k)]
    if owners:
        return f"not a field of the {kind} signal (it belongs to {owners[0]})"
    return f"unknown field; a {kind} signal takes: {', '.join(allowed)}"


def _problem(error: Any, kind: str) -> str:
    loc = tuple(error["loc"])
    kind_of = error["type"]
    if kind_of == "extra_forbidden":
        if len(loc) == 1:
            return f"{loc[0]}: {_unknown_field(str(loc[0]), kind)}"
        return f"{_loc(loc)}: unknown field"
    if kind_of == "missing":
        return f"{_loc(loc)}: required"
    if kind_of == "string_too_short":
        return f"{_loc(loc)}: must not be empty"
    message = str(error["msg"])
    if kind_of == "value_error":
        return f"{_loc(loc)}: {message.removeprefix('Value error, ')}"
    message = message[:1].lower() + message[1:]
    if kind_of == "literal_error" or not kind_of.endswith("_type"):
        return f"{_loc(loc)}: {message} (got {_show(error['input'])})"
    return f"{_loc(loc)}: {message} (got {type(error['input']).__name__})"


def parse_signal(data: Any) -> AnySignal:
    """Validate a signal_back payload.

    Raises SignalPayloadError (a SignalError) listing every problem as `field: problem`.
    """
    if not isinstance(data, dict):
        raise SignalPayloadError([f"(payload): must be an object, got {type(data).__name__}"])
    kind = data.get("signal")
    if kind is None:
        hint = " (the field is 'signal', not 'type')" if "type" in data else ""
        raise SignalPayloadError([f"signal: required; one of {', '.join(SIGNAL_KINDS)}{hint}"])
    if kind not in SIGNAL_MODELS:
        close = difflib.get_close_matches(str(kind), SIGNAL_KINDS, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise SignalPayloadError(
            [f"signal: must be one of {', '.join(SIGNAL_KINDS)} (got {_show(kind)}){hint}"]
        )
    model = SIGNAL_MODELS[kind]
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = sorted(
            exc.errors(include_url=False), key=lambda err: _order(str(err["loc"][0]) if err["loc"] else "")
        )
        problems = [_problem(err, kind) for err in errors]
        raise SignalPayloadError(problems, kind=kind) from None


def signal_payload(signal: AnySignal) -> dict[str, Any]:
    """The signal as a JSON-ready dict with its wire (camelCase) field names and canonical targetRole."""
    return signal.model_dump(mode="json", by_alias=True)
