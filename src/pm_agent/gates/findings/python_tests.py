"""Failing tests from pytest and unittest output (Django's runner prints unittest's format).

pytest: the short summary (`FAILED id - message`, `ERROR id`, printed by default and with -ra/-rA),
else the verbose result lines (`id FAILED`, with -v and -rN), else the FAILURES/ERRORS section titles
(`____ test_x ____`, ids without a path). The counts are checked against pytest's closing line, so an
output cut at the top is reported as not parsed rather than as fewer failures.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pm_agent.gates.findings._common import Ctx, Out, Raw

_PYTEST_SECTION = re.compile(r"^={3,} (?P<name>[A-Za-z][\w ]*?) ={3,}$")
_PYTEST_TITLE = re.compile(r"^_{3,} (?P<title>.+?) _{3,}$")
_PYTEST_VERBOSE = re.compile(r"^(?P<id>\S+?::.*?) (?P<status>FAILED|ERROR)(?: +\[ *\d+%\])?$")
_PYTEST_CLOSING = re.compile(r"^=*\s*(?P<body>(?:\d+ \w+(?: \w+)?, )*\d+ \w+(?: \w+)?) in [\d.]+s\b")
_PYTEST_COUNT = re.compile(r"(\d+) (failed|errors?)\b")


def _summary_entry(line: str) -> tuple[str, str, str] | None:
    """`FAILED tests/a.py::t[x - y] - msg` -> (status, id, msg); the id ends at the first " - " outside brackets."""
    status, _, rest = line.partition(" ")
    if status not in ("FAILED", "ERROR") or not rest or rest[0].isspace():
        return None
    depth = 0
    for i, ch in enumerate(rest):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth = max(depth - 1, 0)
        elif depth == 0 and ch == " " and rest.startswith(" - ", i):
            return status, rest[:i], rest[i + 3 :]
    return status, rest, ""


def _looks_like_node_id(node_id: str) -> bool:
    head = node_id.split("::", 1)[0]
    return "::" in node_id or head.endswith(".py") or "/" in head


def _title_id(title: str) -> tuple[str, str]:
    """A section title -> (status, id): "ERROR collecting a.py" -> ERROR a.py; "test_x" -> FAILED test_x."""
    for prefix in ("ERROR collecting ", "ERROR at setup of ", "ERROR at teardown of "):
        if title.startswith(prefix):
            return "ERROR", title[len(prefix) :]
    return "FAILED", title


def parse_pytest(lines: Sequence[str], ctx: Ctx) -> Out:
    """pytest's failing and erroring tests (see the module docstring for the three sources)."""
    summary: list[Raw] = []
    verbose: list[Raw] = []
    titles: list[Raw] = []
    section = ""
    expected: int | None = None
    crashed = False
    for index, line in enumerate(lines):
        if line.startswith("INTERNALERROR>"):
            crashed = True
            continue
        if line.startswith("="):
            sec = _PYTEST_SECTION.match(line)
            if sec:
                section = sec.group("name")
        if line.startswith(("FAILED ", "ERROR ")):
            entry = _summary_entry(line)
            if entry and _looks_like_node_id(entry[1]):
                status, node_id, msg = entry
                summary.append(_test_raw(ctx, status, node_id, msg, index))
                continue
        if line.startswith("_") and section in ("FAILURES", "ERRORS"):
            title = _PYTEST_TITLE.match(line)
            if title:
                status, node_id = _title_id(title.group("title"))
                titles.append(_test_raw(ctx, status, node_id, "", index))
                continue
        if "::" in line and line.endswith(("FAILED", "ERROR", "%]")):
            ver = _PYTEST_VERBOSE.match(line)
            if ver:
                verbose.append(_test_raw(ctx, ver.group("status"), ver.group("id"), "", index))
                continue
        closed = _PYTEST_CLOSING.match(line) if " in " in line else None
        if closed:  # summed: a command may run pytest more than once
            expected = (expected or 0) + sum(int(n) for n, _ in _PYTEST_COUNT.findall(closed.group("body")))
    out = Out(expected=expected)
    for raw in summary or verbose or titles:
        out.add(raw)
    if crashed:
        out.problem = "pytest reported an INTERNALERROR"
    elif expected is None and out.raws:
        out.problem = "pytest's closing counts line is missing (killed, or output cut at the end?)"
    return out


def _test_raw(ctx: Ctx, status: str, node_id: str, message: str, index: int) -> Raw:
    node_id = node_id.strip()
    head = node_id.split("::", 1)[0]
    path = ctx.path(head) if head.endswith(".py") else None
    if path is not None and head != node_id:
        node_id = path + node_id[len(head) :]
    elif path is not None:
        node_id = path
    return Raw(ctx.tool, path, None, status, ctx.message(message), test_id=node_id, at=index)


_UT_HEADER = re.compile(
    r"^(?P<status>FAIL|ERROR|UNEXPECTED SUCCESS): (?P<name>\S+) \((?P<where>[^)]*)\)(?P<sub> \(.*\))?$"
)
_UT_RULE = re.compile(r"^(?:=|-){20,}$")
_UT_CLOSING = re.compile(r"^FAILED \((?P<body>[^)]*)\)$")
_UT_COUNT = re.compile(r"(failures|errors|unexpected successes)=(\d+)")


def parse_unittest(lines: Sequence[str], ctx: Ctx) -> Out:
    """unittest's `FAIL: test_x (mod.Class.test_x)` / `ERROR:` blocks; the message is the block's last line."""
    out = Out()
    pending: Raw | None = None
    last = ""
    for index, line in enumerate(lines):
        header = _UT_HEADER.match(line) if line[:1] in "FEU" else None
        if header:
            if pending is not None:
                out.add(pending._replace(message=ctx.message(last)))
            name, where = header.group("name"), header.group("where")
            # Python 3.11+ prints the full id in the parentheses; older versions print only the class.
            test_id = where if where.endswith("." + name) or where == name else f"{where}.{name}"
            test_id += header.group("sub") or ""
            pending, last = Raw(ctx.tool, None, None, header.group("status"), "", test_id, index), ""
            continue
        if pending is not None and _UT_RULE.match(line):
            if last:  # the rule that closes a block (the one under the header comes before any text)
                out.add(pending._replace(message=ctx.message(last)))
                pending, last = None, ""
            continue
        if pending is not None and line.strip():
            last = line
        closing = _UT_CLOSING.match(line) if line.startswith("FAILED (") else None
        if closing:
            out.expected = sum(int(n) for _, n in _UT_COUNT.findall(closing.group("body")))
    if pending is not None:
        out.add(pending._replace(message=ctx.message(last)))
    return out


__all__ = ["parse_pytest", "parse_unittest"]
