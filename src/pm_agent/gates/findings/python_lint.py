"""Python linters and type checkers: mypy, pyright, ruff (concise and full), flake8, pylint.

Only what makes the tool fail is a finding: mypy notes, pyright informations and warnings (unless
`--warnings` makes them fail) are skipped.
Where the tool prints its own count (mypy, pyright, ruff) the parsed count is checked against it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pm_agent.gates.findings._common import Ctx, Out, Raw, as_int, located

_MYPY = re.compile(
    r"^(?P<path>[^\s:][^:]*?)(?::(?P<line>\d+))?(?::\d+)?(?::\d+:\d+)?: (?P<sev>error|note|warning): (?P<msg>.*)$"
)
_MYPY_CODE = re.compile(r"^(?P<msg>.*?)\s+\[(?P<code>[a-z][a-z0-9-]*)\]$")
_MYPY_FOUND = re.compile(r"^Found (\d+) errors? in \d+ files? \(")
_MYPY_SUCCESS = re.compile(r"^Success: no issues found")
_MYPY_WRAP_LIMIT = 5


@dataclass
class _MypyError:
    path: str
    line: int | None
    msg: str
    index: int
    wraps: int = 0

    def has_code(self) -> bool:
        return _MYPY_CODE.match(self.msg) is not None


def _mypy_raw(ctx: Ctx, err: _MypyError) -> Raw:
    code_match = _MYPY_CODE.match(err.msg)
    code = code_match.group("code") if code_match else None
    text = code_match.group("msg") if code_match else err.msg
    return Raw(ctx.tool, ctx.path(err.path), err.line, code, ctx.message(text), at=err.index)


def parse_mypy(lines: Sequence[str], ctx: Ctx) -> Out:
    """`path:line[:col]: error: message  [code]`; notes skipped; --pretty's wrapped messages joined."""
    out = Out()
    pending: _MypyError | None = None
    for index, line in enumerate(lines):
        match = _MYPY.match(line) if ": " in line else None
        found = None if match else _MYPY_FOUND.match(line)
        # --pretty wraps a long message onto unindented lines until its "[code]"; snippets are indented.
        wrapped = (
            pending is not None
            and match is None
            and found is None
            and line[:1].strip() != ""
            and not line.startswith(("mypy:", "Success:"))
            and pending.wraps < _MYPY_WRAP_LIMIT
            and not pending.has_code()
        )
        if pending is not None and wrapped:
            pending.msg, pending.wraps = f"{pending.msg} {line}", pending.wraps + 1
            continue
        if pending is not None and (match or found or line[:1].strip()):
            out.add(_mypy_raw(ctx, pending))
            pending = None
        if match and match.group("line") is None and not match.group("path").endswith((".py", ".pyi")):
            match = None  # "mypy: error: ..." is mypy's own usage or config error, not a finding
        if match and match.group("sev") == "error":
            pending = _MypyError(match.group("path"), as_int(match.group("line")), match.group("msg"), index)
        elif found or _MYPY_SUCCESS.match(line):
            out.expected = (out.expected or 0) + (int(found.group(1)) if found else 0)
    if pending is not None:
        out.add(_mypy_raw(ctx, pending))
    return out


_PYRIGHT = re.compile(
    r"^\s+(?P<path>\S.*?):(?P<line>\d+):(?P<col>\d+) - (?P<sev>error|warning|information): (?P<msg>.*)$"
)
_PYRIGHT_RULE = re.compile(r"^(?P<msg>.*?)\s*\((?P<code>report\w+)\)$")
_PYRIGHT_COUNT = re.compile(r"^(\d+) errors?, \d+ warnings?, \d+ informations?")


def parse_pyright(lines: Sequence[str], ctx: Ctx) -> Out:
    """`  /abs/a.py:3:5 - error: message` with detail lines below; the `(reportX)` rule ends the block."""
    out = Out()
    failing = ("error", "warning") if "--warnings" in ctx.command else ("error",)
    current: Raw | None = None
    for index, line in enumerate(lines):
        match = _PYRIGHT.match(line) if " - " in line else None
        if match:
            if current is not None:
                out.add(current)
            current = None
            if match.group("sev") not in failing:
                continue
            msg, code = match.group("msg"), None
            rule = _PYRIGHT_RULE.match(msg)
            if rule:
                msg, code = rule.group("msg"), rule.group("code")
            path = ctx.path(match.group("path"))
            current = Raw(ctx.tool, path, int(match.group("line")), code, ctx.message(msg), at=index)
            continue
        if current is not None and line[:1].isspace():  # detail lines, indented with no-break spaces too
            rule = _PYRIGHT_RULE.match(line) if current.code is None else None
            if rule:
                current = current._replace(code=rule.group("code"))
            continue
        if current is not None:
            out.add(current)
            current = None
        count = _PYRIGHT_COUNT.match(line)
        if count:
            out.expected = (out.expected or 0) + int(count.group(1))
    if current is not None:
        out.add(current)
    return out


