"""Plan markdown -> header + tasks, walking markdown-it-py's syntax tree (never regexes over the file)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from pathlib import Path

from pm_agent.plan import agentos, fields
from pm_agent.plan.contract import is_contract_block, read_contract
from pm_agent.plan.deps import add_blocked
from pm_agent.plan.deptable import Row, add_table_deps, dependency_rows
from pm_agent.plan.draft import Blocked, Draft, FileTask, ParsedPlan, check_tasks
from pm_agent.plan.fasttask import TaskOps, replay
from pm_agent.plan.listforms import read_listed
from pm_agent.plan.markdown import (
    Node,
    first_line,
    heading_level,
    heading_text,
    inline_of,
    lines_of,
)
from pm_agent.plan.models import PlanHeader, Task
from pm_agent.plan.nested_fences import mend
from pm_agent.plan.quotes import find_quote
from pm_agent.plan.refs import phase_number
from pm_agent.plan.sections import Blocks, iter_blocks
from pm_agent.plan.task_body import TaskBody
from pm_agent.plan.unrun import Done, Miss, done_warning, near_miss, refusal, without_done

__all__ = ["FileTask", "ParsedPlan", "check_tasks", "parse_plan_text", "read_plan"]


class _Reader(TaskBody):
    """The walk over a plan's blocks: headings open and close tasks, the header's fields, quoted plans."""

    def __init__(
        self, text: str, path: Path | str | None, source: str = "", task_level: int | None = None, phases: bool = False
    ) -> None:
        super().__init__(text.split("\n"), path)
        self.text = text
        self.task_level = task_level  # numbered headings of this level are the tasks (numbered.py)
        self.phase_tasks = phases  # at that level, `Phase N` headings are the tasks (a plan of phases only)
        self.source = source
        self.header = PlanHeader()
        self.tasks: list[Task] = []
        self.draft: Draft | None = None
        self.last_heading = ""
        self.header_field: str | None = None
        # The phase heading (`## Phase 2: ...`) the next tasks fall under.
        self.phase: tuple[str, int] | None = None
        self.done: list[Done] = []  # task headings checked off in the plan (unrun.py)
        self.misses: list[Miss] = []  # headings that start like task headings and are none
        self.table_rows: list[Row] = []  # rows of dependency tables outside the tasks (deptable.py)

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
                # A bare fence that runs to the end of the plan may be a block's real close, read as an opening.
                to_end = not node.info.strip() and node.map is not None and node.map[1] >= len(self.lines)
                lines = (True, True) if to_end else None
                self.fence_code(self.draft, node.info, node.content, first_line(node), lines)
            else:
                self.draft.pending = None
                if not self.draft.in_steps and node.type not in ("hr", "code_block"):
                    self.draft.description.append(self.raw_map(node.map))
        return self.finished()

    def finished(self) -> ParsedPlan:
        """The last task closed, the dependency tables' rows added, the dependencies on done tasks dropped."""
        self.close(len(self.lines))
        if self.table_rows and self.tasks:
            self.tasks = add_table_deps(self, self.tasks, self.table_rows)
        return ParsedPlan(self.header, without_done(self.tasks, self.done), self.warnings, blocked=self.blocked)

    def task_heading(self, node: Node) -> tuple[str, str] | None:
        """(id, title) when the heading starts a task: `Task 3: X`, or a numbered one at the task level."""
        if self.task_level is None:
            return fields.task_heading(heading_text(node))
        if heading_level(node) != self.task_level:
            return None
        from pm_agent.plan.numbered import numbered_heading  # only plans without task headings: on use

        return numbered_heading(heading_text(node), phases=self.phase_tasks)

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
        if parsed is None and self.task_level is None and (miss := near_miss(text, level, node, draft)) is not None:
            self.misses.append(miss[0])  # `## Task 104 global loop`: said, as its section may be no task's
            self.warn(miss[1], miss[0].line)
        if parsed is not None and draft is not None and draft.adopt:
            # The task file's own `# Task 4: Title` heading: it names the front-matter task.
            draft.adopt = False
            draft.task_id = draft.task_id if draft.keep_id else parsed[0]
            draft.title = draft.title if draft.keep_title else parsed[1]
            draft.line = first_line(node)
            return
        if parsed is not None or (draft is not None and level <= draft.level):
            # A heading that is no task's ends a task holding a block that may have ended early: mend, read again.
            if parsed is None and draft is not None and draft.open_fence:
                self.cut_short.append(draft.line)
            self.close(node.map[0] if node.map else len(self.lines))
            draft = None
        if parsed is not None:
            self.draft = self.open_task(parsed, text, first_line(node), level)
            return
        if draft is None:
            self.last_heading = text
            self.header_field = None
            if self.phase is None or level <= self.phase[1]:
                number = phase_number(text)
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
            draft.pending, draft.pending_label = name, text.strip().rstrip(":：").strip()
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
        elif node.type == "table":
            self.table_rows.extend(dependency_rows(node))

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
        if draft.done:  # checked off: no task, and a dependency on it is met (unrun.py)
            self.done.append(Done(draft.line, draft.task_id, draft.title))
            self.warn(done_warning(self.done[-1]), draft.line)
            return
        self.tasks.append(draft.to_task(body, self.source))
        self.earlier.append(draft.task_id)
        self.blocked.extend(Blocked(draft.task_id, ref, line, self.source) for ref, line in draft.blocks)
        if self.phase is not None:
            self.phases.setdefault(self.phase[0], []).append(draft.task_id)
        elif self.phase_tasks:  # each phase is a task: `Depends on: Phase 1` names that task
            self.phases[draft.task_id] = [draft.task_id]


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
    if agentos.has_groups(text):
        text = agentos.as_tasks(text)  # Agent OS: each task group is a task
    reader = _Reader(text, path, source)
    parsed = reader.run(file_task)
    if reader.cut_short:
        text, parsed = _mended(text, parsed, path, source, file_task, reader.cut_short)
    twice = _named_twice(parsed.tasks)
    if twice:  # a task heading in a block Markdown ended early (a plan template in a prompt) reads as a task
        keys = {key for key, _ in twice}
        starts = [before.line for _, before in twice if before is not None]
        text, parsed = _mended(text, parsed, path, source, file_task, starts, keys)
    if numbered and file_task is None and not parsed.tasks and reader.done:
        parsed.refused = refusal(reader.done, [])  # task headings, all done: no other reading of the plan
        return parsed
    if numbered and file_task is None and not parsed.tasks:
        listed, left = read_listed(text, path, lambda listed_text: _Reader(listed_text, path, source).run())
        if listed is not None:
            return listed
        from pm_agent.plan.numbered import read_numbered  # its regexes cost every plan load; few plans need it

        # A list whose task items are all done (`left`) is no plan of phases: its phases hold those items.
        run = lambda level, phases: _Reader(text, path, source, level, phases).run()  # noqa: E731
        read = read_numbered(text, path, parsed, run, phases=left is None)
        if not read.tasks and left is not None:
            read.refused = left  # a list whose items are all done says more than "no task heading"
        if not read.tasks and reader.misses:
            read.refused = refusal([], reader.misses)  # `## Task 104 global loop`: say why it is no task heading
        return read
    return parsed


