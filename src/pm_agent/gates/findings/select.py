"""Pick the parsers for a command and run them: `parse_findings`.

The command's words choose first (`ruff check . && mypy src` -> ruff+mypy, `.venv/bin/python -m pytest`
-> pytest, `cargo clippy` -> clippy); a command that names no known tool (`make lint`, `tox -e lint`) is
read by the output's shape: each parser whose signature appears in the output runs, and an output line
claimed by one parser is not counted again by a later one (ruff's concise lines also look like flake8's).
A non-zero exit with nothing parsed, or a count that disagrees with the tool's own summary, is "not
parsed": the ratchet then falls back to comparing exit codes, and says so.
"""

from __future__ import annotations

import importlib
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from pm_agent.gates.findings._common import Ctx, Out, ParseFn, Raw, norm_root, split_lines
from pm_agent.gates.findings.models import MAX_FINDINGS, Finding, FindingSet


@dataclass(frozen=True)
class Parser:
    """A named parser; `shape` is a line signature that lets it run on a command that does not name it (None: it
    runs only for a command that names it)."""

    name: str
    parse: ParseFn
    shape: re.Pattern[str] | None


def _shape(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.MULTILINE)


def _on_use(module: str, name: str) -> ParseFn:
    """The parser `name` of the findings module `module`, imported on its first call.

    A project's commands call for one or two of the six parser modules (and a gate command naming no tool
    none); each builds a dozen regexes at import, which every run paid for at start-up.
    """

    def parse(lines: Sequence[str], ctx: Ctx) -> Out:
        found: ParseFn = getattr(importlib.import_module(f"pm_agent.gates.findings.{module}"), name)
        return found(lines, ctx)

    parse.__name__ = parse.__qualname__ = name
    return parse


parse_pytest, parse_unittest = _on_use("python_tests", "parse_pytest"), _on_use("python_tests", "parse_unittest")
parse_go_test, parse_go_vet = _on_use("go_rust", "parse_go_test"), _on_use("go_rust", "parse_go_vet")
parse_cargo, parse_cargo_test = _on_use("go_rust", "parse_cargo"), _on_use("go_rust", "parse_cargo_test")
parse_mypy, parse_pyright = _on_use("python_lint", "parse_mypy"), _on_use("python_lint", "parse_pyright")
parse_pylint, parse_ruff = _on_use("python_lint", "parse_pylint"), _on_use("python_lint", "parse_ruff")
parse_flake8 = _on_use("python_lint", "parse_flake8")
parse_tsc, parse_eslint = _on_use("js_tools", "parse_tsc"), _on_use("js_tools", "parse_eslint")
parse_gradle, parse_maven = _on_use("jvm", "parse_gradle"), _on_use("jvm", "parse_maven")
parse_rspec, parse_rubocop = _on_use("ruby_php", "parse_rspec"), _on_use("ruby_php", "parse_rubocop")
parse_phpunit, parse_phpstan = _on_use("ruby_php", "parse_phpunit"), _on_use("ruby_php", "parse_phpstan")
parse_ruff_format, parse_black = _on_use("formatters", "parse_ruff_format"), _on_use("formatters", "parse_black")
parse_prettier, parse_gofmt = _on_use("formatters", "parse_prettier"), _on_use("formatters", "parse_gofmt")
parse_rustfmt, parse_oxfmt = _on_use("formatters", "parse_rustfmt"), _on_use("formatters", "parse_oxfmt")
parse_biome = _on_use("js_tools", "parse_biome")


