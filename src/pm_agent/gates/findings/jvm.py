"""Gradle and Maven builds: failing tests (Gradle's test logging, Maven's surefire), javac and kotlinc errors, and
checkstyle's violations, as each tool prints them under `gradle --console=plain` and `mvn -B -q`.

Only what fails a build is a finding: compile errors, failing or erroring tests, checkstyle violations of severity
error (its warnings do not fail a build by default). Where the tool prints its own count (Gradle's `2 tests
completed, 1 failed`, surefire's `Tests run: 4, Failures: 1, Errors: 1`, javac's `2 errors`, `You have 3 Checkstyle
violations`), the findings of that kind are checked against it, so an output cut short is not read as fewer
failures. Maven repeats each compile error in its failure message: an error is kept once.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from pm_agent.gates.findings._common import Ctx, Out, Raw, located

# Gradle's test logging: `demo.AddTest > fails FAILED`, JUnit 5's `AddTest > adds two numbers() FAILED`, nested
# classes `Outer > Inner > test() FAILED`. A task's own line (`> Task :test FAILED`, gradle 4's `:test FAILED`)
# starts with no class name.
_GRADLE_TEST = re.compile(r"^(?P<id>[\w.$]+ > .+) FAILED$")
_GRADLE_TESTS = re.compile(r"^\d+ tests? completed, (?P<failed>\d+) failed\b")
# javac, under gradle (gradle 4 glues the first one to the task's name: `:compileJava/src/A.java:2: error: ...`).
_JAVAC = re.compile(r"^(?::[\w:-]+(?=/))?(?P<path>\S+?\.java):(?P<line>\d+): error: (?P<msg>.*)$")
_JAVAC_COUNT = re.compile(r"^(?P<n>\d+) errors?$")
# kotlinc: `e: file:///src/A.kt:3:5 msg` (Kotlin 1.8 on) and `e: /src/A.kt: (3, 5): msg` (before).
_KOTLINC = re.compile(
    r"^e: (?:file://)?(?P<path>\S+?\.kts?)(?::(?P<line>\d+):(?P<col>\d+) |: \((?P<line2>\d+), (?P<col2>\d+)\): )"
    r"(?P<msg>.*)$"
)
_GRADLE_CHECKSTYLE = re.compile(
    r"^\[ant:checkstyle\] \[ERROR\] (?P<path>\S+?):(?P<line>\d+)(?::\d+)?: (?P<msg>.*?)(?: \[(?P<code>\w+)\])?$"
)

_MAVEN = r"^(?:\x1b\[[\d;]*m)*(?:\[(?:ERROR|WARNING|INFO)\] )?"
# surefire 2: `fails(demo.AddTest)  Time elapsed: 0.01 s  <<< FAILURE!`; 3: `demo.AddTest.fails -- Time elapsed: ...`.
_SUREFIRE_TEST = re.compile(
    _MAVEN + r"(?P<name>[^\s(]+)(?:\((?P<cls>[^)\s]+)\))?\s+(?:--\s+)?Time elapsed: [^<]*<<< (?:FAILURE|ERROR)!$"
)
# A module's totals (a test class's own line goes on with `, Time elapsed`).
_SUREFIRE_TOTALS = re.compile(_MAVEN + r"Tests run: \d+, Failures: (?P<f>\d+), Errors: (?P<e>\d+), Skipped: \d+$")
_MAVEN_JAVAC = re.compile(r"^\[ERROR\] (?P<path>\S+?\.java):\[(?P<line>\d+),(?P<col>\d+)\] (?P<msg>.*)$")
_MAVEN_CHECKSTYLE = re.compile(
    r"^\[ERROR\] (?P<path>\S+?):\[(?P<line>\d+)(?:,\d+)?\] \((?P<cat>[^)]*)\) (?P<code>\w+): (?P<msg>.*)$"
)
_CHECKSTYLE_COUNT = re.compile(r"You have (?P<n>\d+) Checkstyle violations?")


@dataclass
class _Kinds:
    """Findings by kind, each kind's own count where the tool printed one."""

    found: dict[str, list[Raw]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    seen: set[tuple[str | None, int | None, str | None, str]] = field(default_factory=set)
    count_lines: set[str] = field(default_factory=set)

    def add(self, kind: str, raw: Raw) -> None:
        key = (raw.path, raw.line, raw.test_id, raw.message)
        if key not in self.seen:  # maven prints a compile error twice: in the compiler's list and in its failure
            self.seen.add(key)
            self.found.setdefault(kind, []).append(raw)

    def count(self, kind: str, n: int, line: str | None = None) -> None:
        """Add a summary's count; `line`: a summary the tool may print twice (kept once), one per module otherwise."""
        if line is not None:
            if line in self.count_lines:
                return
            self.count_lines.add(line)
        self.counts[kind] = self.counts.get(kind, 0) + n

    def out(self) -> Out:
        out = Out()
        for raw in sorted((r for raws in self.found.values() for r in raws), key=lambda r: r.at):
            out.add(raw)
        if self.counts:
            out.expected = sum(self.counts.values())
            out.counted = sum(len(self.found.get(kind, ())) for kind in self.counts)
        return out


def _test(ctx: Ctx, test_id: str, index: int, detail: str = "") -> Raw:
    return Raw(ctx.tool, None, None, "FAILED", ctx.message(detail.strip()), test_id, index)


def parse_gradle(lines: Sequence[str], ctx: Ctx) -> Out:
    """Failed tests (`Class > test FAILED`), javac and kotlinc errors, checkstyle errors of a gradle build."""
    kinds = _Kinds()
    for index, line in enumerate(lines):
        if line.endswith(" FAILED") and (test := _GRADLE_TEST.match(line)):
            # The exception and where it was thrown, indented on the next line (`java.lang.AssertionError at A.java:9`).
            after = lines[index + 1] if index + 1 < len(lines) else ""
            kinds.add("tests", _test(ctx, test.group("id"), index, after if after.startswith("    ") else ""))
        elif "tests completed" in line or "test completed" in line:
            if summary := _GRADLE_TESTS.match(line):
                kinds.count("tests", int(summary.group("failed")))
        elif ": error: " in line and (javac := _JAVAC.match(line)):
            kinds.add("javac", located(ctx, javac, "javac", index))
        elif line.startswith("e: ") and (kotlin := _KOTLINC.match(line)):
            kinds.add("kotlinc", located(ctx, kotlin, "kotlinc", index, "line" if kotlin.group("line") else "line2"))
        elif line.startswith("[ant:checkstyle] [ERROR]") and (style := _GRADLE_CHECKSTYLE.match(line)):
            kinds.add("checkstyle", located(ctx, style, style.group("code") or "checkstyle", index))
        elif count := _JAVAC_COUNT.match(line):
            kinds.count("javac", int(count.group("n")))
    return kinds.out()


def parse_maven(lines: Sequence[str], ctx: Ctx) -> Out:
    """Failing and erroring tests (surefire), javac errors and checkstyle errors of a maven build."""
    kinds = _Kinds()
    for index, line in enumerate(lines):
        if "Time elapsed" in line and (test := _SUREFIRE_TEST.match(line)):
            name, cls = test.group("name"), test.group("cls")
            kinds.add("tests", _test(ctx, f"{cls}.{name}" if cls else name, index))
        elif "Tests run: " in line and (totals := _SUREFIRE_TOTALS.match(line)):
            kinds.count("tests", int(totals.group("f")) + int(totals.group("e")))
        elif line.startswith("[ERROR] ") and (style := _MAVEN_CHECKSTYLE.match(line)):
            kinds.add("checkstyle", located(ctx, style, style.group("code"), index))
        elif line.startswith("[ERROR] ") and (javac := _MAVEN_JAVAC.match(line)):
            kinds.add("javac", located(ctx, javac, "javac", index))
        elif "Checkstyle violation" in line and (count := _CHECKSTYLE_COUNT.search(line)):
            kinds.count("checkstyle", int(count.group("n")), line)
    return kinds.out()


__all__ = ["parse_gradle", "parse_maven"]
