"""Spec Kit task lists (github/spec-kit's `tasks.md`): `- [ ] T012 [P] [US1] Create the model in src/models/x.py`
items under `## Phase N: ...` headings, instead of task headings.

Spec Kit wrote the items from a specification and a plan already analysed: each item names its action and its
files, and it is the unit checked off. So an item is its task's acceptance criterion (no analyst session to
work criteria out again), and its lines are the task's description.

A file with no task heading whose list items include unchecked `T<number>` items is read with each such item
as a task heading (`Task T012: Create the model ...`) one level below the heading holding it, its indented
continuation lines taken out of the list; the usual reader does the rest (tiers, references). Lines keep their
numbers. The order the format states becomes dependencies:

- phases run in order, each after the phase before it, except user-story phases (`Phase 3: User Story 1 ...`,
  or phases whose items all carry a `[US1]` label): each of those waits for the last phase that is not a story,
  and not for the other stories; the first phase after them waits for all of them;
- within a phase an item waits for the items before it, except that a run of `[P]` items ("different files,
  no dependencies") share what the first of them waits for;
- `depends on T012, T013` in an item (`(spec FR-2; depends on T012)` too) and `T014 blocks T022` lines (a
  Dependencies section) add theirs.

A checked item (`- [X] T001 ...`) is done by the plan's own account: no task, a warning names it, and nothing
waits for it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from pm_agent.plan.fields import add_path, prose_path
from pm_agent.plan.markdown import fence_after, heading_line, literal
from pm_agent.plan.models import Dependency, ExpectedFiles, Task
from pm_agent.plan.refs import phase_number

_ITEM = re.compile(r"^[-*+] \[(?P<mark>[ xX])\] (?P<id>T\d+)\b\s*(?P<rest>.*)$")
_LABEL = re.compile(r"^\[(?P<label>[^\]\s]{1,12})\]\s*")  # `[P]`, `[US1]`, `[Story]`
_ID_LIST = r"T\d+(?:\s*(?:,|and|&)\s*T\d+)*"
_AFTER = re.compile(rf"\s*\((?:depends on|after|needs)\s+{_ID_LIST}\)", re.IGNORECASE)
_DEPENDS = re.compile(rf"\b(?:depends on|after|needs)\s+({_ID_LIST})", re.IGNORECASE)
_BLOCKS = re.compile(rf"(?P<first>{_ID_LIST})\s+blocks?\s+(?P<then>{_ID_LIST})")
_IDS = re.compile(r"T\d+")
_STORY = re.compile(r"\buser\s+stor(?:y|ies)\b", re.IGNORECASE)
# An item's files are the paths it names outside its bracketed details (`(include the router from api/auth.py)`)
# and not as a reference (`per specs/quickstart.md`); `Create ...` creates them, a test file is its test.
_DETAIL = re.compile(r"\([^()]*\)")
_REFERENCE_WORDS = frozenset({"per", "see", "following", "like", "using", "via"})
# A file named without its folder counts only after one of these: in `Create backend README.md` the word before it
# is a folder the text does not spell, and the README at the top may be another file.
# (The item's first word, its verb, may stand before it too: `Write README.md`.)
_BARE_AFTER = frozenset({"", "in", "to", "into", "at", "the", "a", "new", "root", "with"})
_TEST_PATH = re.compile(r"(?:^|/)(?:tests?|__tests__)/|(?:^|/)test_[^/]*$|[._-](?:test|spec)\.[^/]*$")
# `- **US2** (Add Task): Depends on US1 (...)`, `**TASK-US6**: depends only on TASK-US2`, `Phase 4 depends on
# Phase 3`: a story (or phase) waits for another; its items then wait for that one's last items.
_UNIT = r"phase\s+\d+|[A-Za-z][\w-]*?\d+"
_UNIT_DEPENDS = re.compile(
    rf"^\s*(?:[-*+]\s+)?\**(?P<who>{_UNIT})\**(?:\s*\([^)]*\))?\s*:?.*?\bdepends?\s+(?:only\s+)?on\s+"
    rf"(?P<on>(?:{_UNIT})(?:\s*(?:,|\band\b|&)\s*(?:{_UNIT}))*)\b",
    re.IGNORECASE,
)
_UNIT_WORD = re.compile(_UNIT, re.IGNORECASE)
_STORY_NUMBER = re.compile(r"\buser\s+story\s+(\d+)\b", re.IGNORECASE)
_PHASE_LEVEL = 2  # `## Phase N`: a deeper heading (`### Tests for User Story 1`) stays within its phase
_TITLE_MAX = 120


def has_items(text: str) -> bool:
    """Whether the text may be a Spec Kit task list (a cheap look before `as_headings`)."""
    return "] T" in text and re.search(r"^[-*+] \[[ xX]\] T\d", text, re.MULTILINE) is not None


@dataclass
class _Item:
    task_id: str
    line: int
    title: str
    parallel: bool
    story: str | None
    raw: str  # the item's line as the plan has it (the task's body starts with it, not with the heading made of it)
    more: list[str] = field(default_factory=list)  # its continuation lines
    level: int = 2  # its heading's: one below the heading holding the item

    def text(self) -> str:
        """What the item says, without its labels: its title and its continuation lines."""
        return " ".join([self.title, *self.more])

    def heading(self) -> str:
        """The task heading the item stands for: its text, cut at ~120 characters."""
        title = self.text()
        if len(title) > _TITLE_MAX:
            title = title[: _TITLE_MAX - 1].rsplit(" ", 1)[0] + "…"
        return f"{'#' * self.level} Task {self.task_id}: {literal(title)}"

    def files(self) -> ExpectedFiles:
        """The files the item names (`Implement the service in src/services/task.py`)."""
        words = _DETAIL.sub(" ", self.text()).split()
        kind = "create" if words and words[0].lower() == "create" else "modify"
        files = ExpectedFiles()
        for index, (before, word) in enumerate(zip(["", *words], words, strict=False)):
            after = before.lower()
            path = None if after in _REFERENCE_WORDS else prose_path(word)
            if path is None or ("/" not in path and after not in _BARE_AFTER and index != 1):
                continue
            if _TEST_PATH.search(path):
                add_path(files, "test", path)
            else:  # a folder (`in src/components/ui/`) is changed, not made: it may be there already
                add_path(files, "modify" if word.rstrip(",;.)`").endswith("/") else kind, path)
        return files

    @property
    def after(self) -> list[str]:
        """The tasks it names with `depends on T001, T003` (anywhere in it: `(spec FR-2; depends on T001)`)."""
        text = " ".join([self.raw, *self.more])
        return [task for found in _DEPENDS.finditer(text) for task in _IDS.findall(found.group(1))]


@dataclass
class _Phase:
    heading: str
    items: list[_Item] = field(default_factory=list)

    def is_story(self) -> bool:
        return _STORY.search(self.heading) is not None or (
            bool(self.items) and all(item.story is not None for item in self.items)
        )


@dataclass
class Converted:
    """A Spec Kit task list as a heading plan: the text (same lines), the items by phase, the checked ones."""

    text: str
    phases: list[_Phase]
    checked: list[tuple[int, str]]
    blocks: dict[str, list[str]]  # `T014 blocks T022` lines: T022 -> [T014]
    units: dict[str, list[str]] = field(default_factory=dict)  # `US2: Depends on US1` lines: "US2" -> ["US1"]

    @property
    def made(self) -> int:
        return sum(len(phase.items) for phase in self.phases)

    def annotate(self, tasks: list[Task]) -> list[Task]:
        """The tasks with the order the format states as their dependencies, and their item's labels logged."""
        deps = self._order()
        for task_id, stated in self._unit_order().items():
            deps.setdefault(task_id, []).extend(stated)
        items = {item.line: item for phase in self.phases for item in phase.items}
        done = {task_id for _, task_id in self.checked}
        out: list[Task] = []
        for task in tasks:
            item = items.get(task.line)
            if item is None:
                out.append(task)
                continue
            log = [f"Spec Kit item {item.task_id}" + (" [P]" if item.parallel else "")
                   + (f" [{item.story}]" if item.story else "")]  # fmt: skip
            # A task named twice (by the order and by the item) is one dependency: resolving keeps the first.
            wanted = [*task.depends_on, *(Dependency(task_id=t, note=why) for t, why in deps.get(item.task_id, []))]
            for target in [*item.after, *self.blocks.get(item.task_id, [])]:
                if target in done:
                    log.append(f"depends on {target}, checked off in the plan: done")
                else:
                    wanted.append(Dependency(task_id=target, note="named in the item"))
            after_heading = task.body.partition("\n")[2]
            body = f"{item.raw}\n{after_heading}".rstrip("\n")
            update: dict[str, object] = {"depends_on": wanted, "body": body}
            named = item.files()
            if named.all_paths():  # Spec Kit names an item's files in its text, not in a Files list
                files = task.expected_files.model_copy(deep=True)
                for kind in ("create", "modify", "delete", "test"):
                    for path in getattr(named, kind):
                        add_path(files, kind, path)
                update["expected_files"] = files
            if not task.acceptance_criteria:  # the item is the unit Spec Kit checks off: what the review holds it to
                update["acceptance_criteria"] = [item.text()]
                log.append("acceptance criterion: the item as the plan states it")
            update["decision_log"] = [*task.decision_log, *log]
            out.append(task.model_copy(update=update))
        return out

    def _order(self) -> dict[str, list[tuple[str, str]]]:
        """Each item's dependencies from the phases' order and the `[P]` runs, with why."""
        deps: dict[str, list[tuple[str, str]]] = {}
        ends: list[tuple[_Phase, list[str]]] = []  # each phase with its last items (what the next one waits for)
        for phase in self.phases:
            if not phase.items:
                continue
            waits, run = _entry(phase, ends), []  # what the next item waits for; the [P] run under way
            for item in phase.items:
                if item.parallel:
                    mine = waits
                    run.append(item.task_id)
                else:
                    mine = [(t, "the [P] items before it") for t in run] if run else waits
                    run = []
                deps[item.task_id] = mine
                if not item.parallel:
                    waits = [(item.task_id, "the item before it in its phase")]
            ends.append((phase, run or [phase.items[-1].task_id]))
        return deps

    def _unit_order(self) -> dict[str, list[tuple[str, str]]]:
        """Each item's dependencies from `US2: Depends on US1` / `Phase 4 depends on Phase 3` lines: every item of
        the story (phase) waits for the last items of the one it names."""
        members: dict[str, list[_Phase]] = {}  # a story's or phase's key -> the phases holding its items
        for phase in self.phases:
            for key in _keys(phase):
                members.setdefault(key, []).append(phase)
        deps: dict[str, list[tuple[str, str]]] = {}
        for who, names in self.units.items():
            waiting = [item for phase in members.get(who, []) for item in phase.items]
            for name in names:
                earlier = [phase for phase in members.get(name, []) if phase.items]
                last = _last_items(earlier[-1]) if earlier else []
                for item in waiting:
                    if item.task_id not in last:
                        why = f"{_shown(who)} depends on {_shown(name)}"
                        deps.setdefault(item.task_id, []).extend((t, why) for t in last)
        return deps

    def refused(self) -> tuple[str, int] | None:
        """Why a list whose items are all checked has nothing to run, at its first item."""
        if self.made or not self.checked:
            return None
        (line, first), last = self.checked[0], self.checked[-1][1]
        return f"every Spec Kit item ({len(self.checked)}, {first} to {last}) is checked off: nothing to run", line

    def warnings(self, path: Path | str | None) -> list[str]:
        """What the plan's reader is told about a Spec Kit task list."""
        where = f"{path}" if path else "plan"
        said = [
            f"{where}: a Spec Kit task list: its {self.made} unchecked 'T001'-style items are read as the tasks,"
            " phases in order (user stories side by side), a run of [P] items side by side"
        ]
        said += [f"{where}:{line}: {task} is checked off in the plan: done, not run" for line, task in self.checked]
        return said


