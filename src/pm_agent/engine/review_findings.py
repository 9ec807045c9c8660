"""The final review's findings: read leniently from what the reviewer wrote, refused with a reason.

The reviewer writes `docs/reviews/<plan-id>-final-review.md` with one fenced YAML block:

    ```yaml
    findings:
      - id: F1
        severity: high          # critical | high | medium | low | info
        file: src/calc/add.py
        line: 3
        finding: add() ignores its second argument
        fix: return a + b
    ```

or `findings: []` when the branch is clean. Read leniently: a bare list, keys in any case, the usual
synonyms (`description`, `issue`, `path`, `suggestion`, `blocker`, `minor`, ...), `file: a.py:12`,
`line: "12-14"`, ids made up when missing. Refused with the reason (the session is told and tries
again): no YAML to read, an item that is not a mapping, no finding text, an unknown severity.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal, cast

import yaml
from pydantic import BaseModel, ConfigDict

from pm_agent.errors import InputError

Severity = Literal["critical", "high", "medium", "low", "info"]
SEVERITIES: tuple[Severity, ...] = ("critical", "high", "medium", "low", "info")
_SEVERITY_WORDS: dict[str, Severity] = {
    **{s: s for s in SEVERITIES},
    "blocker": "critical",
    "severe": "critical",
    "major": "high",
    "error": "high",
    "moderate": "medium",
    "warning": "medium",
    "minor": "low",
    "nit": "info",
    "trivial": "info",
    "note": "info",
}
_KEYS = {
    "finding": ("finding", "description", "issue", "problem", "message", "text", "title"),
    "severity": ("severity", "level", "priority"),
    "file": ("file", "path", "location", "filename"),
    "line": ("line", "lines", "line_number", "lineno"),
    "fix": ("fix", "suggestion", "recommendation", "remedy", "suggested_fix"),
    "id": ("id", "ref", "key"),
}
_FENCE = re.compile(r"^(`{3,}|~{3,})[ \t]*([\w+-]*)[^\n]*\n(.*?)^\1[ \t]*$", re.MULTILINE | re.DOTALL)
_CLEAN_WORDS = re.compile(r"^\s*(none|no findings|clean|n/?a|-)\s*\.?\s*$", re.IGNORECASE)
_LINE = re.compile(r"\d+")
_FILE_LINE = re.compile(r"^(?P<file>[^\s:]+):(?P<line>\d+)(?:[-:]\d+)?$")


class ReviewFormatError(InputError):
    """The reviewer's findings cannot be read; the message says why, for the reviewer to correct."""


