"""Reading `Depends on` values as people write them: task references, the prose beside them, phases."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pm_agent.plan import fastpath
from pm_agent.plan.fields import FULL_WIDTH, TITLE_PAREN_WORDS, normalize_task_id

__all__ = [
    "Ref",
    "all_earlier",
    "consumed_refs",
    "names_tasks",
    "parse_refs",
    "phase_number",
    "phase_ref",
    "read_refs",
    "title_deps",
]

# A reference at the start of a piece: `Task 2`, `task-2`, `Tasks 2`, `#2`, `2`, `T-3a`; the rest is prose.
_REF_HEAD = re.compile(
    r"^(?P<prefix>(?:tasks?|任务)\s*[-_#]?\s*|#)?(?P<id>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)(?P<rest>.*)$",
    re.IGNORECASE | re.DOTALL,
)
# A reference inside prose: `needs the schema from Task 2`.
_REF_INSIDE = re.compile(r"(?:\btasks?|任务)\s*[-_#]?\s*#?(?P<id>\d[A-Za-z0-9._-]*[A-Za-z0-9]|\d)\b", re.IGNORECASE)
_REF_SEPARATORS = frozenset(",;&")
_SIMPLE_REF = re.compile(r"Task (\d{1,9})")
# `Task 3, Task 5` and `Task 3 (needs its cache)`: what the reading below makes of them, in one match.
_SIMPLE_REFS = re.compile(r"Task \d{1,9}(?:, Task \d{1,9})+")
_NOTED_REF = re.compile(r"Task (\d{1,9}) \(([A-Za-z0-9 ]*[A-Za-z0-9][A-Za-z0-9 ]*)\)")
_DIGITS = re.compile(r"\d+")
_LETTER = re.compile(r"[A-Z]")  # a lettered task's id (`Task A`: fields.task_heading)
_BRACKETED = re.compile(r"\s*(?:\([^()]*\))?\s*")
# `and` separates references (`Task 1 and Task 2`, `Tasks 1 and 2`), not prose (`GREEN and committed`).
_REF_START = re.compile(r"\s*(?:tasks?\b|任务|#|\d)", re.IGNORECASE)
_NONE = frozenset({"", "none", "nothing", "n/a", "na", "-", "—", "no", "no dependencies", "(none)", "无", "无依赖"})
# `Tasks 1–2`, `Task 3—5`: a range written with an en or em dash reads as `1-2`.
_DASH_RANGE = re.compile(r"(?<=\d)\s*[–—]\s*(?=\d)")
_NONE_WORD = re.compile(
    r"^(?:(?:none|nothing|n/a|no dependencies|no deps|independent)\b|无(?:依赖)?(?:$|\W))", re.IGNORECASE
)


@dataclass(frozen=True)
class Ref:
    """One task reference as written: the id, and any prose around it (`Task 2 (for the schema)`)."""

    task_id: str
    note: str = ""


def read_refs(value: str) -> list[Ref]:
    """References in a `Depends on` value, each with the prose next to it; [] for `none`.

    Prose is kept, not refused: `Task 1 GREEN passing` -> Ref("1", "GREEN passing"). ValueError
    only when no reference can be read at all.
    """
    if fastpath.ENABLED:
        stripped = value.strip()
        simple = _SIMPLE_REF.fullmatch(stripped)
        if simple is not None:  # `Task 12`, the commonest value: what the reading below gives it
            return [Ref(simple.group(1))]
        if _SIMPLE_REFS.fullmatch(stripped):
            return [Ref(task_id) for task_id in _DIGITS.findall(stripped)]
        noted = _NOTED_REF.fullmatch(stripped)
        if noted is not None and " and " not in stripped.lower():
            return [Ref(noted.group(1), noted.group(2).strip())]
    text = _dashes(value.translate(FULL_WIDTH)).strip().rstrip(".。").strip()
    if text.lower() in _NONE or _NONE_WORD.match(text):
        return []  # `None (runs beside Task 1 on purpose)`: the prose does not add references
    refs: list[Ref] = []
    pending: list[str] = []  # prose before the first reference
    unread: str | None = None
    pieces = _split_refs(text)
    for piece in pieces:
        found = _piece_refs(piece, alone=len(pieces) == 1)
        if not found:
            prose = piece.strip("`*_ ")
            if not prose or prose.lower() in _NONE:
                continue
            unread = unread or prose
            if refs:
                last = refs[-1]
                refs[-1] = Ref(last.task_id, _join(last.note, prose))
            else:
                pending.append(prose)
            continue
        if pending:
            found[0] = Ref(found[0].task_id, _join(" ".join(pending), found[0].note))
            pending = []
        refs.extend(found)
    if not refs:
        raise ValueError(f"cannot read task reference {unread or text!r} (write e.g. 'Task 2, Task 3' or 'none')")
    return refs


def _dashes(text: str) -> str:
    return _DASH_RANGE.sub("-", text) if "–" in text or "—" in text else text


# What a label weaker than `Depends on` (`Requires:`, `Prerequisites:`, `Blocks:`, `Consumes:`) takes as a task:
# an id with a number (`3`, `3a`, `1.2`, `1-3`, `T012`) or one capital letter (lettered plans); `Python 3.11`,
# `2FA` or `Docker` are what the task needs from elsewhere, not tasks.
_TASK_LIKE = re.compile(r"(?:[A-Za-z]{1,3}[-_]?)?\d+(?:[.-]\d+)*[a-z]?|[A-Z]")
# `[002] Request queue`: a numbered id in square brackets, then its note.
_BRACKET_REF = re.compile(r"\[#?((?:[A-Za-z]{1,3}[-_]?)?\d[A-Za-z0-9._-]*)\]\s*(.*)$", re.DOTALL)
# A piece that goes on a list of ids after `Tasks 1`: `2` in `Tasks 1 and 2`, `Tasks 1, 2`.
_BARE_ID = re.compile(r"#?\d+(?:[.-]\d+)*[a-z]?")


def names_tasks(refs: list[Ref]) -> bool:
    """Whether references a weaker label read are all task ids (see `_TASK_LIKE`): [] names none."""
    return bool(refs) and all(_TASK_LIKE.fullmatch(ref.task_id) for ref in refs)


def consumed_refs(value: str) -> list[Ref]:
    """The tasks a `Consumes:` line names with the word Task (`... exists (Task 1)`, `Tasks 1–2`, `Tasks 1 and 2`),
    each noted with its piece of the line; a bare number there (`3 fixtures`) is prose."""
    refs: list[Ref] = []
    after_task = False
    for piece in _split_refs(_dashes(value.translate(FULL_WIDTH)).strip().rstrip(".。")):
        ids = [match.group("id") for match in _REF_INSIDE.finditer(piece)]
        if not ids and after_task and _BARE_ID.fullmatch(piece.strip("`*_ ")):
            ids = [piece.strip("`*_ #")]
        after_task = bool(ids)
        refs.extend(Ref(normalize_task_id(task_id), f"consumes {piece.strip()}") for task_id in ids)
    return refs


# `all other tasks`, `All previous tasks complete`, `everything prior`, `所有其他任务`: every task before this one.
_ALL_EARLIER = re.compile(
    r"^(?:(?:all|every)\s+(?:of\s+)?(?:the\s+)?(?:other|previous|prior|earlier|preceding)\s+tasks?\b"
    r"|all\s+(?:the\s+)?tasks\s+(?:above|before\s+(?:this|it))\b|everything\s+(?:prior|before|above|earlier)\b"
    r"|所有(?:其他|其它|前置|前面的?|之前的?|以上)任务|(?:以上|前面|之前)的?所有任务)",
    re.IGNORECASE,
)


def all_earlier(value: str) -> bool:
    """Whether a `Depends on` value names every task before its own (`all previous tasks`, `所有其他任务`)."""
    return _ALL_EARLIER.match(value.translate(FULL_WIDTH).strip().strip("`*_").strip()) is not None


# `## Phase 2: Billing`, `## 阶段 1：包装器` group tasks; `Depends on: Phase 1 complete` names every task of one.
_PHASE = re.compile(r"^(?:phase|stage|阶段)\s*(?P<n>\d{1,3})(?![\d.])", re.IGNORECASE)
_PHASE_REF = re.compile(
    r"^(?:all\s+(?:of\s+)?)?(?:phase|stage|阶段)\s*(?P<n>\d{1,3})(?:\s*(?:tasks|complete[d]?|done|finished|全部)?)?"
    r"\s*(?:完成|结束|全部完成)?$",
    re.IGNORECASE,
)


def phase_number(heading: str) -> str | None:
    """`Phase 2: Billing` / `阶段 1：包装器` -> "2" / "1": the number of a heading that opens a group of tasks."""
    match = _PHASE.match(heading.strip())
    return match.group("n") if match else None


def phase_ref(value: str) -> str | None:
    """`Phase 1 complete` / `阶段 1 完成` / `Phase 2` -> the phase number a `Depends on` value names, else None."""
    match = _PHASE_REF.match(value.translate(FULL_WIDTH).strip().strip("`*").rstrip(".。").strip())
    return match.group("n") if match else None


def parse_refs(value: str) -> list[str]:
    """`Task 2, Task 3` / `task-2 and 3` / `none` -> task ids; ValueError on text with no reference at all."""
    return [ref.task_id for ref in read_refs(value)]


def _split_refs(text: str) -> list[str]:
    """Split at `,` `;` `&`, and at `+` and the word `and` before a reference; not inside brackets or code spans."""
    if not any(char in text for char in ",;&+") and " and " not in text.lower():
        return [text.strip()] if text.strip() else []  # nothing to split at: one piece (most values)
    pieces: list[str] = []
    depth, code, start, i = 0, False, 0, 0
    lowered = text.lower()
    while i < len(text):
        char = text[i]
        if char == "`":
            code = not code
        elif code:
            pass
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(depth - 1, 0)
        elif depth == 0 and (char in _REF_SEPARATORS or (char == "+" and _REF_START.match(text, i + 1))):
            pieces.append(text[start:i])
            start = i + 1
        elif depth == 0 and lowered.startswith(" and ", i) and _REF_START.match(text, i + 5):
            pieces.append(text[start:i])
            start = i + 5
            i += 4
        i += 1
    pieces.append(text[start:])
    return [p.strip() for p in pieces if p.strip()]


def _piece_refs(piece: str, *, alone: bool) -> list[Ref]:
    """The references one piece holds: a leading one (the rest is its note), else any `Task N` inside.

    A bare word without a digit is an id only when it is the whole value (`Depends on: login`), or one capital
    letter with nothing but a bracketed note (`Tasks A, B, C (all previous)`: plans whose tasks are lettered);
    otherwise it is prose (`Task 1 GREEN and committed`, `the parser task`, `I think`).
    """
    bracketed = _BRACKET_REF.match(piece.strip())
    if bracketed is not None:  # `[002] Request queue` (CCPM task files list their dependencies so)
        return [Ref(normalize_task_id(bracketed.group(1)), _note(bracketed.group(2)))]
    head = _REF_HEAD.match(piece.strip().strip("`").strip())
    if head is not None:
        task_id, note = head.group("id"), _note(head.group("rest"))
        lettered = _LETTER.fullmatch(task_id) is not None and _BRACKETED.fullmatch(head.group("rest")) is not None
        if head.group("prefix") or any(c.isdigit() for c in task_id) or (alone and not note) or lettered:
            return [Ref(normalize_task_id(task_id), note)]
    return [Ref(normalize_task_id(m.group("id")), _note(piece)) for m in _REF_INSIDE.finditer(piece)]


def _note(text: str) -> str:
    """Prose next to a reference, without the brackets, dashes and colons that introduce it."""
    note = text.strip().strip("`").strip()
    if note.startswith("("):
        depth = 0
        for index, char in enumerate(note):
            depth += {"(": 1, ")": -1}.get(char, 0)
            if depth == 0:
                note = f"{note[1:index].strip()} {note[index + 1 :].strip()}"
                break
    return note.strip().lstrip(":：-–—").strip().rstrip(".").strip()


# A bracket closing a task's title that says when the task runs: `(after Task 2)`, `(only if Task 2 fails)`.
_TITLE_WHEN = re.compile(rf"[(（](?P<word>{TITLE_PAREN_WORDS})\b\s*(?P<rest>[^()（）]*)[)）]$", re.IGNORECASE)
_CONDITIONAL = ("only", "unless", "if", "optional")
_NAMED = re.compile(r"(?:tasks?\b|任务|#)", re.IGNORECASE)  # a reference with the word Task (or `#`) before it


def title_deps(title: str, *, bare: bool = False) -> tuple[list[Ref], str | None]:
    """The tasks a bracket at the end of a task's title makes it wait for (`Deploy (requires Task 2 and Task 3)`),
    each noted as from the title; or that bracket's text when it makes the task conditional (`(only if Task 2 is
    not approved)`, `(optional)`), else None. Ids without the word Task count only when `bare` (`Task 4 (depends on
    1, 2): Title`, where nothing else can follow `depends on`; `(requires 3.11)` at a title's end is no task)."""
    if not title.endswith((")", "）")):
        return [], None  # most titles
    match = _TITLE_WHEN.search(title.rstrip())
    if match is None:
        return [], None
    if match.group("word").lower().startswith(_CONDITIONAL):
        return [], match.group(0)[1:-1].strip()
    rest = match.group("rest").strip()
    try:
        refs = read_refs(rest)
    except ValueError:
        return [], None  # `(after the SEO sweep)`: no task, and the title says it as it is
    if not names_tasks(refs) or not (_NAMED.match(rest) or (bare and not any(ref.note for ref in refs))):
        return [], None
    return [Ref(ref.task_id, f"from the title: {ref.note}" if ref.note else "from the title") for ref in refs], None


def _join(first: str, second: str) -> str:
    return f"{first}; {second}" if first and second else first or second
