"""Plan markdown -> header + tasks, walking markdown-it-py's syntax tree (never regexes over the file)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import chain
from pathlib import Path

from pm_agent.errors import PlanError
from pm_agent.plan import fields
from pm_agent.plan.contract import is_contract_block, read_contract
from pm_agent.plan.draft import TASK_LISTS, Draft, FileTask, ParsedPlan, check_tasks
from pm_agent.plan.fasttask import ItemLines, TaskOps, replay
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
from pm_agent.plan.sections import Blocks, iter_blocks

__all__ = ["FileTask", "ParsedPlan", "check_tasks", "parse_plan_text", "read_plan"]


class _Reader:
    def __init__(self, text: str, path: Path | str | None, source: str = "", task_level: int | None = None) -> None:
        self.text = text
        self.task_level = task_level  # numbered headings of this level are the tasks (numbered.py)
        self.path = path
        self.source = source
        self.lines = text.split("\n")
        self.header = PlanHeader()
        self.tasks: list[Task] = []
        self.draft: Draft | None = None
        self.last_heading = ""
        self.header_field: str | None = None
        self.warnings: list[str] = []
        # The phase heading (`## Phase 2: ...`) the next tasks fall under, and each phase's task ids.
        self.phase: tuple[str, int] | None = None
        self.phases: dict[str, list[str]] = {}

    def error(self, message: str, line: int | None) -> PlanError:
        return PlanError(message, path=self.path, line=line)

    def warn(self, message: str, line: int | None) -> None:
        where = f"{self.path}:{line}" if line else str(self.path or "plan")
        self.warnings.append(f"{where}: {message}")

    def raw_map(self, where: tuple[int, int] | None) -> str:
        start, end = where if where else (0, 0)
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
        # A section's nodes at a time, walked while they are fresh; only a plan quoted in a task needs the
        # nodes after its title (quotes.py), and then the rest is read at once.
        sections = iter_blocks(self.text, self.lines, Blocks(), tasks=file_task is None and self.task_level is None)
        nodes: Sequence[Node] = ()
        index = 0
        rest_read = False  # the nodes hold the whole rest of the plan
        while True:
            if index >= len(nodes):
                more = next(sections, None)
                if more is None:
                    break
                nodes, index = more, 0
                continue
            node = nodes[index]
            index += 1
            if node.type == "heading":
                if self.may_quote(node):
                    if not rest_read:
                        nodes, index, rest_read = [*nodes[index - 1 :], *chain.from_iterable(sections)], 1, True
                    quoted = self.quoted_plan(nodes, index - 1)
                    if quoted is not None:
                        index = quoted
                        continue
                self.heading(node)
            elif isinstance(node, TaskOps) and self.draft is not None:
                replay(self, self.draft, node)  # blocks fasttask.py read: what the branches below do with them
            elif self.draft is None:
                self.outside(node)
            elif node.type == "paragraph":
                self.paragraph(self.draft, node)
            elif node.type in ("bullet_list", "ordered_list"):
                self.list_(self.draft, node)
            elif node.type == "fence":
                self.fence_code(self.draft, node.info, node.content, first_line(node))
            else:
                self.draft.pending = None
                if not self.draft.in_steps and node.type not in ("hr", "code_block"):
                    self.draft.description.append(self.raw_map(node.map))
        self.close(len(self.lines))
        return ParsedPlan(self.header, self.tasks, self.warnings)

    def task_heading(self, node: Node) -> tuple[str, str] | None:
        """(id, title) when the heading starts a task: `Task 3: X`, or a numbered one at the task level."""
        if self.task_level is None:
            return fields.task_heading(heading_text(node))
        if heading_level(node) != self.task_level:
            return None
        from pm_agent.plan.numbered import numbered_heading  # only plans without task headings: on use

        return numbered_heading(heading_text(node))

    def may_quote(self, node: Node) -> bool:
        """Whether the heading may open a plan quoted in the open task: a top-level title, no task heading."""
        return (
            self.draft is not None
            and self.task_level is None
            and heading_level(node) == 1
            and self.task_heading(node) is None
        )

    def quoted_plan(self, nodes: Sequence[Node], index: int) -> int | None:
        """Where a plan quoted in the open task ends (its nodes are skipped), or None if this is no quote;
        nodes[index] is a heading that `may_quote`."""
        draft, node = self.draft, nodes[index]
        if draft is None:
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
        parsed = self.task_heading(node)
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
            if self.phase is None or level <= self.phase[1]:
                number = fields.phase_number(text)
                self.phase = (number, level) if number is not None else None
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
            draft.description.append(self.raw_map(node.map))

    def outside(self, node: Node) -> None:
        if node.type == "fence" and is_contract_block(node.info, node.content):
            contract = read_contract(node.content, first_line(node), self.path)
            if contract.task_id is None:
                raise self.error("a task contract outside a task section needs a task_id", contract.line)
            title = contract.title or self.last_heading or f"Task {contract.task_id}"
            draft = Draft(task_id=contract.task_id, title=title, line=contract.line, level=0)
            draft.apply(contract)
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
            phase = fields.phase_ref(value)
            if phase is not None and self.phases.get(phase):
                ids = self.phases[phase]
                draft.add_refs([fields.Ref(task_id, value.strip()) for task_id in ids])
                self.warn(
                    f"'Depends on' {value.strip()!r} read as every task of phase {phase}: Tasks {', '.join(ids)}",
                    plan_line,
                )
                return
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
        items: list[ItemLines] = []
        for item in node.children:
            para = item_paragraph(item)
            inline = inline_of(para) if para is not None else None
            if inline is not None:
                items.append((item.map, lines_of(inline)))
        self.list_items(draft, items)

    def list_items(self, draft: Draft, items: Iterable[ItemLines]) -> None:
        """A list's items, each as its map and lines."""
        unread: list[tuple[int, str]] = []
        before = len(draft.refs)
        for where, lines in items:
            self.list_item(draft, where, lines, unread)
        draft.pending = None
        if unread and len(draft.refs) == before and not draft.said_none:
            raise self.error(unread[0][1], unread[0][0])
        for line, message in unread:
            self.warn(f"ignored in 'Depends on': {message}", line)

    def list_item(
        self, draft: Draft, where: tuple[int, int] | None, lines: list[Line], unread: list[tuple[int, str]]
    ) -> None:
        first = lines[0]
        if len(lines) == 1:  # most items: one line, no join
            text = (f"{first.label} {first.value}" if first.label else first.value).strip()
        else:
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
            self.add_refs(draft, text, where[0] + 1 if where else 0, unread)
        elif draft.pending is not None:
            draft.add(draft.pending, text)
        elif not draft.in_steps:
            draft.description.append(self.raw_map(where))

    def fence_code(self, draft: Draft, info: str, content: str, line: int) -> None:
        """A fence in a task (`line` its first): a yaml contract applies to the draft."""
        draft.pending = None
        if is_contract_block(info, content):
            draft.apply(read_contract(content, line, self.path))

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
        if self.phase is not None:
            self.phases.setdefault(self.phase[0], []).append(draft.task_id)