_RUFF_CODE = r"(?P<code>[A-Z]{1,4}\d{1,4}|[a-z]+(?:-[a-z]+)+|SyntaxError)"
_RUFF_CONCISE = re.compile(rf"^(?P<path>\S.*?):(?P<line>\d+):(?P<col>\d+): {_RUFF_CODE}:?(?: \[\*\])? (?P<msg>.*)$")
_RUFF_HEAD = re.compile(rf"^{_RUFF_CODE}:?(?: \[\*\])? (?P<msg>.*)$")
_RUFF_ARROW = re.compile(r"^\s*--> (?P<path>.+?):(?P<line>\d+):(?P<col>\d+)$")
_RUFF_FOUND = re.compile(r"^Found (?P<n>\d+) errors?(?: \(\d+ fixed, (?P<left>\d+) remaining\))?\.")


def parse_ruff(lines: Sequence[str], ctx: Ctx) -> Out:
    """ruff's concise `path:line:col: F401 [*] message` and its full format (`F401 ...` then ` --> path:1:8`)."""
    out = Out()
    head: tuple[str, str, int] | None = None  # code, message, index of the header line
    for index, line in enumerate(lines):
        concise = _RUFF_CONCISE.match(line) if ": " in line else None
        if concise:
            path = ctx.path(concise.group("path"))
            line_no, code, msg = int(concise.group("line")), concise.group("code"), concise.group("msg")
            out.add(Raw(ctx.tool, path, line_no, code, ctx.message(msg), at=index))
            head = None
            continue
        if head is not None:
            arrow = _RUFF_ARROW.match(line)
            if arrow:
                path = ctx.path(arrow.group("path"))
                out.add(Raw(ctx.tool, path, int(arrow.group("line")), head[0], ctx.message(head[1]), at=head[2]))
            head = None
            if arrow:
                continue
        full = _RUFF_HEAD.match(line) if line[:1].isalpha() else None
        if full:
            head = (full.group("code"), full.group("msg"), index)
            continue
        found = _RUFF_FOUND.match(line) if line.startswith("Found ") else None
        if found:
            out.expected = (out.expected or 0) + int(found.group("left") or found.group("n"))
        elif line.startswith("All checks passed!"):
            out.expected = out.expected or 0
    return out


_FLAKE8 = re.compile(r"^(?P<path>\S.*?):(?P<line>\d+):(?P<col>\d+): (?P<code>[A-Z]{1,4}\d{1,4}) (?P<msg>.*)$")


def parse_flake8(lines: Sequence[str], ctx: Ctx) -> Out:
    """flake8's `path:line:col: E501 message` (pycodestyle, pyflakes and plugins)."""
    out = Out()
    for index, line in enumerate(lines):
        match = _FLAKE8.match(line) if ": " in line else None
        if match:
            out.add(located(ctx, match, match.group("code"), index))
    return out


_PYLINT_CODE = r"(?P<code>[CRWEFI]\d{4})"
_PYLINT = re.compile(rf"^(?P<path>\S.*?):(?P<line>\d+):(?P<col>\d+): {_PYLINT_CODE}: (?P<msg>.*)$")
_PYLINT_PARSEABLE = re.compile(
    rf"^(?P<path>\S.*?):(?P<line>\d+): \[{_PYLINT_CODE}(?:\((?P<symbol>[a-z0-9-]+)\))?, [^\]]*\] (?P<msg>.*)$"
)


def parse_pylint(lines: Sequence[str], ctx: Ctx) -> Out:
    """pylint's default `path:line:col: C0114: message (symbol)` and `--output-format=parseable`."""
    out = Out()
    for index, line in enumerate(lines):
        if ": " not in line:
            continue
        match = _PYLINT.match(line)
        msg = match.group("msg") if match else ""
        if match is None:
            match = _PYLINT_PARSEABLE.match(line)
            if match is None:
                continue
            symbol = match.group("symbol")
            msg = f"{match.group('msg')} ({symbol})" if symbol else match.group("msg")
        path, line_no = ctx.path(match.group("path")), int(match.group("line"))
        out.add(Raw(ctx.tool, path, line_no, match.group("code"), ctx.message(msg), at=index))
    return out


__all__ = ["parse_flake8", "parse_mypy", "parse_pylint", "parse_pyright", "parse_ruff"]