def _entry(phase: _Phase, ends: list[tuple[_Phase, list[str]]]) -> list[tuple[str, str]]:
    """What a phase's first items wait for: the phase before it; for a story, the last phase that is no story;
    after stories, every story since that phase."""
    if not ends:
        return []
    if phase.is_story():
        for earlier, last in reversed(ends):
            if not earlier.is_story():
                return [(t, f"its phase follows {earlier.heading!r}") for t in last]
        return []
    waited: list[tuple[str, str]] = []
    for earlier, last in reversed(ends):
        if not earlier.is_story():  # after stories, that phase is waited for through them
            return waited or [(t, f"its phase follows {earlier.heading!r}") for t in last]
        waited[:0] = [(t, f"its phase follows {earlier.heading!r}") for t in last]
    return waited


def _keys(phase: _Phase) -> set[str]:
    """The names a phase goes by in `X depends on Y` lines: `PHASE 4`, its items' story labels, `US1` for a
    `User Story 1` heading."""
    keys = {f"{label.upper()}" for label in (item.story for item in phase.items) if label is not None}
    number = phase_number(phase.heading)
    if number is not None:
        keys.add(f"PHASE {int(number)}")
    keys.update(f"US{int(n)}" for n in _STORY_NUMBER.findall(phase.heading))
    return keys