def _mended(
    text: str,
    parsed: ParsedPlan,
    path: Path | str | None,
    source: str,
    file_task: FileTask | None,
    starts: list[int],
    twice: set[str] | None = None,
) -> tuple[str, ParsedPlan]:
    """The plan read again with its blocks that hold fences of their own mended (nested_fences.py), if any."""
    stray = (lambda task_id: key if (key := fields.canonical_id(task_id)) in twice else None) if twice else None
    mended_text, mended = mend(text, fields.task_heading, starts, stray)
    if not mended:
        return text, parsed
    again = _Reader(mended_text, path, source).run(file_task)
    again.warnings[:0] = [f"{path or 'plan'}:{block.warning()}" for block in mended]
    return mended_text, again


def _named_twice(tasks: list[Task]) -> list[tuple[str, Task | None]]:
    """Each task id the plan names again: its key, and the task before its first heading (None: it is the first)."""
    first: dict[str, int] = {}
    found: dict[str, Task | None] = {}
    for index, task in enumerate(tasks):
        key = fields.canonical_id(task.id)
        if key not in first:
            first[key] = index
        elif key not in found:
            found[key] = tasks[first[key] - 1] if first[key] else None
    return list(found.items())


def parse_plan_text(text: str, path: Path | str | None = None) -> tuple[PlanHeader, list[Task]]:
    """Read a plan: header fields and tasks in plan order, ids checked for duplicates.

    Dependencies are references as written (resolve them with `resolve_dependencies`); tiers are the
    explicit ones or NORMAL (classify with `classify_tier`); test files stay in `expected_files.test`.
    """
    parsed = read_plan(text, path, numbered=True)
    check_tasks(parsed.tasks, path, parsed.refused)
    return parsed.header, add_blocked(parsed.tasks, parsed.blocked, path)
