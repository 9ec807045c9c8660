"""Plan markdown -> header + tasks, walking markdown-it-py's syntax tree (never regexes over the file)."""

from __future__ import annotations

from pathlib import Path

from pm_agent.errors import PlanError
from pm_agent.plan import fields
from pm_agent.plan.contract import Contract, is_contract_block, read_contract
from pm_agent.plan.draft import TASK_LISTS, Draft, FileTask, ParsedPlan
from pm_agent.plan.markdown import (
    Line,
    Node,
    first_line,
    heading_level,
    heading_text,
    inline_of,
    item_paragraph,
    lines_of,
)
from pm_agent.plan.models import PlanHeader, Task
from pm_agent.plan.quotes import find_quote
from pm_agent.plan.sections import read_blocks

__all__ = ["FileTask", "ParsedPlan", "check_tasks", "parse_plan_text", "read_plan"]


class _Reader:
    def __init__(self, text: str, path: Path | str | None, source: str = "") -> None:
        self.text = text
        self.path = path
        self.source = source
        self.lines = text.split("\n")
        self.header = PlanHeader()
        self.tasks: list[Task] = []
        self.draft: Draft | None = None
        self.last_heading = ""
        self.header_field: str | None = None
        self.warnings: list[str] = []

    def error(self, message: str, line: int | None) -> PlanError:
        return PlanError(message, path=self.path, line=line)

    def warn(self, message: str, line: int | None) -> None:
        where = f"{self.path}:{line}" if line else str(self.path or "plan")
        self.warnings.append(f"{where}: {message}")

    def raw(self, node: Node) -> str:
        start, end = node.map if node.map else (0, 0)
        return "\n".join(self.lines[start:end]).rstrip()

    # -- walking ------------------------------------------------------------------------------------

    def run(self, file_task: FileTask | None = None) -> ParsedPlan:
        if file_task is not None:
            self.draft = Draft(
                task_id=file_task.task_id,
                title=file_task.title,
                line=1,
                level=0,
                refs=list(file_task.refs),
                said_none=file_task.said_none,
                adopt=True,
                keep_id=file_task.keep_id,
                keep_title=file_task.keep_title,
                body_from=0,
            )
        nodes = read_blocks(self.text, self.lines).nodes
        index = 0
        while index < len(nodes):
            node = nodes[index]
            index += 1
            if node.type == "heading":
                quoted = self.quoted_plan(nodes, index - 1)
                if quoted is not None:
                    index = quoted
                    continue
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
        return ParsedPlan(self.header, self.tasks, self.warnings)

    def quoted_plan(self, nodes: list[Node], index: int) -> int | None:
        """Where a plan quoted in the open task ends (its nodes are skipped), or None if this is no quote."""
        draft, node = self.draft, nodes[index]
        if draft is None or heading_level(node) != 1 or fields.task_heading(heading_text(node)) is not None:
            return None
        taken = {fields.canonical_id(t.id) for t in self.tasks} | {fields.canonical_id(draft.task_id)}
        quote = find_quote(
            nodes,
            index,
            outer_level=draft.level,
            taken=taken,
            lines=self.lines,
            section_line=draft.line - 1 if draft.body_from is None else draft.body_from,
        )
        if quote is None:
            return None
        self.warn(
            f"{quote.title!r} and the {quote.tasks} task heading(s) under it restart the task numbering "
            f"inside Task {draft.task_id}: read as that task's content (a quoted plan), not as tasks",
            first_line(node),
        )
        draft.pending = None
        return quote.end

    def heading(self, node: Node) -> None:
        text = heading_text(node)
        level = heading_level(node)
        parsed = fields.task_heading(text)
        draft = self.draft
        if parsed is not None and draft is not None and draft.adopt:
            # The task file's own `# Task 4: Title` heading: it names the front-matter task.
            draft.adopt = False
            draft.task_id = draft.task_id if draft.keep_id else parsed[0]
            draft.title = draft.title if draft.keep_title else parsed[1]
            draft.line = first_line(node)
            return
        if parsed is not None or (draft is not None and level <= draft.level):
            self.close(node.map[0] if node.map else len(self.lines))
            draft = None
        if parsed is not None:
            self.draft = Draft(task_id=parsed[0], title=parsed[1], line=first_line(node), level=level)
            return
        if draft is None:
            self.last_heading = text
            self.header_field = None
            if level == 1 and not self.header.title and not self.tasks:
                self.header.title = text
            return
        self.sub_heading(draft, text, node)

    def sub_heading(self, draft: Draft, text: str, node: Node) -> None:
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

    def outside(self, node: Node) -> None:
        if node.type == "fence" and is_contract_block(node.info, node.content):
            contract = read_contract(node.content, first_line(node), self.path)
            if contract.task_id is None:
                raise self.error("a task contract outside a task section needs a task_id", contract.line)
            title = contract.title or self.last_heading or f"Task {contract.task_id}"
            draft = Draft(task_id=contract.task_id, title=title, line=contract.line, level=0)
            self.apply_contract(draft, contract)
            self.draft = draft
            self.close(node.map[1] if node.map else len(self.lines), start=(node.map or (0, 0))[0])
        elif node.type == "paragraph" and not self.tasks:
            self.header_paragraph(node)

    def header_paragraph(self, node: Node) -> None:
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

    def paragraph(self, draft: Draft, node: Node) -> None:
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

    def labelled(self, draft: Draft, line: Line, plan_line: int) -> bool:
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

    def set_field(self, draft: Draft, name: str, value: str, plan_line: int) -> None:
        draft.pending = name if name in fields.LIST_FIELDS else None
        if name == "tier":
            try:
                draft.explicit_tier = fields.parse_tier(value)
            except ValueError as exc:
                raise self.error(str(exc), plan_line) from None
        elif name == "ownership":
            draft.ownership = value
        elif name == "estimate":
            try:
                draft.estimate = fields.parse_estimate(value)
            except ValueError as exc:
                raise self.error(str(exc), plan_line) from None
        elif name == "depends_on":
            if value:  # an empty value announces a list
                self.add_refs(draft, value, plan_line)
        elif value and name in (*TASK_LISTS, "steps"):
            draft.add(name, value)

    def add_refs(self, draft: Draft, value: str, plan_line: int, unread: list[tuple[int, str]] | None = None) -> None:
        """Read a `Depends on` value; prose next to references is kept as notes (with a warning).

        Text with no reference at all is an error, unless `unread` collects it (list items, judged
        together once the list ends).
        """
        try:
            refs = fields.read_refs(value)
        except ValueError as exc:
            if unread is None:
                raise self.error(str(exc), plan_line) from None
            unread.append((plan_line, str(exc)))
            return
        if not refs:
            draft.said_none = True
            return
        draft.add_refs(refs)
        if any(ref.note for ref in refs):
            read = ", ".join(f"Task {ref.task_id}" for ref in refs)
            notes = "; ".join(f"Task {ref.task_id}: {ref.note}" for ref in refs if ref.note)
            self.warn(f"'Depends on' read as {read}; the prose is kept as notes ({notes})", plan_line)

    def list_(self, draft: Draft, node: Node) -> None:
        unread: list[tuple[int, str]] = []
        before = len(draft.refs)
        for item in node.children:
            para = item_paragraph(item)
            inline = inline_of(para) if para is not None else None
            if inline is None:
                continue
            self.list_item(draft, item, lines_of(inline), unread)
        draft.pending = None
        if unread and len(draft.refs) == before and not draft.said_none:
            raise self.error(unread[0][1], unread[0][0])
        for line, message in unread:
            self.warn(f"ignored in 'Depends on': {message}", line)

    def list_item(self, draft: Draft, item: Node, lines: list[Line], unread: list[tuple[int, str]]) -> None:
        first = lines[0]
        text = " ".join(f"{ln.label} {ln.value}" if ln.label else ln.value for ln in lines).strip()
        step = fields.step_title(first.label) if first.label else None
        # A checklist under `Acceptance criteria:` (or another list label) is that list, not steps.
        if step is None and first.checkbox and draft.pending in (None, "steps"):
            step = fields.step_title(text)
            step = text if step is None else step
        if step is not None:
            draft.add("steps", step or first.value)
            draft.in_steps = True
        elif draft.pending == "files":
            fields.add_file_entry(draft.files, text.replace("：", ":"), first.code)
        elif draft.pending == "depends_on":
            self.add_refs(draft, text, first_line(item), unread)
        elif draft.pending is not None:
            draft.add(draft.pending, text)
        elif not draft.in_steps:
            draft.description.append(self.raw(item))

    def fence(self, draft: Draft, node: Node) -> None:
        draft.pending = None
        if is_contract_block(node.info, node.content):
            self.apply_contract(draft, read_contract(node.content, first_line(node), self.path))

    def apply_contract(self, draft: Draft, contract: Contract) -> None:
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
        if contract.depends_on is not None:
            draft.add_refs([fields.Ref(ref) for ref in contract.depends_on])
            draft.said_none = draft.said_none or not contract.depends_on
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
        first = (draft.line - 1 if draft.body_from is None else draft.body_from) if start is None else start
        body = "\n".join(self.lines[first:end]).strip("\n").rstrip()
        if body.endswith("---"):
            body = body[:-3].rstrip()
        self.tasks.append(draft.to_task(body, self.source))


def read_plan(
    text: str, path: Path | str | None = None, *, file_task: FileTask | None = None, source: str = ""
) -> ParsedPlan:
    """Read one plan file: header, tasks in file order, warnings. An empty result is not an error here.

    `file_task` makes the whole file one task (a task file with front matter); `source` is recorded
    on every task (the file's name within a plan folder).
    """
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    return _Reader(text, path, source).run(file_task)


def check_tasks(tasks: list[Task], path: Path | str | None = None) -> None:
    """PlanError for no tasks at all, or for an id used twice (naming both places)."""
    if not tasks:
        raise PlanError(
            "no tasks found (expected headings like '## Task 1: Title' or yaml blocks with task_id)",
            path=path,
            line=None,
        )
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


def parse_plan_text(text: str, path: Path | str | None = None) -> tuple[PlanHeader, list[Task]]:
    """Read a plan: header fields and tasks in plan order, ids checked for duplicates.

    Dependencies are references as written (resolve them with `resolve_dependencies`); tiers are the
    explicit ones or NORMAL (classify with `classify_tier`); test files stay in `expected_files.test`.
    """
    parsed = read_plan(text, path)
    check_tasks(parsed.tasks, path)
    return parsed.header, parsed.tasks
