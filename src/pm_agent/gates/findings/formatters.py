"""Format checks: the files ruff format, black, prettier, gofmt and rustfmt would rewrite, and those they cannot parse.

A format check reports files, not lines, so a finding is a file (code `format`, no line): a file that was already
unformatted on the baseline stays a pre-existing finding whatever the task does to it, and a file the task leaves
unformatted (new, or formatted on the baseline) is a new one. A file the formatter cannot parse is a finding of its
own (code `syntax`). Each count is checked against the tool's summary where it prints one (`2 files would be
reformatted`), so a cut output is not read as fewer files.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pm_agent.gates.findings._common import Ctx, Out, Raw, as_int

_UNFORMATTED = "would be reformatted: run the project's formatter on this file"

# ruff format --check: `Would reformat: a.py` (ruff 0.6), `unformatted: File would be reformatted` then
# ` --> a.py:1:8` (the full output of later versions), `a.py:1:8: unformatted: ...` (--output-format concise);
# a file it cannot parse: `error: Failed to parse a.py:1:7: msg`, `invalid-syntax: msg` then its arrow, or concise.
_RUFF_WOULD = re.compile(r"^Would reformat: (?P<path>.+)$")
_RUFF_CONCISE = re.compile(r"^(?P<path>\S.*?):(?P<line>\d+):\d+: (?P<code>[a-z][a-z-]*): (?P<msg>.*)$")
_RUFF_HEAD = re.compile(r"^(?P<code>[a-z][a-z-]*): (?P<msg>.*)$")
_RUFF_ARROW = re.compile(r"^\s*--> (?P<path>.+?):(?P<line>\d+):\d+$")
_RUFF_FAILED = re.compile(r"^error: Failed to parse (?P<path>.+?):(?P<line>\d+):\d+: (?P<msg>.*)$")
_RUFF_SUMMARY = re.compile(r"^(?P<n>\d+) files? would be reformatted|^\d+ files? already formatted$")


def parse_ruff_format(lines: Sequence[str], ctx: Ctx) -> Out:
    """`ruff format --check`: the files it would reformat and those it cannot parse, in any of its output forms."""
    out = Out()
    head: tuple[str, str, int] | None = None  # code, message, index of a full-output header line
    for index, line in enumerate(lines):
        previous, head = head, None
        if previous is not None and (arrow := _RUFF_ARROW.match(line)):
            _ruff_finding(out, ctx, arrow.group("path"), as_int(arrow.group("line")), *previous)
            continue
        if line.startswith("Would reformat: ") and (would := _RUFF_WOULD.match(line)):
            out.add(Raw(ctx.tool, ctx.path(would.group("path")), None, "format", _UNFORMATTED, at=index))
        elif line.startswith("error: Failed to parse ") and (failed := _RUFF_FAILED.match(line)):
            path = ctx.path(failed.group("path"))
            out.add(
                Raw(ctx.tool, path, as_int(failed.group("line")), "syntax", ctx.message(failed.group("msg")), at=index)
            )
        elif ": " in line and (concise := _RUFF_CONCISE.match(line)):
            code, msg = concise.group("code"), concise.group("msg")
            _ruff_finding(out, ctx, concise.group("path"), as_int(concise.group("line")), code, msg, index)
        elif head_match := _RUFF_HEAD.match(line):
            head = (head_match.group("code"), head_match.group("msg"), index)
        elif summary := _RUFF_SUMMARY.match(line):
            out.expected = int(summary.group("n") or 0)
    out.counted = sum(1 for raw in out.raws if raw.code == "format")
    return out


def _ruff_finding(out: Out, ctx: Ctx, path: str, line: int | None, code: str, msg: str, index: int) -> None:
    if code == "unformatted":
        out.add(Raw(ctx.tool, ctx.path(path), None, "format", _UNFORMATTED, at=index))
    else:  # invalid-syntax, or a diagnostic of a later version: kept with its own code
        out.add(
            Raw(
                ctx.tool,
                ctx.path(path),
                line,
                "syntax" if code == "invalid-syntax" else code,
                ctx.message(msg),
                at=index,
            )
        )


# black --check: `would reformat /abs/a.py`, a file it cannot parse (`error: cannot format a.py: Cannot parse: 1:6:
# ...`, or `error: cannot parse: a.py:1:6` in later versions), then `Oh no! ...` and
# `1 file would be reformatted, 2 files would be left unchanged, 1 file would fail to reformat.`
_BLACK_WOULD = re.compile(r"^would reformat (?P<path>.+)$")
_BLACK_CANNOT = re.compile(
    r"^error: cannot (?:format (?P<path>.+?): (?P<msg>.*)|parse: (?P<at>.+?):(?P<line>\d+):\d+)$"
)
_BLACK_SUMMARY = re.compile(r"^\d+ files? would (?:be reformatted|be left unchanged|fail to reformat)")
_BLACK_COUNT = re.compile(r"(\d+) files? would (be reformatted|fail to reformat)")


def parse_black(lines: Sequence[str], ctx: Ctx) -> Out:
    """`black --check`: the files it would reformat and those it cannot format."""
    out = Out()
    for index, line in enumerate(lines):
        if line.startswith("would reformat ") and (would := _BLACK_WOULD.match(line)):
            out.add(Raw(ctx.tool, ctx.path(would.group("path")), None, "format", _UNFORMATTED, at=index))
        elif line.startswith("error: cannot ") and (cannot := _BLACK_CANNOT.match(line)):
            path = cannot.group("path") or cannot.group("at")
            msg = cannot.group("msg") or "cannot parse"
            out.add(Raw(ctx.tool, ctx.path(path), as_int(cannot.group("line")), "syntax", ctx.message(msg), at=index))
        elif _BLACK_SUMMARY.match(line):
            out.expected = sum(int(n) for n, _ in _BLACK_COUNT.findall(line))
    return out


# prettier --check: `[warn] src/a.js` per file, then `[warn] Code style issues found in 2 files. Run Prettier with
# --write to fix.` (`in the above file`; prettier 2: `... Forgot to run Prettier?`); a file it cannot parse:
# `[error] src/b.js: SyntaxError: Unexpected token (1:7)` and its code frame (`[error] > 1 | ...`).
_PRETTIER_SUMMARY = re.compile(
    r"^\[warn\] Code style issues (?:were )?(?:found|detected) in (?:the above file|(?P<n>\d+) files)"
)
# A path without spaces: prettier warns in sentences too (`[warn] Ignored unknown option { tabs: true }.`).
_PRETTIER_WARN = re.compile(r"^\[warn\] (?P<path>\S+)$")
_PRETTIER_ERROR = re.compile(r"^\[error\] (?P<path>[^\s>|:][^:]*): (?P<msg>\w*Error\b.*?)(?: \((?P<line>\d+):\d+\))?$")


def parse_prettier(lines: Sequence[str], ctx: Ctx) -> Out:
    """`prettier --check`: the files it would reformat and those it cannot parse."""
    out = Out()
    for index, line in enumerate(lines):
        if not line.startswith("["):
            continue
        if summary := _PRETTIER_SUMMARY.match(line):
            out.expected = int(summary.group("n") or 1)
        elif warn := _PRETTIER_WARN.match(line):
            out.add(Raw(ctx.tool, ctx.path(warn.group("path")), None, "format", _UNFORMATTED, at=index))
        elif error := _PRETTIER_ERROR.match(line):
            path, row = ctx.path(error.group("path")), as_int(error.group("line"))
            out.add(Raw(ctx.tool, path, row, "syntax", ctx.message(error.group("msg")), at=index))
    out.counted = sum(1 for raw in out.raws if raw.code == "format")
    return out


# gofmt -l (as init writes it: `out=$(gofmt -l . 2>&1); printf '%s' "$out"; test -z "$out"`): a bare path per file it
# would reformat, and `a.go:2:8: expected ')', found 'EOF'` for a file it cannot parse.
_GOFMT_SYNTAX = re.compile(r"^(?P<path>\S.*?\.go):(?P<line>\d+):\d+: (?P<msg>.*)$")


def parse_gofmt(lines: Sequence[str], ctx: Ctx) -> Out:
    """`gofmt -l`: the files it lists and those it cannot parse; any other line makes the output unreadable."""
    out = Out()
    for index, raw_line in enumerate(lines):
        line = raw_line.strip()
        if not line:
            continue
        if syntax := _GOFMT_SYNTAX.match(line):
            path, row = ctx.path(syntax.group("path")), as_int(syntax.group("line"))
            out.add(Raw(ctx.tool, path, row, "syntax", ctx.message(syntax.group("msg")), at=index))
        elif line.endswith(".go") and ": " not in line:
            out.add(Raw(ctx.tool, ctx.path(line), None, "format", _UNFORMATTED, at=index))
        elif out.problem is None:
            # gofmt prints nothing else: a line such as `open x.go: permission denied` means the list is not whole.
            out.problem = f"an output line that is no file gofmt lists: {ctx.message(line)!r}"
    return out


# cargo fmt --check / rustfmt --check: `Diff in /abs/src/lib.rs:1:` (`... at line 1:` before rustfmt 1.6) before
# each changed hunk, and rustc-style errors (`error: this file contains an unclosed delimiter`, then
# ` --> src/main.rs:1:12`).
_RUST_DIFF = re.compile(r"^Diff in (?P<path>.+?)(?::\d+:| at line \d+:)$")
_RUST_ERROR = re.compile(r"^error(?:\[E\d+\])?: (?P<msg>.+)$")
_RUST_ARROW = re.compile(r"^\s*--> (?P<path>.+?):(?P<line>\d+):\d+$")


def parse_rustfmt(lines: Sequence[str], ctx: Ctx) -> Out:
    """`cargo fmt --check`: one finding per file with a diff, one per error rustfmt met; diff lines are skipped."""
    out = Out()
    seen: set[str] = set()
    error: tuple[str, int] | None = None  # message, index of the `error:` line
    for index, line in enumerate(lines):
        if error is not None:
            arrow = _RUST_ARROW.match(line)
            path, row = (ctx.path(arrow.group("path")), as_int(arrow.group("line"))) if arrow else (None, None)
            # An error with no file (`error: couldn't read ...`) is still one: nothing it hides passes unseen.
            out.add(Raw(ctx.tool, path, row, "syntax" if arrow else "error", ctx.message(error[0]), at=error[1]))
            error = None
            if arrow:
                continue
        if line.startswith("Diff in ") and (diff := _RUST_DIFF.match(line)):
            path = ctx.path(diff.group("path"))
            if path not in seen:
                seen.add(path)
                out.add(Raw(ctx.tool, path, None, "format", _UNFORMATTED, at=index))
        elif line.startswith("error") and (found := _RUST_ERROR.match(line)):
            error = (found.group("msg"), index)
    if error is not None:
        out.add(Raw(ctx.tool, None, None, "error", ctx.message(error[0]), at=error[1]))
    return out


# oxfmt --check: `src/a.js (0ms)` per file it would reformat, then `Format issues found in above 2 files. Run without
# `--check` to fix.`; a file it cannot parse: `  x Unexpected token` and then `   ,-[src/b.js:1:7]`.
_OXFMT_FILE = re.compile(r"^(?P<path>\S+) \(\d+(?:\.\d+)?[mµn]?s\)$")
_OXFMT_SUMMARY = re.compile(r"^Format issues found in above (?P<n>\d+) files?")
_OXFMT_ERROR = re.compile(r"^\s+x (?P<msg>.+)$")
_OXFMT_AT = re.compile(r"^\s+,-\[(?P<path>.+?):(?P<line>\d+):\d+\]$")


def parse_oxfmt(lines: Sequence[str], ctx: Ctx) -> Out:
    """`oxfmt --check`: the files it would reformat and those it cannot parse."""
    out = Out()
    error: tuple[str, int] | None = None  # message, index of the `  x ...` line
    for index, line in enumerate(lines):
        previous, error = error, None
        if previous is not None and (where := _OXFMT_AT.match(line)):
            path, row = ctx.path(where.group("path")), as_int(where.group("line"))
            out.add(Raw(ctx.tool, path, row, "syntax", ctx.message(previous[0]), at=previous[1]))
        elif found := _OXFMT_FILE.match(line):
            out.add(Raw(ctx.tool, ctx.path(found.group("path")), None, "format", _UNFORMATTED, at=index))
        elif summary := _OXFMT_SUMMARY.match(line):
            out.expected = int(summary.group("n"))
        elif failed := _OXFMT_ERROR.match(line):
            error = (failed.group("msg"), index)
    out.counted = sum(1 for raw in out.raws if raw.code == "format")
    return out


__all__ = ["parse_black", "parse_gofmt", "parse_oxfmt", "parse_prettier", "parse_ruff_format", "parse_rustfmt"]
