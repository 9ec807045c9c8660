"""pytest and unittest parsers on small outputs the captured fixtures do not show (mutmut's survivors).

Every field of each finding is checked, `at` (the output line it came from) included: parse_findings
orders the findings of several tools by it.
"""

from __future__ import annotations

from pm_agent.gates.findings import parse_findings
from pm_agent.gates.findings._common import Ctx, Raw
from pm_agent.gates.findings.python_tests import parse_pytest, parse_unittest

PYTEST = Ctx(tool="pytest")
UNITTEST = Ctx(tool="unittest")
CLOSING = "==== 1 failed, 2 passed in 0.12s ===="


def _ids(lines: list[str]) -> list[str | None]:
    return [r.test_id for r in parse_pytest(lines, PYTEST).raws]


def test_summary_ids_keep_nested_brackets_whole() -> None:
    lines = ["FAILED tests/a.py::t[x[y - z] - w] - assert 1 == 2", "FAILED tests/a.py::u[a]b] - m", CLOSING]
    assert parse_pytest(lines, PYTEST).raws == [
        Raw("pytest", "tests/a.py", None, "FAILED", "assert 1 == 2", "tests/a.py::t[x[y - z] - w]", 0),
        Raw("pytest", "tests/a.py", None, "FAILED", "m", "tests/a.py::u[a]b]", 1),
    ]


def test_summary_lines_that_are_not_test_ids_are_skipped() -> None:
    lines = [
        "FAILED ",
        "FAILED  tests/a.py::t - indented id",
        "FAILED x",
        "FAILED (failures=1)",
        "ERROR tests/data - no python file but a directory",
        "ERROR my test.py",
        "ERROR conftest.py",
        "FAILED Suite::test_x - boom",
        CLOSING,
    ]
    assert parse_pytest(lines, PYTEST).raws == [
        Raw("pytest", None, None, "ERROR", "no python file but a directory", "tests/data", 4),
        Raw("pytest", "my test.py", None, "ERROR", "", "my test.py", 5),
        Raw("pytest", "conftest.py", None, "ERROR", "", "conftest.py", 6),
        Raw("pytest", None, None, "FAILED", "boom", "Suite::test_x", 7),
    ]


def test_section_titles_only_in_failures_and_errors_with_their_error_prefixes() -> None:
    lines = [
        "==== ERRORS ====",
        "____ ERROR collecting tests/test_b.py ____",
        "____ ERROR at teardown of test_c ____",
        "==== FAILURES ====",
        "____ test_a ____",
        "==== PASSES ====",
        "____ test_ok ____",
        "==== 1 failed, 1 passed, 2 errors in 0.50s ====",
    ]
    assert parse_pytest(lines, PYTEST).raws == [
        Raw("pytest", "tests/test_b.py", None, "ERROR", "", "tests/test_b.py", 1),
        Raw("pytest", None, None, "ERROR", "", "test_c", 2),
        Raw("pytest", None, None, "FAILED", "", "test_a", 4),
    ]


def test_verbose_result_lines_with_and_without_a_percentage() -> None:
    lines = [
        "tests/a.py::test_x FAILED",
        "tests/a.py::test_y ERROR",
        "tests/a.py::test_z FAILED [ 50%]",
        "tests/a.py::test_ok PASSED [100%]",
        "==== 2 failed, 1 passed, 1 error in 0.50s ====",
    ]
    out = parse_pytest(lines, PYTEST)
    assert out.raws == [
        Raw("pytest", "tests/a.py", None, "FAILED", "", "tests/a.py::test_x", 0),
        Raw("pytest", "tests/a.py", None, "ERROR", "", "tests/a.py::test_y", 1),
        Raw("pytest", "tests/a.py", None, "FAILED", "", "tests/a.py::test_z", 2),
    ]
    assert out.expected == 3
    assert out.mismatch() is None


def test_internal_error_and_missing_closing_line_are_problems() -> None:
    crashed = parse_pytest(["INTERNALERROR> Traceback", "FAILED tests/a.py::t - x", CLOSING], PYTEST)
    assert crashed.problem == "pytest reported an INTERNALERROR"
    assert [r.test_id for r in crashed.raws] == ["tests/a.py::t"]
    cut = parse_pytest(["FAILED tests/a.py::t - x"], PYTEST)
    assert cut.problem == "pytest's closing counts line is missing (killed, or output cut at the end?)"
    assert parse_findings("pytest", "INTERNALERROR> boom\n" + CLOSING, 1).note == (
        "pytest: pytest reported an INTERNALERROR"
    )


def test_unittest_blocks_without_rules_between_them_and_at_the_end() -> None:
    lines = [
        "FAIL: test_a (m.T.test_a)",
        "AssertionError: boom",
        "ERROR: test_b (m.T)",
        "Traceback (most recent call last):",
        "ValueError: bang",
        "UNEXPECTED SUCCESS: test_c (m.T.test_c)",
    ]
    out = parse_unittest(lines, UNITTEST)
    assert out.raws == [
        Raw("unittest", None, None, "FAIL", "AssertionError: boom", "m.T.test_a", 0),
        Raw("unittest", None, None, "ERROR", "ValueError: bang", "m.T.test_b", 2),
        Raw("unittest", None, None, "UNEXPECTED SUCCESS", "", "m.T.test_c", 5),
    ]
    assert out.expected is None


def test_unittest_closing_line_sums_its_counts() -> None:
    lines = [
        "=" * 70,
        "FAIL: test_a (m.T.test_a)",
        "-" * 70,
        "AssertionError: boom",
        "",
        "-" * 70,
        "Ran 3 tests in 0.001s",
        "",
        "FAILED (failures=1, errors=2, unexpected successes=1, skipped=4)",
    ]
    out = parse_unittest(lines, UNITTEST)
    assert out.raws == [Raw("unittest", None, None, "FAIL", "AssertionError: boom", "m.T.test_a", 1)]
    assert out.expected == 4
    assert out.mismatch() == "its summary reports 4 but 1 were parsed (output cut or in an unknown format)"
