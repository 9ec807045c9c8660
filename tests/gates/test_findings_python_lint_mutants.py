"""mypy, pyright, ruff and pylint parsers on small outputs the captured fixtures do not show (mutmut's survivors).

Every field of each finding is checked, `at` (the output line it came from) included.
"""

from __future__ import annotations

from pm_agent.gates.findings._common import Ctx, Raw
from pm_agent.gates.findings.python_lint import parse_mypy, parse_pylint, parse_pyright, parse_ruff

MYPY = Ctx(tool="mypy")
FOUND_ONE = "Found 1 error in 1 file (checked 1 source file)"


def _mypy_messages(lines: list[str]) -> list[tuple[str | None, str]]:
    return [(r.code, r.message) for r in parse_mypy(lines, MYPY).raws]


def test_mypy_errors_without_a_code_and_without_a_line() -> None:
    lines = [
        "src/a.py: error: Duplicate module named 'a'",
        "stubs/b.pyi: error: Cannot parse",
        "setup.cfg: error: Unrecognized option",
        "src/c.py:4: error: Old style message without a code",
    ]
    out = parse_mypy(lines, MYPY)
    assert out.raws == [
        Raw("mypy", "src/a.py", None, None, "Duplicate module named 'a'", at=0),
        Raw("mypy", "stubs/b.pyi", None, None, "Cannot parse", at=1),
        Raw("mypy", "src/c.py", 4, None, "Old style message without a code", at=3),
    ]
    assert out.expected is None


def test_mypy_wrapped_message_joins_unindented_lines_only() -> None:
    assert _mypy_messages(["a.py:1: error: Bad", " x", "continued  [misc]", FOUND_ONE]) == [
        ("misc", "Bad continued")
    ]
    assert _mypy_messages(["a.py:1: error: Bad", "", "", "", "", "", "", "tail  [misc]", FOUND_ONE]) == [
        ("misc", "Bad tail")
    ]


def test_mypy_joins_at_most_five_wrapped_lines() -> None:
    lines = ["a.py:1: error: Bad", "w1", "w2", "w3", "w4", "w5", "w6", "w7", FOUND_ONE]
    assert _mypy_messages(lines) == [(None, "Bad w1 w2 w3 w4 w5")]


def test_mypy_own_lines_end_a_wrapped_message() -> None:
    assert _mypy_messages(["a.py:1: error: Bad", "mypy: can't read file 'b.py'", "more"]) == [(None, "Bad")]
    success = parse_mypy(["a.py:1: error: Bad", "Success: no issues found in 1 source file", "more"], MYPY)
    assert [r.message for r in success.raws] == ["Bad"]
    assert success.expected == 0


def test_mypy_counts_from_found_and_success_lines_and_keeps_a_last_error() -> None:
    ok = parse_mypy(["Success: no issues found in 3 source files"], MYPY)
    assert ok.raws == []
    assert ok.expected == 0
    last = parse_mypy(["a.py:2:5: error: Bad  [misc]"], MYPY)
    assert last.raws == [Raw("mypy", "a.py", 2, "misc", "Bad", at=0)]


def test_pyright_warnings_fail_only_with_the_warnings_option() -> None:
    lines = [
        "/w/a.py",
        "  /w/a.py:3:5 - warning: Import could not be resolved (reportMissingImports)",
        "  /w/a.py:4:1 - error: Bad type (reportGeneralTypeIssues)",
        "1 error, 1 warning, 0 informations",
    ]
    strict = parse_pyright(lines, Ctx(tool="pyright", root="/w/", command="pyright --warnings"))
    assert strict.raws == [
        Raw("pyright", "a.py", 3, "reportMissingImports", "Import could not be resolved", at=1),
        Raw("pyright", "a.py", 4, "reportGeneralTypeIssues", "Bad type", at=2),
    ]
    assert strict.expected == 1
    plain = parse_pyright(lines, Ctx(tool="pyright", root="/w/", command="pyright"))
    assert [r.line for r in plain.raws] == [4]


def test_pyright_detail_lines_and_rules() -> None:
    lines = [
        "  /w/a.py:1:1 - information: Note this",
        "    detail of the information (reportSomething)",
        "  /w/a.py:2:1 - error: Message without a rule",
        " (reportOptionalMemberAccess)",
        "  /w/a.py:3:1 - error: Has a rule (reportAttributeAccessIssue)",
        "    detail naming another (reportOther)",
        "  /w/a.py:9:1 - error: Last one",
    ]
    out = parse_pyright(lines, Ctx(tool="pyright", root="/w/"))
    assert out.raws == [
        Raw("pyright", "a.py", 2, "reportOptionalMemberAccess", "Message without a rule", at=2),
        Raw("pyright", "a.py", 3, "reportAttributeAccessIssue", "Has a rule", at=4),
        Raw("pyright", "a.py", 9, None, "Last one", at=6),
    ]


def test_ruff_arrows_only_right_below_a_header() -> None:
    lines = [
        " --> early.py:1:1",
        "a.py:1:1: F401 [*] `os` imported but unused",
        " --> stray.py:1:1",
        "E501 Line too long",
        "  |",
        " --> late.py:2:1",
        "F841 Local variable `x` is assigned to but never used",
        " --> b.py:7:5",
    ]
    out = parse_ruff(lines, Ctx(tool="ruff"))
    assert out.raws == [
        Raw("ruff", "a.py", 1, "F401", "`os` imported but unused", at=1),
        Raw("ruff", "b.py", 7, "F841", "Local variable `x` is assigned to but never used", at=6),
    ]


def test_ruff_counts_remaining_errors_and_all_checks_passed() -> None:
    assert parse_ruff(["Found 3 errors."], Ctx(tool="ruff")).expected == 3
    assert parse_ruff(["Found 3 errors (1 fixed, 2 remaining)."], Ctx(tool="ruff")).expected == 2
    assert parse_ruff(["All checks passed!"], Ctx(tool="ruff")).expected == 0
    assert parse_ruff(["found 3 errors."], Ctx(tool="ruff")).expected is None


def test_pylint_reads_past_other_lines_and_parseable_lines_without_a_symbol() -> None:
    lines = [
        "a.py:1:0: C0114: Missing module docstring (missing-module-docstring)",
        "Your code has been rated at: 5/10",
        "b.py:3: [C0111, ] Missing docstring",
        "c.py:4: [W0611(unused-import), ] Unused import os",
    ]
    assert parse_pylint(lines, Ctx(tool="pylint")).raws == [
        Raw("pylint", "a.py", 1, "C0114", "Missing module docstring (missing-module-docstring)", at=0),
        Raw("pylint", "b.py", 3, "C0111", "Missing docstring", at=2),
        Raw("pylint", "c.py", 4, "W0611", "Unused import os (unused-import)", at=3),
    ]
