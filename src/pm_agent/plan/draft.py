"""A task being read (`Draft`), turned into a Task once its section ends; what one plan file yields; its checks."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pm_agent.errors import PlanError
from pm_agent.plan import fields
from pm_agent.plan.contract import Contract
from pm_agent.plan.models import Dependency, ExpectedFiles, PlanHeader, Task, Tier
from pm_agent.plan.refs import Ref

TASK_LISTS = ("acceptance_criteria", "non_goals", "tests_to_add", "tests_to_run")


@dataclass
class Draft:
    """A task being read: its fields so far and where the reader is inside its section."""

    task_id: str
    title: str
    line: int  # 1-based heading (or yaml fence) line
    level: int  # heading level; a heading at this level or above ends the section
    explicit_tier: Tier | None = None
    ownership: str = ""
    estimate: float | None = None
    refs: list[Ref] = field(default_factory=list)
    said_none: bool = False  # `**Depends on:** none` (or `depends_on: []`) was written
    adopt: bool = False  # a task file's front-matter task: the file's first task heading fills it in
    keep_id: bool = False  # the id came from front matter; a heading does not replace it
    keep_title: bool = False
    body_from: int | None = None  # line index the body starts at, when not the heading line
    lists: dict[str, list[str]] = field(default_factory=lambda: {k: [] for k in TASK_LISTS})
    steps: list[str] = field(default_factory=list)
    files: ExpectedFiles = field(default_factory=ExpectedFiles)
    description: list[str] = field(default_factory=list)
    contracts: list[Contract] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    pending: str | None = None  # a list label waiting for its list (`**Files:**` then `- Create: ...`)
    pending_label: str = ""  # that label as written, for warnings (`Prerequisites`)
    nested: str | None = None  # a list field a bullet just read (`- **Files:**`): its nested list is the field's
    blocks: list[tuple[Ref, int]] = field(default_factory=list)  # `**Blocks:** Task 5`, each with its line
    entry_line: int = 0  # the line of the last `**File:** \`a.ts\`` label that held its entry itself
    in_steps: bool = False  # after the first step, prose and code belong to steps, not the description
    open_fence: bool = False  # a block of the task may have ended early: nested fences, or Markdown (nested_fences.py)
    done: bool = False  # its heading's box is checked (`### [x] Task 3: ...`): done by the plan's account (unrun.py)

    def add(self, name: str, value: str) -> None:
        bucket = self.steps if name == "steps" else self.lists[name]
        if value and value not in bucket:
            bucket.append(value)

    def add_refs(self, refs: list[Ref]) -> None:
        known = {ref.task_id: i for i, ref in enumerate(self.refs)}
        for ref in refs:
            at = known.get(ref.task_id)
            if at is None:
                known[ref.task_id] = len(self.refs)
                self.refs.append(ref)
            elif ref.note and not self.refs[at].note:  # named bare before (front matter), explained here
                self.refs[at] = ref

    def apply(self, contract: Contract) -> None:
        """What a yaml contract block sets, over what the section said so far."""
        if contract.task_id is not None and contract.task_id != self.task_id:
            if self.level:
                self.log.append(
                    f"task id {contract.task_id!r} from the yaml contract (line {contract.line}) "
                    f"replaces {self.task_id!r} from the heading"
                )
            self.task_id = contract.task_id
        self.title = contract.title or self.title
        if contract.description:
            self.description.append(contract.description)
        self.explicit_tier = contract.tier or self.explicit_tier
        self.ownership = contract.ownership if contract.ownership is not None else self.ownership
        if contract.depends_on is not None:
            self.add_refs([Ref(ref) for ref in contract.depends_on])
            self.said_none = self.said_none or not contract.depends_on
        for name, values in contract.lists.items():
            for value in values:
                self.add(name, value)
        if contract.expected_files is not None:
            for kind in ("create", "modify", "delete", "test"):
                for path in getattr(contract.expected_files, kind):
                    fields.add_path(self.files, kind, path)
            self.files.modify_ranges.update(contract.expected_files.modify_ranges)
        self.contracts.append(contract)
        if contract.ignored:
            keys = ", ".join(contract.ignored)
            self.log.append(f"contract keys set by pm-agent itself, ignored in the plan: {keys}")

    def to_task(self, body: str, source: str) -> Task:
        """The finished task; `body` is its section of the plan, verbatim."""
        return Task(
            id=self.task_id,
            title=self.title,
            line=self.line,
            source=source,
            description="\n\n".join(d for d in self.description if d.strip()).strip(),
            steps=self.steps,
            tier=self.explicit_tier or Tier.NORMAL,
            explicit_tier=self.explicit_tier,
            ownership=self.ownership,
            estimate=self.estimate,
            acceptance_criteria=self.lists["acceptance_criteria"],
            expected_files=self.files,
            non_goals=self.lists["non_goals"],
            tests_to_add=self.lists["tests_to_add"],
            tests_to_run=self.lists["tests_to_run"],
            depends_on=[Dependency(task_id=ref.task_id, note=ref.note) for ref in self.refs],
            declared_independent=self.said_none and not self.refs,
            decision_log=self.log,
            body=body,
            **self.from_contracts(),
        )

    def from_contracts(self) -> dict[str, Any]:
        """io_contract, environment and security_flags as the last contract block setting each gives them;
        the ones no block sets are left out (the Task default applies)."""
        found: dict[str, Any] = {}
        for attr in ("io_contract", "environment", "security_flags"):
            for contract in reversed(self.contracts):
                value = getattr(contract, attr)
                if value is not None:
                    found[attr] = value
                    break
        return found


@dataclass(frozen=True)
class FileTask:
    """A file that is one task (front matter with task keys): what the front matter says about it."""

    task_id: str
    title: str
    keep_id: bool  # the front matter names the id (`task_number:`); else a `# Task N:` heading may
    keep_title: bool
    refs: tuple[Ref, ...] = ()
    said_none: bool = False


@dataclass(frozen=True)
class Blocked:
    """`**Blocks:** Task 5` written on Task `task_id` (`line` in `source`): Task 5 depends on it."""

    task_id: str
    ref: Ref
    line: int
    source: str = ""


@dataclass
class ParsedPlan:
    """One plan file read: header, tasks in file order, and what was read leniently (`file:line: ...`)."""

    header: PlanHeader
    tasks: list[Task]
    warnings: list[str]
    refused: tuple[str, int] | None = None  # why numbered headings are not tasks, and the line (numbered.py)
    blocked: list[Blocked] = field(default_factory=list)  # reverse references, added by deps.add_blocked


def check_tasks(tasks: list[Task], path: Path | str | None = None, refused: tuple[str, int] | None = None) -> None:
    """PlanError for no tasks at all (with why numbered headings were `refused`, if they were), or for an
    id used twice (naming both places)."""
    if not tasks:
        expected = "no tasks found (expected headings like '## Task 1: Title' or yaml blocks with task_id)"
        if refused is not None:
            raise PlanError(f"{expected}; {refused[0]}", path=path, line=refused[1])
        raise PlanError(expected, path=path, line=None)
    seen: dict[str, Task] = {}
    for task in tasks:
        key = fields.canonical_id(task.id)
        first = seen.get(key)
        if first is not None:
            where = f"line {first.line}" if first.source == task.source else f"{first.source}:{first.line}"
            raise PlanError(
                f"duplicate task id {task.id!r} (Task {first.id} is on {where})",
                path=task.source or path,
                line=task.line,
            )
        seen[key] = task
