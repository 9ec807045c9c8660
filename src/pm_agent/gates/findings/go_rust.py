"""Go (go vet / go build diagnostics, go test failures) and Rust (cargo and clippy diagnostics, cargo test).

Rust warnings do not fail a build, so only errors are findings (with `-D warnings` the lints are printed
as errors). A rustc lint names itself only on its first occurrence (`#[warn(unused_variables)]`), so
that note is not used as the code: the code comes from `error[E0308]` or clippy's help link, which
every occurrence carries, and a finding keeps its key whichever occurrence comes first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pm_agent.gates.findings._common import Ctx, Out, Raw, as_int

_GO_DIAG = re.compile(r"^(?:vet: )?(?P<path>[^\s:]+\.go):(?P<line>\d+)(?::(?P<col>\d+))?: (?P<msg>.*)$")
_GO_STATICCHECK_CODE = re.compile(r"^(?P<msg>.*) \((?P<code>[A-Z]{1,4}\d{3,4})\)$")


def _go_diag(ctx: Ctx, line: str, index: int) -> Raw | None:
    match = _GO_DIAG.match(line)
    if match is None:
        return None
    msg, code = match.group("msg"), None
    coded = _GO_STATICCHECK_CODE.match(msg)
    if coded:
        msg, code = coded.group("msg"), coded.group("code")
    path = ctx.path(match.group("path"))
    return Raw(ctx.tool, path, as_int(match.group("line")), code, ctx.message(msg), at=index)


def parse_go_vet(lines: Sequence[str], ctx: Ctx) -> Out:
    """`./main.go:8:2: message` lines under `# pkg` headers (go vet, go build, staticcheck)."""
    out = Out()
    for index, line in enumerate(lines):
        raw = _go_diag(ctx, line, index) if ".go:" in line else None
        if raw is not None:
            out.add(raw)
    return out


_GO_FAIL = re.compile(r"^\s*--- FAIL: (?P<name>\S+)")
_GO_PKG = re.compile(r"^(?P<status>FAIL|ok)\s+(?P<pkg>\S+)(?:\s+\[(?P<why>[^\]]+)\])?")


def parse_go_test(lines: Sequence[str], ctx: Ctx) -> Out:
    """`--- FAIL: TestX` (subtests too) as `pkg::TestX`; packages that fail to build; their compile errors."""
    out = Out()
    pending: list[Raw] = []  # tests of the package whose FAIL/ok line has not come yet
    for index, line in enumerate(lines):
        fail = _GO_FAIL.match(line) if "--- FAIL: " in line else None
        if fail:
            name = fail.group("name")
            pending.append(Raw(ctx.tool, None, None, "FAIL", "", name, index))
            continue
        pkg_line = _GO_PKG.match(line) if line.startswith(("FAIL", "ok")) else None
        if pkg_line:
            pkg = pkg_line.group("pkg")
            for raw in pending:
                out.add(raw._replace(test_id=f"{pkg}::{raw.test_id}"))
            pending = []
            why = pkg_line.group("why")
            if pkg_line.group("status") == "FAIL" and why is not None:
                out.add(Raw(ctx.tool, None, None, "FAIL", "", f"{pkg} [{why}]", index))
            continue
        diag = _go_diag(ctx, line, index) if ".go:" in line and not line[:1].isspace() else None
        if diag is not None:
            out.add(diag)
    for raw in pending:  # output cut before the package line: the test name alone
        out.add(raw)
    return out


_RUST_HEAD = re.compile(r"^(?P<sev>error|warning)(?:\[(?P<code>[\w:]+)\])?: (?P<msg>.*)$")
_RUST_ARROW = re.compile(r"^\s*--> (?P<path>.+?):(?P<line>\d+):(?P<col>\d+)$")
_CLIPPY_LINK = re.compile(r"rust-clippy/[^#\s]*#(?P<lint>\w+)")
_CARGO_ABORT = re.compile(r"could not compile `[^`]+`.* due to (?P<n>\d+) previous errors?")
_ARROW_WITHIN = 3


def parse_cargo(lines: Sequence[str], ctx: Ctx) -> Out:
    """`error[E0308]: message` / `error: message` followed by ` --> src/main.rs:3:5`; clippy's lint from its link."""
    out = Out()
    head: tuple[str | None, str, int] | None = None  # code, message, header index (an error awaiting its -->)
    last: int | None = None  # position in out.raws of the latest finding, to take a clippy link below it
    for index, line in enumerate(lines):
        if line.startswith(("error", "warning")):
            match = _RUST_HEAD.match(line)
            aborted = _CARGO_ABORT.search(line)
            if aborted:
                out.expected = (out.expected or 0) + int(aborted.group("n"))
            head = (match.group("code"), match.group("msg"), index) if match and match.group("sev") == "error" else None
            last = None
            continue
        if head is not None and "--> " in line:
            arrow = _RUST_ARROW.match(line)
            if arrow and index - head[2] <= _ARROW_WITHIN:
                path = ctx.path(arrow.group("path"))
                out.add(Raw(ctx.tool, path, int(arrow.group("line")), head[0], ctx.message(head[1]), at=head[2]))
                last = len(out.raws) - 1
            head = None
            continue
        link = _CLIPPY_LINK.search(line) if last is not None and "rust-clippy" in line else None
        if link and last is not None and out.raws[last].code is None:
            out.raws[last] = out.raws[last]._replace(code=f"clippy::{link.group('lint')}")
    return out


_CARGO_RUNNING = re.compile(r"^\s+Running (?:unittests )?(?P<src>\S+)")
_CARGO_DOC = re.compile(r"^\s+Doc-tests (?P<crate>\S+)")
_CARGO_TEST_FAIL = re.compile(r"^test (?P<name>.+?) \.\.\. FAILED$|^(?P<terse>\S.*?) --- FAILED$")
_NEXTEST_FAIL = re.compile(r"^\s+FAIL \[\s*[\d.]+s\] (?:\(\s*\d+/\d+\) )?(?P<binary>\S+) (?P<name>\S+)")
_CARGO_RESULT = re.compile(r"^test result: FAILED\. \d+ passed; (?P<n>\d+) failed;")


def parse_cargo_test(lines: Sequence[str], ctx: Ctx) -> Out:
    """`test tests::a ... FAILED` per test binary (`src/lib.rs::tests::a`), doc-tests, cargo-nextest's FAIL lines."""
    out = Out()
    target = ""
    for index, line in enumerate(lines):
        running = _CARGO_RUNNING.match(line) or _CARGO_DOC.match(line) if line.startswith(" ") else None
        if running:
            target = running.group("src") if "src" in running.groupdict() else f"doc-tests {running.group('crate')}"
            continue
        fail = _CARGO_TEST_FAIL.match(line) if "FAILED" in line else None
        if fail:
            name = fail.group("name") or fail.group("terse")
            test_id = f"{target}::{name}" if target else name
            out.add(Raw(ctx.tool, None, None, "FAILED", "", test_id, index))
            continue
        nextest = _NEXTEST_FAIL.match(line) if "FAIL [" in line else None
        if nextest:
            name = nextest.group("name")
            test_id = f"{nextest.group('binary')}::{name}"
            out.add(Raw(ctx.tool, None, None, "FAILED", "", test_id, index))
            continue
        result = _CARGO_RESULT.match(line) if line.startswith("test result: FAILED") else None
        if result:
            out.expected = (out.expected or 0) + int(result.group("n"))
    return out


__all__ = ["parse_cargo", "parse_cargo_test", "parse_go_test", "parse_go_vet"]
