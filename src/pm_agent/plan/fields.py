"""Reading field values written by people: labels, task ids and references, file entries, tiers."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from pm_agent.plan.models import ExpectedFiles, Tier

# Label as written (lowercased, without ':' and extra spaces) -> field name.
LABELS: dict[str, str] = {
    "files": "files",
    "depends on": "depends_on",
    "depends": "depends_on",
    "blocked by": "depends_on",
    "tier": "tier",
    "risk tier": "tier",
    "ownership": "ownership",
    "owner": "ownership",
    "module": "ownership",
    "acceptance criteria": "acceptance_criteria",
    "acceptance": "acceptance_criteria",
    "non-goals": "non_goals",
    "non goals": "non_goals",
    "nongoals": "non_goals",
    "out of scope": "non_goals",
    "tests to add": "tests_to_add",
    "tests to run": "tests_to_run",
    "steps": "steps",
    "goal": "goal",
    "architecture": "architecture",
    "tech stack": "tech_stack",
    "stack": "tech_stack",
}

# Fields whose values are lists that may follow the label on the next lines.
LIST_FIELDS = frozenset(
    {"files", "depends_on", "acceptance_criteria", "non_goals", "tests_to_add", "tests_to_run", "steps"}
)

# `Create:` / `Modify:` ... in a Files list -> ExpectedFiles attribute.
FILE_KINDS: dict[str, str] = {
    "create": "create",
    "new": "create",
    "add": "create",
    "modify": "modify",
    "update": "modify",
    "edit": "modify",
    "change": "modify",
    "delete": "delete",
    "remove": "delete",
    "test": "test",
    "tests": "test",
}

_STEP = re.compile(r"^step\s+(?P<n>[0-9]+[a-z]?)\s*(?:[:：.)\-–—]\s*(?P<title>.*))?$", re.IGNORECASE)
# `Task 3: Title`, `Task 3a：Title`, `Task 12 — Title`, `Task 4. Title`; the id must hold a digit, so a
# heading such as `Task ownership: who does what` is not a task.
_TASK_HEADING = re.compile(
    r"^task\s+(?P<id>(?=[A-Za-z0-9._-]*\d)[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)"
    r"(?:\s*[:：]\s*|\s+[-–—]+\s+|\.\s+)(?P<title>\S.*)$",
    re.IGNORECASE,
)
_REF = re.compile(
    r"^(?:tasks?\s*[-_#]?\s*)?#?(?P<id>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)"
    r"(?P<rest>\s*(?:[(:：\-–—].*)?)$",
    re.IGNORECASE,
)
_REF_SPLIT = re.compile(r"\s*(?:,|;|&|\band\b)\s*", re.IGNORECASE)
_NONE = frozenset({"", "none", "nothing", "n/a", "na", "-", "—", "no", "no dependencies", "(none)"})
_RANGE = re.compile(r"^(?P<path>.+?):(?P<range>\d+(?:\s*[-–]\s*\d+)?)$")
_DATE_PREFIX = re.compile(r"^\d{4}-\d{2}-\d{2}[-_ .]*")


def normalize_label(text: str) -> str | None:
    """The field name for a label such as `**Depends on:**` or `Acceptance Criteria`, else None."""
    key = re.sub(r"\s+", " ", text.strip().rstrip(":：").strip()).lower()
    return LABELS.get(key)


def step_title(text: str) -> str | None:
    """`Step 3: Run the tests` -> `Run the tests`; None when the text is not a step."""
    match = _STEP.match(text.strip().rstrip("*").strip())
    if match is None:
        return None
    return (match.group("title") or "").strip()


def task_heading(text: str) -> tuple[str, str] | None:
    """`Task 3a: Title` (also `：`, ` — `, ` - ` or `.`) -> ("3a", "Title"); None otherwise."""
    match = _TASK_HEADING.match(text.strip())
    if match is None:
        return None
    return normalize_task_id(match.group("id")), match.group("title").strip()


def normalize_task_id(raw: str | int) -> str:
    """A task id as stored: `task-07` -> `07`, `Task 3` -> `3`, `3a` -> `3a`."""
    text = str(raw).strip()
    text = re.sub(r"^task[\s_-]*", "", text, flags=re.IGNORECASE)
    return text


def canonical_id(task_id: str) -> str:
    """The key used to match references: `task-` dropped, case-folded, leading zeros dropped (`07` ~ `7`)."""
    folded = normalize_task_id(task_id).casefold()
    match = re.match(r"^0*(\d+)(.*)$", folded)
    return match.group(1) + match.group(2) if match else folded


def parse_refs(value: str) -> list[str]:
    """`Task 2, Task 3` / `task-2 and 3` / `none` -> task ids; ValueError on text that is no reference."""
    text = value.strip().rstrip(".")
    if text.lower() in _NONE:
        return []
    refs: list[str] = []
    for piece in _REF_SPLIT.split(text):
        piece = piece.strip().strip("`")
        if not piece or piece.lower() in _NONE:
            continue
        match = _REF.match(piece)
        if match is None:
            raise ValueError(f"cannot read task reference {piece!r} (write e.g. 'Task 2, Task 3' or 'none')")
        refs.append(normalize_task_id(match.group("id")))
    return refs


def parse_tier(value: str) -> Tier:
    """`critical` / `CRITICAL - touches billing` -> Tier.CRITICAL; ValueError for anything else."""
    word = re.split(r"[\s,;:(—–-]+", value.strip().strip("`*").strip(), maxsplit=1)[0].lower()
    try:
        return Tier(word)
    except ValueError:
        raise ValueError(f"unknown tier {value.strip()!r} (expected critical, normal or low)") from None


def clean_path(raw: str) -> str:
    """A path as written in a plan -> a repository-relative POSIX path."""
    path = raw.strip().strip("`'\"").strip().rstrip(",;.")
    while path.startswith("./"):
        path = path[2:]
    return str(PurePosixPath(path)) if path else ""


def split_range(raw: str) -> tuple[str, str | None]:
    """`src/a.py:123-145` -> ("src/a.py", "123-145"); `src/a.py` -> ("src/a.py", None)."""
    match = _RANGE.match(raw.strip())
    if match is None:
        return raw.strip(), None
    return match.group("path"), re.sub(r"\s+", "", match.group("range")).replace("–", "-")


def add_file_entry(files: ExpectedFiles, text: str, code: tuple[str, ...]) -> bool:
    """Record one `Create: \\`path\\`` entry; False when the text is not a file entry."""
    kind_text, sep, rest = text.partition(":")
    if not sep:
        kind_text, sep, rest = text.partition("：")
    kind = FILE_KINDS.get(kind_text.strip().lower())
    if not sep or kind is None:
        return False
    raws = list(code) if code else [p for p in re.split(r"[,\s]+", rest.strip()) if p][:1]
    for raw in raws:
        path, line_range = split_range(raw)
        path = clean_path(path)
        if not path:
            continue
        add_path(files, kind, path)
        if kind == "modify" and line_range:
            files.modify_ranges[path] = line_range
    return bool(raws)


def add_path(files: ExpectedFiles, kind: str, path: str) -> None:
    """Append a path to one ExpectedFiles list, once."""
    bucket: list[str] = getattr(files, kind)
    if path not in bucket:
        bucket.append(path)


def plan_id_from_path(stem: str) -> str:
    """`2026-02-18-wellness-cbt` -> `wellness-cbt`: the file stem, date dropped, slugged."""
    text = _DATE_PREFIX.sub("", stem)
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug or "plan"
