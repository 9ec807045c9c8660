"""eslint and tsc parsers on small outputs the captured fixtures do not show (mutmut's survivors).

Every field of each finding is checked, `at` (the output line it came from) included.
"""

from __future__ import annotations

from pm_agent.gates.findings._common import Ctx, Raw
from pm_agent.gates.findings.js_tools import parse_eslint, parse_tsc

ESLINT = Ctx(tool="eslint")
TSC = Ctx(tool="tsc")


def test_eslint_stylish_rows_belong_to_the_file_line_above_them() -> None:
    lines = [
        "  1:1  error  Row before any file line  no-var",
        "a",
        " 2:3  error  Unexpected var  no-var",
        "  4:1  warning  Unused x  no-unused-vars",
        "  5:2  error  Message without a rule",
        "",
        "✖ 4 problems (3 errors, 1 warning)",
    ]
    out = parse_eslint(lines, ESLINT)
    assert out.raws == [
        Raw("eslint", None, 1, "no-var", "Row before any file line", at=0),
        Raw("eslint", "a", 2, "no-var", "Unexpected var", at=2),
        Raw("eslint", "a", 5, None, "Message without a rule", at=4),
    ]
    assert (out.expected, out.counted) == (4, 4)
    assert out.mismatch() is None


def test_eslint_unix_and_compact_lines_and_their_counts() -> None:
    lines = [
        "src/a.js:1:5: Unexpected var [Error/no-var]",
        "src/a.js:2:1: Unused x [Warning/no-unused-vars]",
        "src/b.js: line 3, col 7, Error - Missing semicolon (semi)",
        "src/b.js: line 4, col 1, Error - Parsing error",
        "",
        "4 problems",
    ]
    out = parse_eslint(lines, ESLINT)
    assert out.raws == [
        Raw("eslint", "src/a.js", 1, "no-var", "Unexpected var", at=0),
        Raw("eslint", "src/b.js", 3, "semi", "Missing semicolon", at=2),
        Raw("eslint", "src/b.js", 4, None, "Parsing error", at=3),
    ]
    assert (out.expected, out.counted) == (4, 4)
    with_warnings = parse_eslint(lines, Ctx(tool="eslint", command="eslint --max-warnings 0 ."))
    assert [r.line for r in with_warnings.raws] == [1, 2, 3, 4]


def test_tsc_plain_pretty_and_global_errors_skipping_warnings() -> None:
    lines = [
        "src/a.ts(3,5): warning TS6133: 'x' is declared but never used.",
        "src/a.ts(4,1): error TS2322: Type 'string' is not assignable to type 'number'.",
        "src/b.ts:7:2 - error TS2304: Cannot find name 'y'.",
        "error TS6053: File '/w/c.json' not found.",
        "Version 5.4 TS",
        "",
        "Found 3 errors in 2 files.",
    ]
    out = parse_tsc(lines, TSC)
    assert out.raws == [
        Raw("tsc", "src/a.ts", 4, "TS2322", "Type 'string' is not assignable to type 'number'.", at=1),
        Raw("tsc", "src/b.ts", 7, "TS2304", "Cannot find name 'y'.", at=2),
        Raw("tsc", None, None, "TS6053", "File '/w/c.json' not found.", at=3),
    ]
    assert out.expected == 3


def test_tsc_counts_each_found_line() -> None:
    assert parse_tsc(["Found 1 error.", "Found 2 errors."], TSC).expected == 3
    assert parse_tsc(["found 2 errors."], TSC).expected is None
