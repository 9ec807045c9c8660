"""Plans without the word "Task": numbered headings (`### 1.1.1 Title`, `## Step 3: Title`) read as tasks.

Only a single-file plan with no task heading at all (no `Task 3:` / `任务 3：` heading, no yaml
contract) gets this reading. Its numbered headings of one level become the tasks: the level with the
most of them, the deeper one on a tie (`## 1. Setup` over `### 1.1 Install`, ...). Design docs number
their sections too (`## 1. Background`, `### 2.1 Data flow`), so the reading stands only when at least
half of those sections carry a task field (files, steps, dependencies, acceptance criteria, estimate,
tier, ownership); otherwise the document is refused as a design doc, naming its first numbered heading.

Risk-tagged batches (`## Batch 1 [LOW RISK]`, one tool's agent-written plans, their steps `### Step 1.1:`
headings) are such a plan's tasks whatever else is numbered, with or without task fields (the tag says it is a
task); they run in order: each batch without a `Depends on` of its own depends on the one before.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pm_agent.plan.draft import ParsedPlan
from pm_agent.plan.markdown import Node, first_line, heading_level, heading_text
from pm_agent.plan.models import Dependency, Task
from pm_agent.plan.sections import read_blocks

# `1.2.3 Title`, `1.2. Title`, `1.1安装`, `3. Title`, `3) Title`, `3、标题`, `3: Title`; a bare `2026 Roadmap`
# is no number (it needs a dot, a bracket or a colon after it), nor is `1.5x faster`.
_NUMBERED = re.compile(
    r"^(?P<id>\d{1,3}(?:\.\d{1,3})+)(?:\.?\s+|\.?(?=[^\x00-\x7f])|\s*[:：]\s*)(?P<t1>\S.*)$"
    r"|^(?P<id2>\d{1,3})\s*(?:[.)]\s+|[．、:：]\s*)(?P<t2>\S.*)$"
    r"|^(?:step\s+|步骤\s*)(?P<id3>\d{1,3}[a-z]?)\s*(?:[:：.)\-–—]\s*|\s+)(?P<t3>\S.*)$",
    re.IGNORECASE,
)


# `Batch 1 [LOW RISK]`, `Batch 0 [LOW RISK] - Add the dependency` (one tool's plans: batches of `### Step 1.1:`
# headings, run in order). The risk tag is what tells such a batch from a design doc's `### Batch 1: Parallel
# (3 agents)`, a section about who runs what, not a task.
_BATCH = re.compile(
    r"^batch\s+(?P<id>\d{1,3})\s*\[(?P<risk>[^\[\]]{0,30}\brisk)\]\s*(?:(?:[:：]|[-–—]+)\s*(?P<title>\S.*))?$",
    re.IGNORECASE,
)


def batch_heading(text: str) -> tuple[str, str] | None:
    """`Batch 2 [MEDIUM RISK] - Title` -> ("2", "Title"); `Batch 1 [LOW RISK]` -> ("1", "Batch 1 (low risk)")."""
    match = _BATCH.match(text.strip())
    if match is None:
        return None
    number, risk = match.group("id"), (match.group("risk") or "").strip().lower()
    return number, (match.group("title") or f"Batch {number} ({risk})").strip()


# `Phase 1: Title`, `Phase A - Title`, `Gate 2: Title`, `Phase 7 (follow-up)`, `阶段 1：Title`: in a plan made only of
# phases (no task heading, no other numbered heading), each phase is a task. A letter is an id only before a colon,
# a dash or the end, so `Phase A new approach` is none.
_PHASE = re.compile(
    r"^(?:phase|stage|gate|阶段)\s*(?P<id>\d{1,3}(?:\.\d{1,3})*|(?-i:[A-Z])(?=\s*[:：.]|\s+[-–—]+\s|\s*$))"
    r"(?:\s*(?:[:：.)\-–—]+\s*|\s+)(?P<title>\S.*))?$",
    re.IGNORECASE,
)


def phase_heading(text: str) -> tuple[str, str] | None:
    """`Phase 2: Switch the builder` -> ("2", "Switch the builder"); `Phase B` -> ("B", "Phase B"); else None."""
    match = _PHASE.match(text.strip())
    if match is None:
        return None
    return match.group("id"), (match.group("title") or text).strip()


def numbered_heading(text: str, *, phases: bool = False) -> tuple[str, str] | None:
    """`1.1.1 Install deps` -> ("1.1.1", "Install deps"); `Step 3: Wire it` -> ("3", "Wire it"); a batch (see
    `batch_heading`); with `phases`, a phase (see `phase_heading`); else None."""
    batch = batch_heading(text)
    if batch is not None:
        return batch
    if phases:
        return phase_heading(text)  # a plan of phases has no other numbered heading (`numbered_level`)
    match = _NUMBERED.match(text.strip())
    if match is None:
        return None
    task_id = match.group("id") or match.group("id2") or match.group("id3")
    title = match.group("t1") or match.group("t2") or match.group("t3")
    return task_id, title.strip()


@dataclass(frozen=True)
class Numbered:
    """The heading level read as tasks, and where its first numbered heading is (for a refusal)."""

    level: int
    count: int
    first_line: int
    first_text: str
    batches: bool = False  # `Batch N` headings: they are the tasks, each after the one before
    phases: bool = False  # `Phase N` headings, in a plan without any other numbered heading: they are the tasks


def numbered_level(nodes: Sequence[Node], *, phases: bool = True) -> Numbered | None:
    """The heading level whose numbered headings are the tasks (most of them, deeper on a tie), or None; with
    `phases`, the `Phase N` headings of a plan without other numbered headings."""
    found: list[tuple[int, int, str]] = []  # (level, line, text)
    batches: list[tuple[int, int, str]] = []
    phased: list[tuple[int, int, str]] = []
    for node in nodes:
        if node.type == "heading":
            text = heading_text(node)
            if numbered_heading(text) is not None:
                found.append((heading_level(node), first_line(node), text))
                if batch_heading(text) is not None:
                    batches.append(found[-1])
            elif phases and phase_heading(text) is not None:
                phased.append((heading_level(node), first_line(node), text))
    if batches:  # a batch holds numbered steps (`### Step 1.1:`), which must not outnumber it
        found = batches
    # Phases group a plan's tasks; only in a plan with nothing else numbered are they its tasks.
    by_phase = not found and bool(phased)
    found = found or phased
    if not found:
        return None
    counts = Counter(level for level, _, _ in found)
    level = max(counts, key=lambda lv: (counts[lv], lv))
    line, text = next((ln, tx) for lv, ln, tx in found if lv == level)
    return Numbered(level, counts[level], line, text, batches=bool(batches), phases=by_phase)


def carries_fields(task: Task) -> bool:
    """Whether a section says anything only a task says: files, steps, dependencies, criteria, size, tier, owner."""
    return bool(
        task.steps
        or task.expected_files.all_paths()
        or task.depends_on
        or task.declared_independent
        or task.acceptance_criteria
        or task.tests_to_add
        or task.tests_to_run
        or task.estimate is not None
        or task.explicit_tier is not None
        or task.ownership
    )


def refusal(numbered: Numbered, tasks: Sequence[Task]) -> str | None:
    """Why the numbered sections are not read as a plan's tasks, or None when they are."""
    with_fields = sum(1 for task in tasks if carries_fields(task))
    if tasks and with_fields * 2 >= len(tasks):
        return None
    kind = "'Phase N'" if numbered.phases else "numbered"
    return (
        f"its {numbered.count} {kind} heading(s) at level {numbered.level} (the first, line "
        f"{numbered.first_line}: {numbered.first_text!r}) are not read as tasks: only {with_fields} of them "
        "carry a task field (Files, Steps, Depends on, Acceptance criteria, Estimate), so the document reads "
        "as a design doc"
    )


