"""cargo test and cargo-nextest outputs the captured fixtures do not show: the terse format, nextest's FAIL
lines, the summary's count, a failure before any target, and build errors ordered before test failures.

Written against mutmut's survivors (make mutation); the outputs follow cargo's and nextest's formats.
"""

from __future__ import annotations

from pm_agent.gates.findings import FindingSet, parse_findings

UNIT = """\
     Running unittests src/lib.rs (target/debug/deps/m-1)
test tests::a ... FAILED
tests::b --- FAILED
test result: FAILED. 0 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out
"""


def _rows(fs: FindingSet) -> list[tuple[str, str | None, int | None, str | None, str, str | None]]:
    return [(f.tool, f.path, f.line, f.code, f.message, f.test_id) for f in fs.findings]


def test_terse_and_plain_failures_under_their_target() -> None:
    fs = parse_findings("cargo test", UNIT, 101)
    assert fs.parser == "cargo+cargo-test"
    assert _rows(fs) == [
        ("cargo-test", None, None, "FAILED", "", "src/lib.rs::tests::a"),
        ("cargo-test", None, None, "FAILED", "", "src/lib.rs::tests::b"),
    ]


def test_a_summary_counting_more_failures_than_parsed_means_not_parsed() -> None:
    fs = parse_findings("cargo test", UNIT.replace("2 failed", "3 failed"), 101)
    assert fs.parser is None
    assert fs.note == "cargo-test: its summary reports 3 but 2 were parsed (output cut or in an unknown format)"


def test_nextest_fail_lines() -> None:
    output = "        FAIL [   0.004s] m::it tests::c\n        FAIL [   0.010s] (1/3) m tests::d\n"
    fs = parse_findings("cargo nextest run", output, 100)
    assert _rows(fs) == [
        ("cargo-test", None, None, "FAILED", "", "m::it::tests::c"),
        ("cargo-test", None, None, "FAILED", "", "m::tests::d"),
    ]


def test_a_failure_before_any_target_is_named_alone() -> None:
    assert [f.test_id for f in parse_findings("cargo test", "test tests::a ... FAILED\n", 101).findings] == ["tests::a"]


def test_build_errors_and_test_failures_in_output_order() -> None:
    output = (
        "error[E0425]: cannot find value `x`\n --> src/lib.rs:3:5\n"
        "     Running unittests src/lib.rs (t)\ntest tests::a ... FAILED\n"
    )
    assert _rows(parse_findings("cargo test", output, 101)) == [
        ("cargo", "src/lib.rs", 3, "E0425", "cannot find value `x`", None),
        ("cargo-test", None, None, "FAILED", "", "src/lib.rs::tests::a"),
    ]