class Finding(BaseModel):
    """One finding of the final review."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    severity: Severity
    file: str = ""
    line: int | None = None
    finding: str
    fix: str = ""

    @property
    def where(self) -> str:
        """`file:line`, `file`, or `the branch`."""
        if not self.file:
            return "the branch"
        return f"{self.file}:{self.line}" if self.line else self.file

    def describe(self) -> str:
        """One line: `F1 (high) src/a.py:3: the finding`."""
        return f"{self.id} ({self.severity}) {self.where}: {self.finding}"


def read_findings(text: str) -> list[Finding]:
    """The findings in a review document (or bare YAML); raises ReviewFormatError with the reason."""
    data = _yaml_of(text)
    items = _items(data)
    found: list[Finding] = []
    problems: list[str] = []
    for index, item in enumerate(items, start=1):
        try:
            found.append(_finding(item, index))
        except ReviewFormatError as exc:
            problems.append(f"finding {index}: {exc}")
    if problems:
        raise ReviewFormatError("; ".join(problems))
    return _unique_ids(found)


def _yaml_of(text: str) -> Any:
    """The YAML the reviewer meant: the fenced block naming findings (or the only yaml one), else the text."""
    blocks = [(lang.lower(), body) for _, lang, body in _FENCE.findall(text)]
    chosen = [b for lang, b in blocks if "findings" in b.lower() and lang in ("yaml", "yml", "")]
    chosen = chosen or [b for lang, b in blocks if lang in ("yaml", "yml")]
    if len(chosen) > 1:
        raise ReviewFormatError(f"{len(chosen)} YAML blocks list findings; put them all in one `findings:` block")
    source = chosen[0] if chosen else text
    if not chosen and _CLEAN_WORDS.match(source):
        return []
    try:
        return yaml.safe_load(source)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        what = "the findings block" if chosen else "the review (no ```yaml block found)"
        raise ReviewFormatError(f"{what} is not valid YAML{where}: {getattr(exc, 'problem', exc)}") from None


def _items(data: Any) -> Sequence[Any]:
    if data is None:
        return []
    if isinstance(data, str):
        if _CLEAN_WORDS.match(data):
            return []
        raise ReviewFormatError("no findings list found: write a ```yaml block with `findings:` (or `findings: []`)")
    if isinstance(data, Mapping):
        lowered = {str(k).strip().lower(): v for k, v in data.items()}
        if "findings" not in lowered:
            if _key(lowered, "finding") is not None:  # one finding written without the list around it
                return [data]
            raise ReviewFormatError("the YAML has no `findings:` key (found: " + ", ".join(map(str, lowered)) + ")")
        return _items(lowered["findings"])
    if isinstance(data, list):
        return data
    raise ReviewFormatError(f"`findings` must be a list of mappings, not {type(data).__name__}")


def _key(item: Mapping[str, Any], name: str) -> Any:
    for alias in _KEYS[name]:
        if alias in item and item[alias] not in (None, ""):
            return item[alias]
    return None


def _finding(raw: Any, index: int) -> Finding:
    if isinstance(raw, str) and raw.strip():
        raise ReviewFormatError(f"{raw.strip()[:60]!r} is text; write a mapping with severity and finding")
    if not isinstance(raw, Mapping):
        raise ReviewFormatError(f"expected a mapping (id, severity, file, line, finding, fix), got {raw!r}")
    item = {str(k).strip().lower().replace(" ", "_").replace("-", "_"): v for k, v in raw.items()}
    text = _key(item, "finding")
    if text is None or not str(text).strip():
        raise ReviewFormatError("no `finding` text: say what is wrong")
    severity_raw = _key(item, "severity")
    if severity_raw is None:
        raise ReviewFormatError("no `severity`: one of " + ", ".join(SEVERITIES))
    severity = _SEVERITY_WORDS.get(str(severity_raw).strip().lower())
    if severity is None:
        raise ReviewFormatError(f"severity {severity_raw!r} is not one of " + ", ".join(SEVERITIES))
    file = str(_key(item, "file") or "").strip()
    line = _line(_key(item, "line"))
    match = _FILE_LINE.match(file)
    if match is not None:
        file, line = match["file"], line or int(match["line"])
    ident = str(_key(item, "id") or f"F{index}").strip()
    return Finding(
        id=ident,
        severity=severity,
        file=file,
        line=line,
        finding=str(text).strip(),
        fix=str(_key(item, "fix") or "").strip(),
    )


def _line(value: Any) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value if value > 0 else None
    match = _LINE.search(str(value))
    return int(match.group()) if match and int(match.group()) > 0 else None


def _unique_ids(found: list[Finding]) -> list[Finding]:
    seen: set[str] = set()
    out = []
    for n, f in enumerate(found, start=1):
        ident = f.id
        while ident in seen:
            ident = f"{f.id}-{n}"
            n += 1
        seen.add(ident)
        out.append(f if ident == f.id else f.model_copy(update={"id": ident}))
    return out


def dump_findings(findings: Sequence[Finding]) -> list[dict[str, Any]]:
    """As plain data (for events)."""
    return [f.model_dump() for f in findings]


def load_findings(data: Any) -> list[Finding]:
    """Back from `dump_findings`."""
    return [Finding.model_validate(item) for item in cast(list[Any], data or [])]


def format_help() -> str:
    """The format, as the reviewer's prompt shows it."""
    return (
        "```yaml\nfindings:\n  - id: F1\n    severity: high   # critical | high | medium | low | info\n"
        "    file: src/pkg/module.py\n    line: 12\n    finding: what is wrong, in one or two sentences\n"
        "    fix: what to change\n```\n"
        "Write `findings: []` in that block when you found nothing to change."
    )