def no_task_headings(nodes: Sequence[Node]) -> tuple[str, int] | None:
    """Why a document without numbered headings has no tasks, naming its first section heading and line."""
    sections = [node for node in nodes if node.type == "heading" and heading_level(node) >= 2]
    if not sections:
        return None
    first = sections[0]
    return (
        f"none of its {len(sections)} section heading(s) is a task heading (the first, line "
        f"{first_line(first)}: {heading_text(first)!r})",
        first_line(first),
    )


def read_numbered(
    text: str, path: Path | str | None, parsed: ParsedPlan, run: Callable[[int, bool], ParsedPlan], phases: bool = True
) -> ParsedPlan:
    """A file without task headings (`parsed`), read by its numbered headings when they stand as tasks:
    `run(level, phases)` reads it with that level's numbered (or phase) headings as the tasks. Else `parsed`,
    saying why not. `phases`: a plan of `Phase N` headings only may be read by them."""
    nodes = read_blocks(text, text.split("\n")).nodes
    found = numbered_level(nodes, phases=phases)
    if found is None:
        parsed.refused = no_task_headings(nodes)
        return parsed
    by_number = run(found.level, found.phases)
    why = None if found.batches else refusal(found, by_number.tasks)  # `Batch N [LOW RISK]` says it is a task
    if why is not None:
        parsed.refused = (why, found.first_line)
        return parsed
    where = f"{path}:{found.first_line}" if path else f"line {found.first_line}"
    if found.batches:
        by_number.tasks = batches(by_number.tasks)
        read_as = f"the {found.count} 'Batch N' headings at level {found.level} are read as the tasks, in order"
    elif found.phases:
        read_as = f"the {found.count} 'Phase N' headings at level {found.level} are read as the tasks"
    else:
        read_as = f"the {found.count} numbered headings at level {found.level} are read as the tasks"
    by_number.warnings.insert(0, f"{where}: no 'Task N:' headings: {read_as}")
    return by_number


def batches(tasks: Sequence[Task]) -> list[Task]:
    """Batches run one after the other: each without a dependency of its own depends on the batch before. A batch
    whose heading has no title takes its first line when that is all emphasis (`*Add the session id*`)."""
    ordered: list[Task] = []
    for before, task in zip([None, *tasks], tasks, strict=False):
        update: dict[str, object] = {}
        if before is not None and not task.depends_on and not task.declared_independent:
            note = "the batch before: batches run in order"
            update["depends_on"] = [Dependency(task_id=before.id, note=note)]
            update["decision_log"] = [*task.decision_log, f"depends on task-{before.id}: {note}"]
        first = task.description.split("\n", 1)[0].strip()
        emphasis = _EMPHASIS.fullmatch(first)
        if emphasis is not None and _UNTITLED.fullmatch(task.title) is not None:  # `batch_heading`'s own title
            update["title"] = (emphasis.group(1) or emphasis.group(2)).strip()
        ordered.append(task.model_copy(update=update) if update else task)
    return ordered


_UNTITLED = re.compile(r"Batch \d{1,3} \([^()]*\)")
_EMPHASIS = re.compile(r"\*{1,2}([^*\n]{3,200})\*{1,2}|_{1,2}([^_\n]{3,200})_{1,2}")