def _last_items(phase: _Phase) -> list[str]:
    """What waits for a phase waits for: its closing run of [P] items, else its last item (as `_order` has it)."""
    run: list[str] = []
    for item in phase.items:
        run = [*run, item.task_id] if item.parallel else []
    return run or [phase.items[-1].task_id]


def _unit_key(text: str) -> str:
    return " ".join(text.upper().split())


def _shown(key: str) -> str:
    return key.replace("PHASE ", "Phase ")


def as_headings(text: str) -> Converted:
    """The text with each unchecked `T012` item turned into a task heading one level below the heading holding it
    and its continuation lines taken out of the list (no line moves), with the items by phase; the checked items
    are left as they are."""
    out: list[str] = []
    phases = [_Phase("the start of the plan")]
    checked: list[tuple[int, str]] = []
    blocks: dict[str, list[str]] = {}
    units: dict[str, list[str]] = {}
    level, fence, current = 1, None, None
    for number, line in enumerate(text.split("\n"), start=1):
        if fence is not None:
            fence = fence_after(fence, line)
            out.append(line)
            continue
        if current is not None and line[:1] in (" ", "\t") and line.strip():
            current.more.append(line.strip())  # the item goes on: a paragraph of its task, not indented code
            out.append(line.strip())
            continue
        current = None
        fence = fence_after(None, line)
        heading = heading_line(line)
        if heading is not None:
            level = heading[0]
            if level <= _PHASE_LEVEL:
                phases.append(_Phase(heading[1]))
            out.append(line)
            continue
        for blocker, blocked in _blocking(line):
            blocks.setdefault(blocked, []).append(blocker)
        item = _ITEM.match(line)
        stated = _UNIT_DEPENDS.match(line) if item is None and "epend" in line else None
        if stated is not None:
            names = [_unit_key(name) for name in _UNIT_WORD.findall(stated.group("on"))]
            units.setdefault(_unit_key(stated.group("who")), []).extend(names)
        if item is None or item.group("mark") != " ":
            if item is not None:
                checked.append((number, item.group("id")))
            out.append(line)
            continue
        current = _read_item(item.group("id"), number, item.group("rest"), line)
        current.level = min(level + 1, 6)
        phases[-1].items.append(current)
        out.append("")  # the heading, once the item's continuation lines are known (they end its title)
    for phase in phases:
        for made in phase.items:
            out[made.line - 1] = made.heading()
    return Converted("\n".join(out), phases, checked, blocks, units)


def _blocking(line: str) -> list[tuple[str, str]]:
    """`T014, T015 blocks T022, T023` (a Dependencies section's line) as (blocker, blocked) pairs."""
    found = _BLOCKS.search(line) if "block" in line else None
    if found is None:
        return []
    return [(a, b) for a in _IDS.findall(found.group("first")) for b in _IDS.findall(found.group("then"))]


def _read_item(task_id: str, line: int, rest: str, raw: str) -> _Item:
    """An item's labels (`[P]`, `[US1]`) and its title, without a closing `(depends on ...)`."""
    parallel, story = False, None
    label = _LABEL.match(rest)
    while label is not None:
        name = label.group("label")
        if name.upper() == "P":
            parallel = True
        elif story is None:
            story = name
        rest = rest[label.end() :]
        label = _LABEL.match(rest)
    named = _AFTER.search(rest)
    if named is not None and not rest[named.end() :].strip():
        rest = rest[: named.start()]
    return _Item(task_id, line, rest.strip() or task_id, parallel, story, raw)
