"""Unified diff parsing: the added and removed lines of each file, with their line numbers.

Fed with `git diff -U0` output (context lines are tolerated too). Added lines carry their number in
the new file, removed lines their number in the old file. Binary files contribute no lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_HUNK = re.compile(r"^@@ -(?P<old>\d+)(?:,\d+)? \+(?P<new>\d+)(?:,\d+)? @@")
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", '"': '"', "\\": "\\"}

Lines = dict[str, list[tuple[int, str]]]


@dataclass
class DiffLines:
    """Lines a diff adds (numbered in the new file) and removes (numbered in the old file), per path."""

    added: Lines = field(default_factory=dict)
    removed: Lines = field(default_factory=dict)


def unquote_path(raw: str) -> str:
    """Undo git's C-style quoting of a path (`"a\\tb"`), including octal-escaped UTF-8 bytes."""
    if not (len(raw) >= 2 and raw.startswith('"') and raw.endswith('"')):
        return raw
    body = raw[1:-1]
    out = bytearray()
    i = 0
    while i < len(body):
        char = body[i]
        if char != "\\" or i + 1 >= len(body):
            out += char.encode("utf-8")
            i += 1
            continue
        octal = body[i + 1 : i + 4]
        if len(octal) == 3 and all(c in "01234567" for c in octal):
            out.append(int(octal, 8) & 0xFF)
            i += 4
        else:
            out += _ESCAPES.get(body[i + 1], body[i + 1]).encode("utf-8")
            i += 2
    return out.decode("utf-8", errors="replace")


def _header_path(line: str, prefix: str) -> str | None:
    """The path of a `--- a/x` / `+++ b/x` line, None for /dev/null."""
    raw = line[4:].rstrip("\n")
    if "\t" in raw and not raw.startswith('"'):
        raw = raw.split("\t", 1)[0]
    raw = unquote_path(raw)
    if raw == "/dev/null":
        return None
    return raw[len(prefix) :] if raw.startswith(prefix) else raw


def parse_unified_diff(text: str) -> DiffLines:
    """Parse a unified diff (as `git diff --src-prefix=a/ --dst-prefix=b/` prints it)."""
    result = DiffLines()
    old_path: str | None = None
    new_path: str | None = None
    old_no = new_no = 0
    in_hunk = False
    for line in text.splitlines():
        if line.startswith("diff --git "):
            in_hunk = False
            old_path = new_path = None
            continue
        if not in_hunk and line.startswith("--- "):
            old_path = _header_path(line, "a/")
            continue
        if not in_hunk and line.startswith("+++ "):
            new_path = _header_path(line, "b/")
            continue
        match = _HUNK.match(line)
        if match:
            in_hunk = True
            old_no, new_no = int(match["old"]), int(match["new"])
            continue
        if not in_hunk or not line:
            continue
        tag, body = line[0], line[1:]
        if tag == "+":
            if new_path is not None:
                result.added.setdefault(new_path, []).append((new_no, body))
            new_no += 1
        elif tag == "-":
            if old_path is not None:
                result.removed.setdefault(old_path, []).append((old_no, body))
            old_no += 1
        elif tag == " ":
            old_no += 1
            new_no += 1
    return result
