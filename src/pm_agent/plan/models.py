"""The task model: seed 001's per-task fields and task contract, as parsed from a plan."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from pm_agent.plan.enums import TaskStatus as TaskStatus  # re-exported: callers import both from here
from pm_agent.plan.enums import Tier as Tier


class Presence(StrEnum):
    """Triage of a task against the repository."""

    EXISTS = "EXISTS"
    PARTIAL = "PARTIAL"
    MISSING = "MISSING"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ExpectedFiles(_Model):
    """Files a task is expected to touch; `test` lists test files it creates or changes."""

    create: list[str] = Field(default_factory=list)
    modify: list[str] = Field(default_factory=list)
    delete: list[str] = Field(default_factory=list)
    test: list[str] = Field(default_factory=list)
    # "src/a.py" -> "123-145" for `Modify: src/a.py:123-145`
    modify_ranges: dict[str, str] = Field(default_factory=dict)

    def all_paths(self) -> list[str]:
        """Every expected path, in create, modify, delete, test order, without repeats."""
        seen: dict[str, None] = {}
        for path in [*self.create, *self.modify, *self.delete, *self.test]:
            seen.setdefault(path, None)
        return list(seen)


class SecurityFlags(_Model):
    """Any flag set forces the task to CRITICAL (seed 001)."""

    touches_auth: bool = False
    touches_schema: bool = False
    touches_billing: bool = False
    touches_secrets: bool = False

    def any(self) -> bool:
        """True when at least one flag is set."""
        return self.touches_auth or self.touches_schema or self.touches_billing or self.touches_secrets


class IOContract(_Model):
    """What a task consumes and produces."""

    dependencies: list[str] = Field(default_factory=list)
    artifacts: list[str] = Field(default_factory=list)
    expected_interfaces: list[str] = Field(default_factory=list)
    breaking_change: bool = False


class EnvironmentContract(_Model):
    """Commands pm-agent runs itself as gates; None means not configured."""

    lint_command: str | None = None
    typecheck_command: str | None = None
    format_command: str | None = None
    test_command: str | None = None
    build_command: str | None = None


class Dependency(_Model):
    """An edge in the task graph; `inferred` edges come from the plan's order and files, with the reason."""

    task_id: str
    inferred: bool = False
    reason: str = ""
    # Prose written next to an explicit reference (`Task 2 (for the schema)` -> "for the schema").
    note: str = ""


class Task(_Model):
    """One unit of work from the plan, with everything the task contract needs."""

    id: str
    title: str
    line: int = 0  # where the task starts in its file (1-based)
    # The file the task comes from when the plan is a folder; "" for a single-file plan.
    source: str = ""
    description: str = ""
    steps: list[str] = Field(default_factory=list)
    tier: Tier = Tier.NORMAL
    tier_reason: str = ""
    explicit_tier: Tier | None = None
    ownership: str = ""
    # `**Estimate:**` in relative units (hours, points or small/medium/large); None: sized by expected files.
    estimate: float | None = Field(default=None, gt=0)
    acceptance_criteria: list[str] = Field(default_factory=list)
    expected_files: ExpectedFiles = Field(default_factory=ExpectedFiles)
    non_goals: list[str] = Field(default_factory=list)
    tests_to_add: list[str] = Field(default_factory=list)
    tests_to_run: list[str] = Field(default_factory=list)
    depends_on: list[Dependency] = Field(default_factory=list)
    # `**Depends on:** none` written in the plan: no ordering edges are inferred for this task.
    declared_independent: bool = False
    io_contract: IOContract = Field(default_factory=IOContract)
    environment: EnvironmentContract = Field(default_factory=EnvironmentContract)
    security_flags: SecurityFlags = Field(default_factory=SecurityFlags)
    presence: Presence = Presence.MISSING
    presence_reason: str = ""
    decision_log: list[str] = Field(default_factory=list)
    # The task's section of the plan, verbatim (steps, code blocks): what the implementer reads.
    body: str = ""

    @property
    def ref(self) -> str:
        """The commit trailer key: `task-<id>`."""
        return f"task-{self.id}"

    def dependency_ids(self) -> list[str]:
        """Ids of every task this one depends on."""
        return [d.task_id for d in self.depends_on]


class PlanHeader(_Model):
    """The plan's header fields, which feed the shared context block."""

    title: str = ""
    goal: str = ""
    architecture: str = ""
    tech_stack: str = ""


class SharedContext(_Model):
    """Seed 001's compact shared context block, built once per run."""

    project_name: str = ""
    tech_stack: str = ""
    conventions: list[str] = Field(default_factory=list)
    key_paths: list[str] = Field(default_factory=list)
    module_boundaries: list[str] = Field(default_factory=list)
    principles: list[str] = Field(default_factory=list)

    def render(self) -> str:
        """The block as compact text for prompts."""
        lines = [f"Project: {self.project_name}", f"Stack: {self.tech_stack}"]
        for label, items in (
            ("Conventions", self.conventions),
            ("Key paths", self.key_paths),
            ("Modules", self.module_boundaries),
            ("Principles", self.principles),
        ):
            if items:
                lines.append(f"{label}:")
                lines.extend(f"  - {item}" for item in items)
        return "\n".join(lines)


class Plan(_Model):
    """A parsed plan: its tasks in plan order, and the execution queue."""

    plan_id: str
    path: str
    design_path: str | None = None
    header: PlanHeader = Field(default_factory=PlanHeader)
    tasks: list[Task]
    queue: list[str] = Field(default_factory=list)  # task ids in execution order
    shared_context: SharedContext = Field(default_factory=SharedContext)
    # What the parser read leniently or skipped, each as `file:line: message`.
    warnings: list[str] = Field(default_factory=list)

    def task(self, task_id: str) -> Task:
        """The task with this id; KeyError if there is none."""
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise KeyError(task_id)
