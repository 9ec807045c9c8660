"""JavaScript and TypeScript: eslint (stylish, unix, compact formats), tsc (plain and --pretty) and biome.

eslint warnings do not make eslint fail, so only errors are findings (warnings too under
--max-warnings); its summary count is checked against errors and warnings parsed together. biome's
warnings do not fail it either: its errors (lint, format, parse) are the findings.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pm_agent.gates.findings._common import Ctx, Out, Raw, as_int

_STYLISH_ROW = re.compile(r"^\s+(?P<line>\d+):(?P<col>\d+)\s+(?P<sev>error|warning)\s+(?P<rest>.*)$")
_STYLISH_RULE = re.compile(r"^(?P<msg>.*?)\s{2,}(?P<rule>@?[\w/.-]+)$")
_STYLISH_SUMMARY = re.compile(r"^✖ (?P<n>\d+) problems? \((?P<errors>\d+) errors?, (?P<warnings>\d+) warnings?\)")
_UNIX = re.compile(
    r"^(?P<path>\S.*?):(?P<line>\d+):(?P<col>\d+): (?P<msg>.*) \[(?P<sev>Error|Warning)(?:/(?P<rule>[^\]]+))?\]$"
)
_COMPACT = re.compile(
    r"^(?P<path>\S.*?): line (?P<line>\d+), col (?P<col>\d+), (?P<sev>Error|Warning) - "
    r"(?P<msg>.*?)(?: \((?P<rule>@?[\w/.-]+)\))?$"
)
_PROBLEMS = re.compile(r"^(?P<n>\d+) problems?$")


def parse_eslint(lines: Sequence[str], ctx: Ctx) -> Out:
    """eslint's default stylish format (a file line, then `  3:5  error  message  rule`), unix and compact."""
    out = Out(counted=0)
    failing = ("error", "warning") if "--max-warnings" in ctx.command else ("error",)
    path: str | None = None
    seen = 0  # errors and warnings, to check against eslint's own count
    for index, line in enumerate(lines):
        row = _STYLISH_ROW.match(line) if line[:1].isspace() else None
        if row:
            seen += 1
            if row.group("sev") in failing:
                rest = row.group("rest")
                rule = _STYLISH_RULE.match(rest)
                msg, code = (rule.group("msg"), rule.group("rule")) if rule else (rest, None)
                out.add(Raw(ctx.tool, path, int(row.group("line")), code, ctx.message(msg), at=index))
            continue
        flat = _UNIX.match(line) or _COMPACT.match(line) if ":" in line else None
        if flat:
            seen += 1
            if flat.group("sev").lower() in failing:
                file_path = ctx.path(flat.group("path"))
                code, msg = flat.group("rule"), ctx.message(flat.group("msg"))
                out.add(Raw(ctx.tool, file_path, int(flat.group("line")), code, msg, at=index))
            continue
        summary = _STYLISH_SUMMARY.match(line) or _PROBLEMS.match(line)
        if summary:
            out.expected = (out.expected or 0) + int(summary.group("n"))
        elif line and not line[0].isspace():
            path = ctx.path(line)  # stylish's file line: the (absolute) path of the rows below
    out.counted = seen
    return out


_TSC_PLAIN = re.compile(
    r"^(?P<path>[^\s(][^(]*)\((?P<line>\d+),(?P<col>\d+)\): (?P<sev>error|warning) (?P<code>TS\d+): (?P<msg>.*)$"
)
_TSC_PRETTY = re.compile(
    r"^(?P<path>\S.*?):(?P<line>\d+):(?P<col>\d+) - (?P<sev>error|warning) (?P<code>TS\d+): (?P<msg>.*)$"
)
_TSC_GLOBAL = re.compile(r"^(?P<sev>error|warning) (?P<code>TS\d+): (?P<msg>.*)$")
_TSC_FOUND = re.compile(r"^Found (?P<n>\d+) errors?\b")


def parse_tsc(lines: Sequence[str], ctx: Ctx) -> Out:
    """`src/a.ts(3,5): error TS2322: message`, --pretty's `src/a.ts:3:5 - error TS2322: ...`, and global errors."""
    out = Out()
    for index, line in enumerate(lines):
        if "TS" not in line:
            found = _TSC_FOUND.match(line) if line.startswith("Found ") else None
            if found:
                out.expected = (out.expected or 0) + int(found.group("n"))
            continue
        match = _TSC_PLAIN.match(line) or _TSC_PRETTY.match(line) or _TSC_GLOBAL.match(line)
        if match is None or match.group("sev") != "error":
            continue
        groups = match.groupdict()
        path = ctx.path(groups["path"]) if groups.get("path") else None
        line_no = int(groups["line"]) if groups.get("line") else None
        out.add(Raw(ctx.tool, path, line_no, match.group("code"), ctx.message(match.group("msg")), at=index))
    return out


# biome (check, lint, format, ci): a diagnostic is a header `src/a.js:3:8 lint/suspicious/noDoubleEquals  FIXABLE  ━━━`
# (`src/a.js format ━━━` for a file it would reformat), then its severity and message: `  × ...` an error, `  ! ...` a
# warning, `  i ...` information. `Found 2 errors.` counts the errors; the closing `check ━━━` block has no file.
_BIOME_HEAD = re.compile(r"^(?P<path>[^\s:]+)(?::(?P<line>\d+):\d+)? (?P<code>[\w/]+)(?:\s+FIXABLE)?\s+━{3,}$")
_BIOME_SEVERITY = re.compile(r"^\s+(?P<sev>[×!i]) (?P<msg>.*)$")
_BIOME_FOUND = re.compile(r"^Found (?P<n>\d+) errors?\.")


def parse_biome(lines: Sequence[str], ctx: Ctx) -> Out:
    """biome's error diagnostics; one printed twice (a parse error seen by two passes, counted once) is one."""
    out = Out()
    seen: set[tuple[str, int | None, str, str]] = set()
    head: tuple[re.Match[str], int] | None = None
    for index, line in enumerate(lines):
        if "━━━" in line and (found := _BIOME_HEAD.match(line)):
            head = (found, index)
        elif head is not None and line.strip():
            severity = _BIOME_SEVERITY.match(line)
            match, at = head
            head = None
            if severity is None or severity.group("sev") != "×":
                continue
            path, row = ctx.path(match.group("path")), as_int(match.group("line"))
            key = (path, row, match.group("code"), ctx.message(severity.group("msg")))
            if key not in seen:
                seen.add(key)
                out.add(Raw(ctx.tool, path, row, key[2], key[3], at=at))
        elif line.startswith("Found ") and (total := _BIOME_FOUND.match(line)):
            out.expected = int(total.group("n"))
    return out


__all__ = ["parse_biome", "parse_eslint", "parse_tsc"]
