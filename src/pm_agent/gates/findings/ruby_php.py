"""Ruby (RSpec's failed examples, RuboCop's offenses) and PHP (PHPUnit's failures and errors, PHPStan's raw errors).

Each count is checked against the tool's own summary (`4 examples, 3 failures`, `18 offenses detected`, `Tests: 3,
Assertions: 2, Errors: 1, Failures: 1.`), so an output cut short is not read as fewer findings. A failing example
is keyed by its full description and spec file, a PHPUnit test by `Class::method` (with its data set), so a
test that moved keeps its identity.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pm_agent.gates.findings._common import Ctx, Out, Raw, as_int, located

# `rspec ./spec/calc_spec.rb:8 # Calc fails` (the closing list), and a spec file that does not load.
_RSPEC_FAILED = re.compile(r"^rspec (?P<path>\S+?)(?::(?P<line>\d+)|\[[\d:]+\])? # (?P<desc>.+)$")
_RSPEC_LOAD = re.compile(r"^An error occurred while loading (?P<path>\S+?)\.?$")
_RSPEC_SUMMARY = re.compile(
    r"^\d+ examples?, (?P<failures>\d+) failures?(?:, \d+ pending)?(?:, (?P<errors>\d+) errors? occurred outside)?"
)
_RUBOCOP = re.compile(
    r"^(?P<path>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+): (?P<sev>[CWEFR]): (?:\[(?:Correctable|Corrected|Todo)\] )?"
    r"(?P<code>[A-Z]\w*(?:/\w+)+): (?P<msg>.*)$"
)
_RUBOCOP_SUMMARY = re.compile(r"^\d+ files? inspected, (?P<n>\d+|no) offenses? detected")


def parse_rspec(lines: Sequence[str], ctx: Ctx) -> Out:
    """RSpec's failed examples (closing `rspec path:line # description` list) and spec files that did not load."""
    out = Out()
    for index, line in enumerate(lines):
        if line.startswith("rspec ") and (failed := _RSPEC_FAILED.match(line)):
            path = ctx.path(failed.group("path"))
            out.add(Raw(ctx.tool, path, as_int(failed.group("line")), "FAILED", "", failed.group("desc"), index))
        elif line.startswith("An error occurred while loading") and (load := _RSPEC_LOAD.match(line)):
            path = ctx.path(load.group("path"))
            out.add(Raw(ctx.tool, path, None, "ERROR", "", f"loading {path}", index))
        elif summary := _RSPEC_SUMMARY.match(line):
            out.expected = int(summary.group("failures")) + int(summary.group("errors") or 0)
    return out


def parse_rubocop(lines: Sequence[str], ctx: Ctx) -> Out:
    """RuboCop's (and standardrb's) `path:line:col: C: Cop/Name: message` offenses."""
    out = Out()
    for index, line in enumerate(lines):
        if ": " in line and (offense := _RUBOCOP.match(line)):
            out.add(located(ctx, offense, offense.group("code"), index))
        elif "inspected" in line and (summary := _RUBOCOP_SUMMARY.match(line)):
            count = summary.group("n")
            out.expected = 0 if count == "no" else int(count)
    return out


_PHPUNIT_SECTION = re.compile(r"^There (?:was|were) \d+ (?P<kind>failure|error|warning|risky|skipped|incomplete)")
_PHPUNIT_TEST = re.compile(r"^\d+\) (?P<id>\S+::\S+.*)$")
_PHPUNIT_SUMMARY = re.compile(r"^Tests: \d+, Assertions: \d+(?P<rest>(?:, \w+: \d+)*)\.$")
_PHPUNIT_COUNT = re.compile(r"(Errors|Failures): (\d+)")
_PHPSTAN_RAW = re.compile(r"^(?P<path>[^\s:][^:]*\.php):(?P<line>\d+):(?P<msg>.+)$")


def parse_phpunit(lines: Sequence[str], ctx: Ctx) -> Out:
    """PHPUnit's failures and errors (`1) CalcTest::testFails` under `There was 1 failure:`), not its warnings,
    risky, skipped or incomplete tests."""
    out = Out()
    kind: str | None = None
    for index, line in enumerate(lines):
        if line.startswith("There ") and (section := _PHPUNIT_SECTION.match(line)):
            kind = section.group("kind")
        elif kind in ("failure", "error") and (test := _PHPUNIT_TEST.match(line)):
            out.add(Raw(ctx.tool, None, None, kind.upper(), "", test.group("id"), index))
        elif line.startswith("Tests: ") and (summary := _PHPUNIT_SUMMARY.match(line)):
            out.expected = sum(int(n) for _, n in _PHPUNIT_COUNT.findall(summary.group("rest")))
    return out


def parse_phpstan(lines: Sequence[str], ctx: Ctx) -> Out:
    """PHPStan's `--error-format=raw` lines: `path:line:message`."""
    out = Out()
    for index, line in enumerate(lines):
        if ".php:" in line and (error := _PHPSTAN_RAW.match(line)):
            out.add(located(ctx, error, "phpstan", index))
    return out


__all__ = ["parse_phpstan", "parse_phpunit", "parse_rspec", "parse_rubocop"]
