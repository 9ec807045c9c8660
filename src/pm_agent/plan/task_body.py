"""Reading what is inside a task section: labelled fields, lists, dependency references, contract fences.

`parser._Reader` walks the plan's blocks and hands each block of an open task here (or `fasttask.replay`
does, for blocks it read without building nodes).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pm_agent.errors import PlanError
from pm_agent.plan import fields
from pm_agent.plan.contract import is_contract_block, read_contract
from pm_agent.plan.draft import TASK_LISTS, Draft
from pm_agent.plan.fasttask import ItemLines
from pm_agent.plan.markdown import Line, Node, first_line, inline_of, item_paragraph, lines_of
from pm_agent.plan.nested_fences import fence_lines, suspect
from pm_agent.plan.refs import Ref, phase_ref, read_refs

__all__ = ["TaskBody"]


class TaskBody:
    """A task section's content into its draft; `lines` are the plan's, `phases` each phase's task ids so far."""

    def __init__(self, lines: list[str], path: Path | str | None) -> None:
        self.lines = lines
        self.path = path
        self.warnings: list[str] = []
        self.phases: dict[str, list[str]] = {}
        self.cut_short: list[int] = []  # task heading lines: a block there may have ended early (nested_fences.py)

    def error(self, message: str, line: int | None) -> PlanError:
        return PlanError(message, path=self.path, line=line)

    def warn(self, message: str, line: int | None) -> None:
        where = f"{self.path}:{line}" if line else str(self.path or "plan")
        self.warnings.append(f"{where}: {message}")

    def raw_map(self, where: tuple[int, int] | None) -> str:
        start, end = where if where else (0, 0)
        return "\n".join(self.lines[start:end]).rstrip()

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
            if value:  # an empty value announces a list
                self.add_refs(draft, value, plan_line)
        elif name == "files":
            # `**File:** \`a.tsx\` (create)`: the entry on the label's line; a list may follow.
            if value and fields.add_file_entry(draft.files, value.replace("：", ":"), code):
                draft.entry_line = plan_line
        elif value and name in (*TASK_LISTS, "steps"):
            draft.add(name, value)

    def add_refs(self, draft: Draft, value: str, plan_line: int, unread: list[tuple[int, str]] | None = None) -> None:
        """Read a `Depends on` value; prose next to references is kept as notes (with a warning).

        Text with no reference at all is an error, unless `unread` collects it (list items, judged
        together once the list ends).
        """
        try:
            refs = read_refs(value)
        except ValueError as exc:
            phase = phase_ref(value)
            if phase is not None and self.phases.get(phase):
                ids = self.phases[phase]
                draft.add_refs([Ref(task_id, value.strip()) for task_id in ids])
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
