"""Configuration: seed 001 section 9 plus the environment contract, read from `pm-agent.yaml`.

Unknown keys and bad values are errors that name the key and its line.
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from pm_agent.environment_config import EnvironmentConfig
from pm_agent.errors import ConfigError
from pm_agent.plan.models import Tier

CONFIG_FILE = "pm-agent.yaml"


class _Config(BaseModel):
    # The docstrings under the fields are read on use, by `field_docs` (only `pm-agent init` writes them):
    # pydantic's use_attribute_docstrings reads them at class creation, through the source lines of the
    # importing frames, about 18 ms of CPU at the start of every command.
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class AgentConfig(_Config):
    """Which agent CLI runs the roles, and its limits."""

    runner: Literal["claude", "command"] = "claude"
    """`claude` for Claude Code; `command` for any CLI given by `command`."""
    binary: str | None = None
    """Path to the agent binary; default: `claude` on PATH, then the one bundled in claude-agent-sdk."""
    command: list[str] = Field(default_factory=list)
    """For runner=command: argv template with {prompt}, {workdir}, {session_id} placeholders."""
    model: str | None = None
    """Model name passed to the agent CLI; None lets the CLI choose."""
    max_turns: int = Field(default=60, ge=1, le=1000)
    """Turn limit per agent session."""
    stuck_after_s: float = Field(default=600, gt=0)
    """No output for this long: the session is killed as stuck."""
    time_budget_min: float = Field(default=60, gt=0)
    """Longest one agent session may run (seed 001 time_budget_ms)."""
    isolated_home: bool = False
    """Give agent sessions their own HOME under .pm-agent/ (offline runs, API keys); False keeps your login."""
    permission_mode: str = "acceptEdits"
    """Claude Code permission mode; acceptEdits works as root."""
    allowed_tools: list[str] = Field(
        default_factory=lambda: ["Read", "Write", "Edit", "Bash", "Glob", "Grep", "TodoWrite"]
    )
    """Tools the agent may use without asking; the signal tool is always added."""

    @model_validator(mode="after")
    def _command_runner_has_a_command(self) -> AgentConfig:
        # Caught here, at load time, so a bad agent setup fails before any run record or branch exists.
        if self.runner == "command" and not self.command:
            raise PydanticCustomError(
                "agent_command_missing",
                "runner 'command' needs agent.command: the agent CLI as a list, e.g. [my-agent, '{prompt}']",
            )
        if self.command and not any("{prompt}" in part for part in self.command):
            raise PydanticCustomError(
                "agent_command_prompt", "agent.command has no {prompt} placeholder: where does the prompt go?"
            )
        return self


FindingSeverity = Literal["critical", "high", "medium", "low", "info"]
FIX_BY_DEFAULT: tuple[FindingSeverity, ...] = ("critical", "high", "medium")


class FinalReviewConfig(_Config):
    """The final review (seed 004's Lawbringer): a reviewer session over the whole working branch before release."""

    enabled: bool = True
    """Review the whole working branch against the baseline, the design doc and the requirements before release."""
    max_rounds: int = Field(default=3, ge=1, le=10)
    """Review rounds at most: findings of earlier rounds open remediation tasks, the last round's go to a human."""
    fix_severities: list[FindingSeverity] = Field(default_factory=lambda: list(FIX_BY_DEFAULT))
    """Findings of these severities get remediation tasks; the others go to the human in the release escalation."""
    requirements_doc: str | None = None
    """The requirements doc the review checks against (path in the repository); none: the design doc only."""
    attempts: int = Field(default=3, ge=1, le=10)
    """Reviewer sessions per round (a review that cannot be read is sent back with the reason) before escalating."""


class GitHubConfig(_Config):
    """The GitHub bridge (seed 003); on when `repo` is set."""

    repo: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+$")
    """owner/name of the repository whose issues carry the run."""
    api_url: str = "https://api.github.com"
    """GitHub's REST API, or https://HOST/api/v3 for GitHub Enterprise, or any compatible server."""
    token_env: str = "GITHUB_TOKEN"
    """The environment variable that holds the token (never stored, never logged)."""
    answerers: list[str] = Field(default_factory=list)
    """Logins whose comments count as answers; empty: users with write access to the repository."""
    remote: str = "origin"
    """The git remote the working branch is pushed to."""
    poll_interval_s: float = Field(default=20, gt=0, le=3600)
    """Seconds between polls for new comments."""


class PmConfig(_Config):
    """pm-agent configuration for one target repository."""

    max_parallel_agents: int = Field(default=3, ge=1, le=16)
    """Slots: concurrent agent sessions (a task in pm-agent's checks holds none)."""
    retry_budget: int = Field(default=2, ge=0, le=10)
    """Fix attempts before escalation."""
    anti_starvation_interval: int = Field(default=3, ge=1)
    """One ready LOW task goes first after this many CRITICAL/NORMAL completions."""
    progress_report_task_interval: int = Field(default=3, ge=1)
    """A progress report every N completed tasks."""
    progress_report_time_interval_min: float = Field(default=30, gt=0)
    """... or every N minutes, whichever comes first."""
    patch_size_limit_files: int = Field(default=15, ge=1)
    """A task expected to touch more files is sliced into subtasks first."""
    reuse_worktrees: bool = True
    """A finished task's worktree, cleaned, is taken over by a later task (git rewrites only what differs); false:
    every task gets a new worktree."""
    checkpoint_tags: bool = True
    """Tag pm/<plan-id>/checkpoint-<task-id> after each passed CRITICAL task."""
    review_artifacts_dir: str = "docs/reviews"
    """Where review artifacts are committed."""
    release_manifest_dir: str = "docs/releases"
    """Where the release manifest is written."""
    parallel_tiers: list[Tier] = Field(default_factory=lambda: [Tier.LOW])
    """Tiers whose independent tasks may run in parallel."""
    tester_tiers: list[Tier] = Field(default_factory=lambda: [Tier.NORMAL, Tier.CRITICAL])
    """Tiers whose tasks get one edge-case tester session once their gates first pass; the gates then run again."""
    working_branch: str | None = None
    """The plan working branch; default pm/<plan-id>/work."""
    max_iterations: int = Field(default=16, ge=3, le=100)
    """Lifecycle transitions per task before it ends in REQUIRES_HUMAN_INTERVENTION (seed 003's limit).

    Seed 003 uses 10; pm-agent's path with gates and review takes 7 (9 with the tester's round and the gates
    after it) and a clarification round 5 more."""
    max_release_rounds: int = Field(default=3, ge=1, le=20)
    """Times a failing final release gate may open remediation tasks and re-enter the loop."""
    max_continuations: int = Field(default=3, ge=0, le=20)
    """Fresh sessions after partially-complete signals in one state before escalating."""
    environment: EnvironmentConfig = Field(default_factory=EnvironmentConfig)
    """The environment contract: lint, typecheck, format check, test, build commands."""
    agent: AgentConfig = Field(default_factory=AgentConfig)
    """The agent CLI and its limits."""
    final_review: FinalReviewConfig = Field(default_factory=FinalReviewConfig)
    """The final review of the whole working branch before the release manifest."""
    github: GitHubConfig = Field(default_factory=GitHubConfig)
    """The GitHub bridge: tasks as issues, escalations as comments, a pull request at release."""


def _key_lines(text: str) -> dict[tuple[str, ...], int]:
    """Map each mapping key path in a YAML document to its 1-based line."""
    lines: dict[tuple[str, ...], int] = {}

    def walk(node: yaml.Node, prefix: tuple[str, ...]) -> None:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                path = (*prefix, str(key.value))
                lines[path] = key.start_mark.line + 1
                walk(value, path)
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                path = (*prefix, str(index))
                lines[path] = item.start_mark.line + 1
                walk(item, path)

    root = yaml.compose(text)
    if root is not None:
        walk(root, ())
    return lines


def parse_config(text: str, path: Path) -> PmConfig:
    """Parse configuration text; errors name the file, the line and the key."""
    try:
        data: Any = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise ConfigError(f"not valid YAML: {getattr(exc, 'problem', exc)}", path=path, line=line) from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError("the configuration must be a mapping of keys to values", path=path, line=1)
    try:
        return PmConfig.model_validate(data)
    except ValidationError as exc:
        lines = _key_lines(text)
        first = exc.errors()[0]
        loc = tuple(str(part) for part in first["loc"])
        line = next((lines[loc[:n]] for n in range(len(loc), 0, -1) if loc[:n] in lines), None)
        key = ".".join(loc) or "(root)"
        problem = "unknown key" if first["type"] == "extra_forbidden" else first["msg"]
        raise ConfigError(f"{key}: {problem}", path=path, line=line) from exc


def load_config(repo: Path) -> PmConfig:
    """Read `pm-agent.yaml` from the repository, or the defaults when there is none."""
    path = repo / CONFIG_FILE
    if not path.exists():
        return detect_defaults(repo)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read: {exc}", path=path) from exc
    return parse_config(text, path)


def detect_defaults(repo: Path) -> PmConfig:
    """Defaults with the environment commands `pm-agent init` would write (`preflight.detect`)."""
    # imported on use: a run with a config file never detects, and detection pulls in the gates' runner
    from pm_agent.preflight.detect import detect_environment

    return PmConfig(environment=detect_environment(repo).environment)


def render_config(config: PmConfig) -> str:
    """The configuration as commented YAML, for `pm-agent init`."""
    lines = ["# pm-agent configuration (seed 001 section 9 + environment contract).", ""]
    _render_model(config, lines, indent="")
    return "\n".join(lines) + "\n"


@functools.cache
def field_docs(cls: type[BaseModel]) -> dict[str, str]:
    """The docstring written under each field the class itself declares, cleaned (inspect.cleandoc): what
    pydantic's `use_attribute_docstrings` would make the fields' descriptions."""
    body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0]
    if not isinstance(body, ast.ClassDef):
        return {}
    docs: dict[str, str] = {}
    for field, doc in zip(body.body, body.body[1:], strict=False):
        if (
            isinstance(field, ast.AnnAssign)
            and isinstance(field.target, ast.Name)
            and isinstance(doc, ast.Expr)
            and isinstance(doc.value, ast.Constant)
            and isinstance(doc.value.value, str)
        ):
            docs[field.target.id] = inspect.cleandoc(doc.value.value)
    return docs


def _render_model(model: BaseModel, lines: list[str], indent: str) -> None:
    fields = type(model).model_fields
    docs = field_docs(type(model))
    for name, info in fields.items():
        value = getattr(model, name)
        description = info.description if info.description is not None else docs.get(name)
        for text in (description or "").splitlines():
            lines.append(f"{indent}# {text.strip()}".rstrip())
        if isinstance(value, BaseModel):
            lines.append(f"{indent}{name}:")
            _render_model(value, lines, indent + "  ")
            continue
        dumped = yaml.safe_dump({name: _plain(value)}, default_flow_style=True, width=200).strip()
        lines.append(f"{indent}{dumped.removeprefix('{').removesuffix('}')}")


def _plain(value: Any) -> Any:
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, Tier):
        return value.value
    return value
