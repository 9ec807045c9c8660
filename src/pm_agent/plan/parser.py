"""Plan markdown -> header + tasks, walking markdown-it-py's syntax tree (never regexes over the file)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from markdown_it.tree import SyntaxTreeNode

from pm_agent.errors import PlanError
from pm_agent.plan import fields
from pm_agent.plan.contract import Contract, is_contract_block, read_contract
from pm_agent.plan.markdown import (
    Line,
    first_line,
    heading_level,
    heading_text,
    inline_of,
    item_paragraph,
    lines_of,
    parse_tree,
)
from pm_agent.plan.models import Dependency, ExpectedFiles, PlanHeader, Task, Tier

_TASK_LISTS = ("acceptance_criteria", "non_goals", "tests_to_add", "tests_to_run")


@dataclass
class _Draft:
    """A task being read: its fields so far and where the reader is inside its section."""

    task_id: str
    title: str
    line: int  # 1-based heading (or yaml fence) line
    level: int  # heading level; a heading at this level or above ends the section
    explicit_tier: Tier | None = None
    ownership: str = ""
    refs: list[str] = field(default_factory=list)
    lists: dict[str, list[str]] = field(default_factory=lambda: {k: [] for k in _TASK_LISTS})
    steps: list[str] = field(default_factory=list)
    files: ExpectedFiles = field(default_factory=ExpectedFiles)
    description: list[str] = field(default_factory=list)
    contracts: list[Contract] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    pending: str | None = None  # a list label waiting for its list (`**Files:**` then `- Create: ...`)
    in_steps: bool = False  # after the first step, prose and code belong to steps, not the description

    def add(self, name: str, value: str) -> None:
        bucket = self.steps if name == "steps" else self.lists[name]
        if value and value not in bucket:
            bucket.append(value)


class _Reader:
    def __init__(self, text: str, path: Path | str | None) -> None:
        self.text = text
        self.path = path
        self.lines = text.split("\n")
        self.header = PlanHeader()
        self.tasks: list[Task] = []
        self.draft: _Draft | None = None
        self.last_heading = ""
        self.header_field: str | None = None

    def error(self, message: str, line: int | None) -> PlanError:
        return PlanError(message, path=self.path, line=line)

    def raw(self, node: SyntaxTreeNode) -> str:
        start, end = node.map if node.map else (0, 0)
        return "\n".join(self.lines[start:end]).rstrip()

    # -- walking ------------------------------------------------------------------------------------

    def run(self) -> tuple[PlanHeader, list[Task]]:
        for node in parse_tree(self.text).children:
            if node.type == "heading":
                self.heading(node)
            elif self.draft is None:
                self.outside(node)
            elif node.type == "paragraph":
                self.paragraph(self.draft, node)
            elif node.type in ("bullet_list", "ordered_list"):
                self.list_(self.draft, node)
            elif node.type == "fence":
                self.fence(self.draft, node)
            else:
                self.draft.pending = None
                if not self.draft.in_steps and node.type not in ("hr", "code_block"):
                    self.draft.description.append(self.raw(node))
        self.close(len(self.lines))
        return self.header, self.tasks

    def heading(self, node: SyntaxTreeNode) -> None:
        text = heading_text(node)
        level = heading_level(node)
        parsed = fields.task_heading(text)
        draft = self.draft
        if parsed is not None or (draft is not None and level <= draft.level):
            self.close(node.map[0] if node.map else len(self.lines))
            draft = None
        if parsed is not None:
            self.draft = _Draft(task_id=parsed[0], title=parsed[1], line=first_line(node), level=level)
            return
        if draft is None:
            self.last_heading = text
            self.header_field = None
            if level == 1 and not self.header.title and not self.tasks:
                self.header.title = text
            return
        self.sub_heading(draft, text, node)

    def sub_heading(self, draft: _Draft, text: str, node: SyntaxTreeNode) -> None:
        step = fields.step_title(text)
        name = fields.normalize_label(text)
        draft.pending = None
        if step is not None:
            draft.add("steps", step or text)
            draft.in_steps = True
        elif name in fields.LIST_FIELDS:
            draft.pending = name
        elif not draft.in_steps:
            draft.description.append(self.raw(node))

    def outside(self, node: SyntaxTreeNode) -> None:
        if node.type == "fence" and is_contract_block(node.info, node.content):
            contract = read_contract(node.content, first_line(node), self.path)
            if contract.task_id is None:
                raise self.error("a task contract outside a task section needs a task_id", contract.line)
            title = contract.title or self.last_heading or f"Task {contract.task_id}"
            draft = _Draft(task_id=contract.task_id, title=title, line=contract.line, level=0)
            self.apply_contract(draft, contract)
            self.draft = draft
            self.close(node.map[1] if node.map else len(self.lines), start=(node.map or (0, 0))[0])
        elif node.type == "paragraph" and not self.tasks:
            self.header_paragraph(node)

    def header_paragraph(self, node: SyntaxTreeNode) -> None:
        inline = inline_of(node)
        if inline is None:
            return
        for line in lines_of(inline):
            name = fields.normalize_label(line.label) if line.label else None
            if name in ("goal", "architecture", "tech_stack"):
                self.header_field = name
                setattr(self.header, name, line.value)
            elif self.header_field is not None and line.label is None and line.value:
                current: str = getattr(self.header, self.header_field)
                setattr(self.header, self.header_field, f"{current} {line.value}".strip())
            else:
                self.header_field = None
        # A blank line ends a field's continuation.
        self.header_field = None

    # -- inside a task ------------------------------------------------------------------------------

    def paragraph(self, draft: _Draft, node: SyntaxTreeNode) -> None:
        inline = inline_of(node)
        draft.pending = None
        if inline is None:
            return
        for line in lines_of(inline):
            plan_line = first_line(node) + line.offset
            if self.labelled(draft, line, plan_line):
                continue
            if not draft.in_steps:
                draft.description.append(self.lines[plan_line - 1].rstrip())

    def labelled(self, draft: _Draft, line: Line, plan_line: int) -> bool:
        """Handle a `**Label:** value` (or plain `Label: value`) line; False if it is prose."""
        label, value = line.label, line.value
        if label is not None:
            step = fields.step_title(label)
            if step is not None:
                draft.add("steps", step or value)
                draft.in_steps = True
                draft.pending = None
                return True
            if label.rstrip().endswith((":", "：")) or value.startswith((":", "：")):
                value = value.lstrip(":：").strip()
        else:
            head, sep, rest = value.replace("：", ":").partition(":")
            if not sep:
                return False
            label, value = head, rest.strip()
        name = fields.normalize_label(label)
        if name is None or name in ("goal", "architecture", "tech_stack"):
            return False
        self.set_field(draft, name, value, plan_line)
        return True

    def set_field(self, draft: _Draft, name: str, value: str, plan_line: int) -> None:
        draft.pending = name if name in fields.LIST_FIELDS else None
        if name == "tier":
            try:
                draft.explicit_tier = fields.parse_tier(value)
            except ValueError as exc:
                raise self.error(str(exc), plan_line) from None
        elif name == "ownership":
            draft.ownership = value
        elif name == "depends_on":
            self.add_refs(draft, value, plan_line)
        elif value and name in (*_TASK_LISTS, "steps"):
            draft.add(name, value)

    def add_refs(self, draft: _Draft, value: str, plan_line: int) -> None:
        try:
            refs = fields.parse_refs(value)
        except ValueError as exc:
            raise self.error(str(exc), plan_line) from None
        draft.refs.extend(r for r in refs if r not in draft.refs)

    def list_(self, draft: _Draft, node: SyntaxTreeNode) -> None:
        for item in node.children:
            para = item_paragraph(item)
            inline = inline_of(para) if para is not None else None
            if inline is None:
                continue
            self.list_item(draft, item, lines_of(inline))
        draft.pending = None

    def list_item(self, draft: _Draft, item: SyntaxTreeNode, lines: list[Line]) -> None:
        first = lines[0]
        text = " ".join(f"{ln.label} {ln.value}" if ln.label else ln.value for ln in lines).strip()
        step = fields.step_title(first.label) if first.label else None
        if step is None and first.checkbox:
            step = fields.step_title(text)
            step = text if step is None else step
        if step is not None:
            draft.add("steps", step or first.value)
            draft.in_steps = True
        elif draft.pending == "files":
            fields.add_file_entry(draft.files, text.replace("：", ":"), first.code)
        elif draft.pending == "depends_on":
            self.add_refs(draft, text, first_line(item))
        elif draft.pending is not None:
            draft.add(draft.pending, text)
        elif not draft.in_steps:
            draft.description.append(self.raw(item))

    def fence(self, draft: _Draft, node: SyntaxTreeNode) -> None:
        draft.pending = None
        if is_contract_block(node.info, node.content):
            self.apply_contract(draft, read_contract(node.content, first_line(node), self.path))

    def apply_contract(self, draft: _Draft, contract: Contract) -> None:
        if contract.task_id is not None and contract.task_id != draft.task_id:
            if draft.level:
                draft.log.append(
                    f"task id {contract.task_id!r} from the yaml contract (line {contract.line}) "
                    f"replaces {draft.task_id!r} from the heading"
                )
            draft.task_id = contract.task_id
        draft.title = contract.title or draft.title
        if contract.description:
            draft.description.append(contract.description)
        draft.explicit_tier = contract.tier or draft.explicit_tier
        draft.ownership = contract.ownership if contract.ownership is not None else draft.ownership
        draft.refs.extend(r for r in contract.depends_on or [] if r not in draft.refs)
        for name, values in contract.lists.items():
            for value in values:
                draft.add(name, value)
        if contract.expected_files is not None:
            for kind in ("create", "modify", "delete", "test"):
                for path in getattr(contract.expected_files, kind):
                    fields.add_path(draft.files, kind, path)
            draft.files.modify_ranges.update(contract.expected_files.modify_ranges)
        draft.contracts.append(contract)
        if contract.ignored:
            keys = ", ".join(contract.ignored)
            draft.log.append(f"contract keys set by pm-agent itself, ignored in the plan: {keys}")

    # -- finishing ----------------------------------------------------------------------------------

    def close(self, end: int, start: int | None = None) -> None:
        """Turn the open draft into a Task; its section runs up to line index `end` (exclusive)."""
        draft, self.draft = self.draft, None
        if draft is None:
            return
        first = draft.line - 1 if start is None else start
        body = "\n".join(self.lines[first:end]).strip("\n").rstrip()
        if body.endswith("---"):
            body = body[:-3].rstrip()
        task = Task(
            id=draft.task_id,
            title=draft.title,
            line=draft.line,
            description="\n\n".join(d for d in draft.description if d.strip()).strip(),
            steps=draft.steps,
            tier=draft.explicit_tier or Tier.NORMAL,
            explicit_tier=draft.explicit_tier,
            ownership=draft.ownership,
            acceptance_criteria=draft.lists["acceptance_criteria"],
            expected_files=draft.files,
            non_goals=draft.lists["non_goals"],
            tests_to_add=draft.lists["tests_to_add"],
            tests_to_run=draft.lists["tests_to_run"],
            depends_on=[Dependency(task_id=ref) for ref in draft.refs],
            io_contract=self.last(draft, "io_contract"),
            environment=self.last(draft, "environment"),
            security_flags=self.last(draft, "security_flags"),
            decision_log=draft.log,
            body=body,
        )
        self.tasks.append(task)

    @staticmethod
    def last(draft: _Draft, attr: str) -> Any:
        for contract in reversed(draft.contracts):
            value = getattr(contract, attr)
            if value is not None:
                return value
        return Task.model_fields[attr].get_default(call_default_factory=True)


def parse_plan_text(text: str, path: Path | str | None = None) -> tuple[PlanHeader, list[Task]]:
    """Read a plan: header fields and tasks in plan order, ids checked for duplicates.

    Dependencies are references as written (resolve them with `resolve_dependencies`); tiers are the
    explicit ones or NORMAL (classify with `classify_tier`); test files stay in `expected_files.test`.
    """
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    header, tasks = _Reader(text, path).run()
    if not tasks:
        raise PlanError(
            "no tasks found (expected headings like '## Task 1: Title' or yaml blocks with task_id)",
            path=path,
            line=None,
        )
    seen: dict[str, Task] = {}
    for task in tasks:
        key = fields.canonical_id(task.id)
        if key in seen:
            raise PlanError(
                f"duplicate task id {task.id!r} (Task {seen[key].id} is on line {seen[key].line})",
                path=path,
                line=task.line,
            )
        seen[key] = task
    return header, tasks