# Order matters in shape mode: earlier parsers claim their lines first.
PARSERS: dict[str, Parser] = {
    p.name: p
    for p in (
        Parser("pytest", parse_pytest, _shape(r"^=+ (?:short test summary info|FAILURES|ERRORS) =+$")),
        Parser("unittest", parse_unittest, _shape(r"^Ran \d+ tests? in ")),
        Parser("go-test", parse_go_test, _shape(r"^(?:FAIL|ok) *\t\S+|^\s*--- FAIL: ")),
        Parser("cargo-test", parse_cargo_test, _shape(r"^test result: ")),
        Parser("gradle", parse_gradle, _shape(r"^[\w.$]+ > .+ FAILED$|^\d+ tests? completed, \d+ failed")),
        Parser("maven", parse_maven, _shape(r"Tests run: \d+, Failures: \d+, Errors: \d+, Skipped: \d+$")),
        Parser("rspec", parse_rspec, _shape(r"^\d+ examples?, \d+ failures?")),
        Parser("phpunit", parse_phpunit, _shape(r"^Tests: \d+, Assertions: \d+")),
        Parser("rubocop", parse_rubocop, _shape(r"^\d+ files? inspected, ")),
        Parser(
            "mypy",
            parse_mypy,
            _shape(r"^\S[^:\n]*:\d+(?::\d+)?: error: .*  \[[a-z-]+\]$|^Found \d+ errors? in \d+ files? \("),
        ),
        Parser("pyright", parse_pyright, _shape(r"^\s+\S.*:\d+:\d+ - error: ")),
        Parser("tsc", parse_tsc, _shape(r"\(\d+,\d+\): error TS\d+: |:\d+:\d+ - error TS\d+: ")),
        Parser(
            "eslint",
            parse_eslint,
            _shape(r"^✖ \d+ problems? \(|\[(?:Error|Warning)/[\w@/-]+\]$|, (?:Error|Warning) - "),
        ),
        # Before ruff: its full output's `unformatted: ...` header and arrow are the formatter's, not a lint finding.
        Parser(
            "ruff-format",
            parse_ruff_format,
            _shape(r"^Would reformat: |^unformatted: File would be reformatted$|:\d+:\d+: unformatted: "),
        ),
        Parser("black", parse_black, _shape(r"^would reformat \S|^Oh no! ")),
        Parser("prettier", parse_prettier, _shape(r"^\[warn\] Code style issues ")),
        Parser("gofmt", parse_gofmt, None),  # bare file names: no signature to tell them by
        Parser("rustfmt", parse_rustfmt, _shape(r"^Diff in \S.*(?::\d+:| at line \d+:)$")),
        Parser("oxfmt", parse_oxfmt, _shape(r"^Format issues found in above \d+ files?")),
        Parser("biome", parse_biome, _shape(r"^\S+ [\w/]+(?:\s+FIXABLE)?\s+━{3,}$")),
        Parser("pylint", parse_pylint, _shape(r"^\*{13} Module |^\S.*:\d+:\d+: [CRWEF]\d{4}: ")),
        Parser(
            "ruff", parse_ruff, _shape(r"^\S.*:\d+:\d+: [A-Z]+\d+ \[\*\] |^Found \d+ errors?\.$|^\s*--> \S+:\d+:\d+$")
        ),
        Parser("flake8", parse_flake8, _shape(r"^\S.*:\d+:\d+: [A-Z]{1,4}\d{1,4} ")),
        Parser("go-vet", parse_go_vet, _shape(r"^(?:vet: )?\S+\.go:\d+:\d+: ")),
        Parser("cargo", parse_cargo, _shape(r"^error(?:\[E\d+\])?: .*\n\s*--> ")),
        Parser("phpstan", parse_phpstan, _shape(r"^[^\s:]+\.php:\d+:\S")),
    )
}
# Parsers that share another's code under their own tool name (picked by command words only).
ALIASES: dict[str, str] = {"clippy": "cargo", "go-build": "go-vet"}

_TOOL_WORDS: dict[str, tuple[str, ...]] = {
    "pytest": ("pytest",),
    "py.test": ("pytest",),
    "unittest": ("unittest",),
    "ruff": ("ruff",),
    "flake8": ("flake8",),
    "pylint": ("pylint",),
    "mypy": ("mypy",),
    "dmypy": ("mypy",),
    "pyright": ("pyright",),
    "basedpyright": ("pyright",),
    "eslint": ("eslint",),
    "tsc": ("tsc",),
    "vue-tsc": ("tsc",),
    "gradle": ("gradle",),
    "gradlew": ("gradle",),
    "mvn": ("maven",),
    "mvnw": ("maven",),
    "rspec": ("rspec",),
    "rubocop": ("rubocop",),
    "standardrb": ("rubocop",),
    "phpunit": ("phpunit",),
    "phpstan": ("phpstan",),
    "black": ("black",),
    "prettier": ("prettier",),
    "gofmt": ("gofmt",),
    "rustfmt": ("rustfmt",),
    "oxfmt": ("oxfmt",),
    "biome": ("biome",),
}
_SUBCOMMANDS: dict[tuple[str, str], tuple[str, ...]] = {
    ("go", "vet"): ("go-vet",),
    ("go", "build"): ("go-build",),
    ("go", "test"): ("go-test",),
    ("cargo", "clippy"): ("clippy",),
    ("cargo", "build"): ("cargo",),
    ("cargo", "check"): ("cargo",),
    ("cargo", "b"): ("cargo",),
    ("cargo", "c"): ("cargo",),
    ("cargo", "test"): ("cargo", "cargo-test"),
    ("cargo", "t"): ("cargo", "cargo-test"),
    ("cargo", "nextest"): ("cargo", "cargo-test"),
    ("manage.py", "test"): ("unittest",),
    ("ruff", "format"): ("ruff-format",),
    ("cargo", "fmt"): ("rustfmt",),
}