def read_plan(
    text: str,
    path: Path | str | None = None,
    *,
    file_task: FileTask | None = None,
    source: str = "",
    numbered: bool = False,
) -> ParsedPlan:
    """Read one plan file: header, tasks in file order, warnings. An empty result is not an error here.

    `file_task` makes the whole file one task (a task file with front matter); `source` is recorded
    on every task (the file's name within a plan folder). `numbered` lets a file without task headings
    be read by its numbered headings (numbered.py); when they are refused, `ParsedPlan.refused` says why.
    """
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    parsed = _Reader(text, path, source).run(file_task)
    if numbered and file_task is None and not parsed.tasks:
        from pm_agent.plan.numbered import read_numbered  # its regexes cost every plan load; few plans need it

        return read_numbered(text, path, parsed, lambda level: _Reader(text, path, source, task_level=level).run())
    return parsed


def parse_plan_text(text: str, path: Path | str | None = None) -> tuple[PlanHeader, list[Task]]:
    """Read a plan: header fields and tasks in plan order, ids checked for duplicates.

    Dependencies are references as written (resolve them with `resolve_dependencies`); tiers are the
    explicit ones or NORMAL (classify with `classify_tier`); test files stay in `expected_files.test`.
    """
    parsed = read_plan(text, path, numbered=True)
    check_tasks(parsed.tasks, path, parsed.refused)
    return parsed.header, parsed.tasks
