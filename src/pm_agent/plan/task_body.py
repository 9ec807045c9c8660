"""Reading what is inside a task section: labelled fields, lists, dependency references, contract fences.

`parser._Reader` walks the plan's blocks and hands each block of an open task here (or `fasttask.replay`
does, for blocks it read without building nodes).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from pm_agent.errors import PlanError
from pm_agent.plan import fields
from pm_agent.plan.contract import is_contract_block, read_contract
from pm_agent.plan.draft import TASK_LISTS, Blocked, Draft
from pm_agent.plan.fasttask import ItemLines
from pm_agent.plan.file_prose import read_file_prose
from pm_agent.plan.markdown import Line, Node, first_line, inline_of, item_paragraph, lines_of
from pm_agent.plan.nested_fences import fence_lines, suspect
from pm_agent.plan.refs import Ref, all_earlier, consumed_refs, names_tasks, phase_ref, read_refs, title_deps

__all__ = ["SOFT_FIELDS", "TaskBody"]

# Labels that name tasks only some of the time (`Requires: Python 3.11`, `Blocks: the release`): a value naming
# tasks reads as `Depends on` does (`blocks` the other way round); else it stays prose, with a warning.
SOFT_FIELDS = frozenset({"requires", "blocks", "consumes"})


class TaskBody:
    """A task section's content into its draft; `lines` are the plan's, `phases` each phase's task ids so far."""

    def __init__(self, lines: list[str], path: Path | str | None) -> None:
        self.lines = lines
        self.path = path
        self.warnings: list[str] = []
        self.phases: dict[str, list[str]] = {}
        self.cut_short: list[int] = []  # task heading lines: a block there may have ended early (nested_fences.py)
        self.earlier: list[str] = []  # ids of the tasks read so far: `Depends on: all previous tasks`
        self.blocked: list[Blocked] = []  # `**Blocks:** Task 5` lines of the tasks read so far

    def error(self, message: str, line: int | None) -> PlanError:
        return PlanError(message, path=self.path, line=line)

    def warn(self, message: str, line: int | None) -> None:
        where = f"{self.path}:{line}" if line else str(self.path or "plan")
        self.warnings.append(f"{where}: {message}")

    def raw_map(self, where: tuple[int, int] | None) -> str:
        start, end = where if where else (0, 0)
        return "\n".join(self.lines[start:end]).rstrip()

    def open_task(self, parsed: tuple[str, str], text: str, line: int, level: int) -> Draft:
        """The draft a task heading (`text`, read as `parsed`) opens, with what its title says about when it runs:
        `(after Task 2)` is a dependency; `(only if Task 2 fails)` a warning, as pm-agent runs every task."""
        draft = Draft(task_id=parsed[0], title=parsed[1], line=line, level=level)
        draft.done = fields.heading_checked(text)
        # The bracket came before the title (`Task 4 (depends on 1, 2): Title`) when the heading does not end with it.
        refs, condition = title_deps(parsed[1], bare=not text.rstrip().endswith((")", "）")))
        draft.add_refs(refs)
        if condition is not None and not draft.done:
            said = f"Task {draft.task_id}'s title makes it conditional ({condition!r})"
            self.warn(f"{said}: pm-agent runs every task, this one too; no dependency is read from it", line)
        return draft

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
            if draft.pending == "files" and draft.entry_line == plan_line - 1:
                # `**File:** \`a.ts\`` then `**Do:**`: the list that follows is the new label's, not more files.
                draft.pending = None
            return False
        if name in SOFT_FIELDS:
            draft.pending = name if name in fields.LIST_FIELDS and not value else None  # as for Depends on
            draft.pending_label = label.strip().rstrip(":：").strip()
            if name == "consumes":  # prose by design: its task references need no warning, the line stays
                draft.add_refs(consumed_refs(value))
                return False
            return not value or self.add_refs(draft, value, plan_line, field=name, label=draft.pending_label)
        self.set_field(draft, name, value, plan_line, line.code)
        return True

    def set_field(self, draft: Draft, name: str, value: str, plan_line: int, code: tuple[str, ...] = ()) -> None:
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
            if value:  # an empty value announces a list; a list after a value is the task's own (its steps)
                self.add_refs(draft, value, plan_line)
                draft.pending = None
        elif name == "files":
            # `**File:** \`a.tsx\` (create)`: the entry on the label's line; a list may follow.
            if value and fields.add_file_entry(draft.files, value.replace("：", ":"), code):
                draft.entry_line = plan_line
        elif value and name in (*TASK_LISTS, "steps"):
            draft.add(name, value)

    def add_refs(
        self,
        draft: Draft,
        value: str,
        plan_line: int,
        unread: list[tuple[int, str]] | None = None,
        field: str = "depends_on",
        label: str = "Depends on",
    ) -> bool:
        """Read a `Depends on` value; prose next to references is kept as notes (with a warning).

        Text with no reference at all is an error, unless `unread` collects it (list items, judged
        together once the list ends). A soft `field` (`requires`, `blocks`: `label` as written) takes only task
        ids, and text naming none is prose: a warning, and False (the caller keeps it in the description).
        """
        soft = field != "depends_on"
        refs: list[Ref] | None
        try:
            refs = read_refs(value)
        except ValueError as exc:
            if field != "blocks" and self.whole_group(draft, value, plan_line, label):
                return True
            if not soft:
                if unread is None:
                    raise self.error(str(exc), plan_line) from None
                unread.append((plan_line, str(exc)))
                return True
            refs = None
        if soft and (refs is None or (refs and not names_tasks(refs))):
            self.warn(f"{label!r} {value.strip()!r} names no task: no dependency, kept in the description", plan_line)
            return False
        if not refs:
            draft.said_none = draft.said_none or field != "blocks"
            return True
        if field == "blocks":
            draft.blocks.extend((ref, plan_line) for ref in refs)
        else:
            draft.add_refs(refs)
        if any(ref.note for ref in refs):
            read = ", ".join(f"Task {ref.task_id}" for ref in refs)
            notes = "; ".join(f"Task {ref.task_id}: {ref.note}" for ref in refs if ref.note)
            self.warn(f"{label!r} read as {read}; the prose is kept as notes ({notes})", plan_line)
        return True

    def whole_group(self, draft: Draft, value: str, plan_line: int, label: str) -> bool:
        """`Phase 1 complete` (every task of that phase) or `all previous tasks` (every task before this one)."""
        phase = phase_ref(value)
        if phase is not None and self.phases.get(phase):
            ids, what = self.phases[phase], f"every task of phase {phase}"
        elif self.earlier and all_earlier(value):
            ids, what = self.earlier, "every earlier task"
        else:
            return False
        draft.add_refs([Ref(task_id, value.strip()) for task_id in ids])
        self.warn(f"{label!r} {value.strip()!r} read as {what}: Tasks {', '.join(ids)}", plan_line)
        return True

    def list_(self, draft: Draft, node: Node) -> None:
        self.list_items(draft, self.items(draft, node))

    def items(self, draft: Draft, node: Node) -> Iterator[ItemLines]:
        """A list's items; after a bullet read as a list field (`- **Files:**`), its nested list's items as that
        field's list (`list_items` reads each item before the next is asked for: `draft.nested` is the item's)."""
        for item in node.children:
            para = item_paragraph(item)
            inline = inline_of(para) if para is not None else None
            if inline is None:
                continue
            yield item.map, lines_of(inline)
            field, draft.nested = draft.nested, None
            for sub in item.children if field is not None else ():
                if sub.type in ("bullet_list", "ordered_list"):
                    for sub_item in sub.children:
                        sub_para = item_paragraph(sub_item)
                        sub_inline = inline_of(sub_para) if sub_para is not None else None
                        if sub_inline is not None:
                            draft.pending = field
                            yield sub_item.map, lines_of(sub_inline)
                    draft.pending = None

    def list_items(self, draft: Draft, items: Iterable[ItemLines]) -> None:
        """A list's items, each as its map and lines."""
        unread: list[tuple[int, str]] = []
        before = len(draft.refs)
        for where, lines in items:
            self.list_item(draft, where, lines, unread)
        draft.pending = draft.nested = None
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
        line = where[0] + 1 if where else 0
        if step is not None:
            draft.add("steps", step or first.value)
            draft.in_steps = True
        elif draft.pending == "files":
            if not fields.add_file_entry(draft.files, text.replace("：", ":"), first.code):
                self.file_prose(draft, where, lines, text, line)
        elif draft.pending == "depends_on":
            self.add_refs(draft, text, line, unread)
        elif draft.pending in SOFT_FIELDS:
            if not self.add_refs(draft, text, line, field=draft.pending, label=draft.pending_label):
                draft.description.append(self.raw_map(where))
        elif draft.pending is not None:
            draft.add(draft.pending, text)
        elif not self.bullet_field(draft, lines, text, line) and not draft.in_steps:
            draft.description.append(self.raw_map(where))

    def file_prose(
        self, draft: Draft, where: tuple[int, int] | None, lines: list[Line], text: str, plan_line: int
    ) -> None:
        """A Files-list item that is no plain entry: a field ending the list (`- **Depends on:** Task 1`), else
        what file_prose.py makes of it (`Possibly create:`, `Read:`, ...); what it keeps goes to the description."""
        warned = len(self.warnings)
        if self.bullet_field(draft, lines, text, plan_line):
            return
        prose = read_file_prose(draft.files, text.replace("：", ":"), lines[0].code)
        if prose.warning is not None and len(self.warnings) == warned:  # not when bullet_field said it already
            self.warn(prose.warning, plan_line)
        if prose.keep or len(self.warnings) > warned:
            draft.description.append(self.raw_map(where))

    def bullet_field(self, draft: Draft, lines: list[Line], text: str, plan_line: int) -> bool:
        """`- **Depends On**: Task 1`, `* Dependencies: Task 2`, `- **依赖**：任务1`: an item whose first line starts
        with a known label reads as that field, as a paragraph line does; False when it is none (or `Consumes:`).

        A value the field cannot read is a warning, not an error: such an item may be a step's prose (`- Size:
        10MB`). The items after it are not the field's list; its nested list is (`items`)."""
        first = lines[0]
        if first.checkbox or (first.label is None and ":" not in first.value and "：" not in first.value):
            return False  # most items: no label to read
        line = first
        if len(lines) > 1:  # a value wrapped over lines: the whole of it (`Task 1 (the\n  schema)`)
            value = text[len(first.label) :].strip() if first.label else text
            line = Line(first.label, value, tuple(code for ln in lines for code in ln.code), first.offset)
        try:
            if not self.labelled(draft, line, plan_line):
                return False
        except PlanError as exc:
            self.warn(f"{text!r} is not read as a field ({exc.message}): kept in the description", plan_line)
            draft.pending = None
            return False
        draft.nested, draft.pending = draft.pending, None
        return True

    def fence_code(
        self, draft: Draft, info: str, content: str, line: int, lines: tuple[bool, bool] | None = None
    ) -> None:
        """A fence in a task (`line` its first): a yaml contract applies to the draft. `lines`: `fence_lines` of
        its code when the caller knows it (else read from `content`)."""
        draft.pending = None
        ends_open, has_fences = fence_lines(content) if lines is None else lines
        if draft.open_fence and ends_open and not info.strip():
            # The mirror image of a block that ended early (its real close read as an opening): nested_fences.py.
            self.cut_short.append(draft.line)
        draft.open_fence = draft.open_fence or suspect(info, ends_open, has_fences)
        if is_contract_block(info, content):
            draft.apply(read_contract(content, line, self.path))