def _words(command: str) -> list[str]:
    try:
        tokens = shlex.split(command, comments=False, posix=True)
    except ValueError:  # unbalanced quotes: plain words are good enough to spot tool names
        tokens = command.split()
    words: list[str] = []
    for token in tokens:
        for part in re.split(r"[;&|()]+", token):
            if part:
                words.append(part.rsplit("/", 1)[-1])
    return words


def parsers_for_command(command: str) -> list[str]:
    """The parser names the command's words call for, in order, without repeats."""
    words = _words(command)
    names: list[str] = []
    for i, word in enumerate(words):
        # The subcommand first: `ruff format` is the formatter, `ruff check` (not listed) the linter.
        found = _SUBCOMMANDS.get((word, _next_word(words, i))) or _TOOL_WORDS.get(word, ())
        names.extend(n for n in found if n not in names)
    return names


def _next_word(words: Sequence[str], i: int) -> str:
    """The next word after `words[i]` that is not an option (`cargo +nightly clippy`, `go -C dir vet`)."""
    after_option = False
    for word in words[i + 1 : i + 4]:
        if word.startswith(("-", "+")):
            after_option = word == "-C"  # `-C dir`: the option's value is not the subcommand
        elif after_option:
            after_option = False
        else:
            return word
    return ""


@dataclass
class ParseResult:
    """The internal result: raw findings (up to the hard cap) and how the output was understood."""

    parser: str | None
    raws: list[Raw]
    note: str = ""
    capped: bool = False

    def to_set(self) -> FindingSet:
        shown = self.raws[:MAX_FINDINGS]
        note = self.note
        if len(self.raws) > MAX_FINDINGS and not note:
            many = f"over {len(self.raws)}" if self.capped else str(len(self.raws))
            note = f"{many} findings, the first {MAX_FINDINGS} kept"
        return FindingSet(
            parser=self.parser,
            findings=tuple(to_finding(r) for r in shown),
            total=len(self.raws),
            truncated=len(self.raws) > MAX_FINDINGS or self.capped,
            note=note,
        )


def to_finding(raw: Raw) -> Finding:
    """The pydantic model of a raw finding."""
    return Finding(tool=raw.tool, path=raw.path, line=raw.line, code=raw.code, message=raw.message, test_id=raw.test_id)


def run_parsers(command: str, output: str, exit_code: int, root: str | None) -> ParseResult:
    """Parse `output` with the parsers its command calls for, else with those its shape calls for."""
    lines = split_lines(output)
    named = parsers_for_command(command)
    by_shape = not named
    if by_shape:
        text = "\n".join(lines)
        named = [p.name for p in PARSERS.values() if p.shape is not None and p.shape.search(text)]
    raws: list[Raw] = []
    used: list[str] = []
    problems: list[str] = []
    claimed: set[int] = set()
    capped = False
    for name in named:
        out: Out = PARSERS[ALIASES.get(name, name)].parse(lines, Ctx(tool=name, root=norm_root(root), command=command))
        if by_shape and not out.raws:
            continue  # its signature matched by chance (or its lines were cut): not this parser's output
        capped = capped or out.capped
        mismatch = out.mismatch()
        if mismatch:
            problems.append(f"{name}: {mismatch}")
        found = [r for r in out.raws if r.at not in claimed] if by_shape else out.raws
        claimed.update(r.at for r in found)
        raws.extend(found)
        if found or not by_shape:
            used.append(name)
    if problems:
        return ParseResult(None, [], "; ".join(problems))
    if exit_code != 0 and not raws:
        what = "+".join(used) if used else "no known tool"
        return ParseResult(None, [], f"{what}: exit {exit_code} but no findings parsed (a crash or config error?)")
    if not used:
        return ParseResult(None, [], "no parser recognised the output")
    if len(used) > 1:
        raws.sort(key=lambda r: r.at)  # in the order the output printed them
    return ParseResult("+".join(used), raws, "", capped)


def parse_findings(command: str, output: str, exit_code: int, *, root: str | None = None) -> FindingSet:
    """Pick the parser by the command's words and the output's shape; FindingSet(parser=None) when none fits.

    `root` is the directory the command ran in: absolute paths under it (pyright, eslint) become relative.
    """
    return run_parsers(command, output, exit_code, root).to_set()


__all__ = [
    "ALIASES",
    "PARSERS",
    "ParseResult",
    "Parser",
    "parse_findings",
    "parsers_for_command",
    "run_parsers",
    "to_finding",
]
