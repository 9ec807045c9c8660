"""The ratchet on real outputs: shifted code keeps its findings, one new finding fails, fallbacks say so."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from pm_agent.gates.findings import Finding, Ratchet, normalise_message, ratchet, render_findings

FIXTURES = Path(__file__).parent / "fixtures" / "findings"


@dataclass(frozen=True)
class Captured:
    command: str
    exit_code: int
    root: str
    output: str


def load(name: str) -> Captured:
    meta: dict[str, str] = {}
    lines = (FIXTURES / f"{name}.txt").read_text(encoding="utf-8").split("\n")
    while lines and lines[0].startswith("#@ "):
        key, _, value = lines.pop(0)[3:].partition(": ")
        meta[key] = value
    return Captured(meta["command"], int(meta["exit"]), meta["root"], "\n".join(lines))


def compare(baseline: str, current: str) -> Ratchet:
    """Each run relativised against the directory it ran in (the sample projects differ per case)."""
    base, cur = load(baseline), load(current)
    return ratchet(
        cur.command, base.output, base.exit_code, cur.output, cur.exit_code, root=cur.root, baseline_root=base.root
    )


SHIFTED = [
    ("ruff-concise-base", "ruff-concise-shift", 5),
    ("ruff-full-base", "ruff-full-shift", 5),
    ("mypy-base", "mypy-shift", 4),
    ("pytest-q-base", "pytest-q-shift", 5),
    ("flake8-base", "flake8-shift", 6),
    ("pylint-base", "pylint-shift", 12),
    ("unittest-base", "unittest-shift", 5),
    ("eslint-stylish-base", "eslint-stylish-shift", 6),
    ("tsc-base", "tsc-shift", 7),
    ("go-vet-base", "go-vet-shift", 3),
    ("go-test-base", "go-test-shift", 3),
    ("clippy-base", "clippy-shift", 4),
]


@pytest.mark.parametrize(("baseline", "current", "count"), SHIFTED)
def test_code_moved_down_three_lines_has_nothing_new(baseline: str, current: str, count: int) -> None:
    result = compare(baseline, current)
    assert result.passed, result.explanation
    assert result.rule == "findings"
    assert result.new == ()
    assert result.fixed == ()
    assert len(result.preexisting) == result.preexisting_count == count
    assert f"0 new, {count} pre-existing, 0 fixed" in result.explanation


ONE_NEW = [
    ("ruff-concise-base", "ruff-concise-new", ["pkg/mod.py:31: F401 `json` imported but unused"]),
    ("ruff-full-base", "ruff-full-new", ["pkg/mod.py:31: F401 `json` imported but unused"]),
    (
        "mypy-base",
        "mypy-new",
        ['pkg/mod.py:32: return-value Incompatible return value type (got "str", expected "int")'],
    ),
    ("pytest-q-base", "pytest-q-new", ["FAILED tests/test_mod.py::test_new_failure - assert 4 == 5"]),
    ("unittest-base", "unittest-new", ["FAIL tests_ut.test_u.TestU.test_new_fail - AssertionError: False is not true"]),
    ("eslint-stylish-base", "eslint-stylish-new", ["src/a.js:18: eqeqeq Expected '===' and instead saw '=='"]),
    ("tsc-base", "tsc-new", ["src/t.ts:16: TS2322 Type 'number' is not assignable to type 'string'."]),
    ("tsc5-base", "tsc5-new", ["src/t.ts:16: TS2322 Type 'number' is not assignable to type 'string'."]),
    ("go-vet-base", "go-vet-new", ["main.go:15: fmt.Printf format %s has arg 3 of wrong type int"]),
    ("go-test-base", "go-test-new", ["FAIL example.com/m::TestNew"]),
    (
        "pyright-base",
        "pyright-new",
        ['pkg/mod.py:32: reportReturnType Type "Literal[\'x\']" is not assignable to return type "int"'],
    ),
    (
        "clippy-base",
        "clippy-new",
        ["src/lib.rs:35: unused variable: `z`", "src/lib.rs:36: clippy::needless_return unneeded `return` statement"],
    ),
]


@pytest.mark.parametrize(("baseline", "current", "new"), ONE_NEW)
def test_one_new_finding_fails_and_is_named(baseline: str, current: str, new: list[str]) -> None:
    result = compare(baseline, current)
    assert not result.passed
    assert result.rule == "findings"
    assert render_findings(result.new) == new
    assert result.new_count == len(new)
    assert result.fixed == ()
    assert result.preexisting_count > 0
    assert "fails on the new findings" in result.explanation


def test_findings_the_task_removed_are_fixed() -> None:
    result = compare("mypy-new", "mypy-base")
    assert result.passed
    assert [(f.line, f.code) for f in result.fixed] == [(32, "return-value")]
    assert result.preexisting_count == 4


def test_doc_test_ids_keep_their_identity_when_the_doc_moves() -> None:
    result = compare("cargo-test-base", "cargo-test-new")  # `add (line 3)` is `add (line 6)` now
    assert result.passed, result.explanation
    assert result.preexisting_count == 2


def test_current_exit_zero_is_clean_and_lists_what_was_fixed() -> None:
    base = load("ruff-concise-base")
    result = ratchet(base.command, base.output, base.exit_code, "All checks passed!\n", 0)
    assert result.passed
    assert result.rule == "clean"
    assert result.fixed_count == 5
    assert "5 baseline findings fixed" in result.explanation


def test_clean_baseline_makes_every_current_finding_new() -> None:
    cur = load("ruff-concise-base")
    result = ratchet(cur.command, "All checks passed!\n", 0, cur.output, cur.exit_code)
    assert not result.passed
    assert result.rule == "findings"
    assert result.new_count == 5


def test_clean_baseline_and_unparsable_failure_fails_on_exit_status() -> None:
    result = ratchet("ruff check .", "All checks passed!\n", 0, "ruff: command not found\n", 127)
    assert not result.passed
    assert result.rule == "exit-status"
    assert "exit 127, baseline exit 0" in result.explanation


def test_a_crash_after_a_failing_baseline_is_not_a_pass() -> None:
    base, crash = load("ruff-concise-base"), load("ruff-config-error")
    result = ratchet(base.command, base.output, base.exit_code, crash.output, crash.exit_code)
    assert not result.passed
    assert result.rule == "exit-status"
    assert "not parsed" in result.explanation
    assert "exit 2, baseline exit 1" in result.explanation


def test_nonzero_exit_without_findings_passes_only_on_the_same_exit_code() -> None:
    empty, base = load("pytest-no-tests"), load("pytest-q-base")
    worse = ratchet(empty.command, base.output, base.exit_code, empty.output, empty.exit_code)
    assert (worse.passed, worse.rule) == (False, "exit-status")
    same = ratchet(empty.command, empty.output, empty.exit_code, empty.output, empty.exit_code)
    assert (same.passed, same.rule) == (True, "exit-status")
    assert "no worse than the baseline" in same.explanation


def test_a_new_collection_error_fails_although_fewer_tests_fail() -> None:
    result = compare("pytest-q-base", "pytest-collect-error")
    assert not result.passed
    assert render_findings(result.new) == ["ERROR tests_bad/test_imp.py"]
    assert result.fixed_count == 5


def test_unparsed_baseline_compares_exit_codes() -> None:
    cur = load("mypy-base")
    result = ratchet(cur.command, "Segmentation fault\n", 139, cur.output, cur.exit_code)
    assert not result.passed
    assert result.rule == "exit-status"
    assert "baseline output not parsed" in result.explanation


def test_a_tool_that_fell_silent_in_a_shape_read_output_does_not_hide_a_new_finding() -> None:
    ruff_base, ruff_new, mypy = load("ruff-concise-base"), load("ruff-concise-new"), load("mypy-base")
    # `make lint` names no tool: the baseline reads as mypy+ruff, the current (mypy now clean) as ruff only.
    result = ratchet("make lint", ruff_base.output + "\n" + mypy.output, 2, ruff_new.output, 2)
    assert not result.passed
    assert result.rule == "findings"
    assert render_findings(result.new) == ["pkg/mod.py:31: F401 `json` imported but unused"]
    assert result.fixed_count == 4
    assert "baseline read as mypy+ruff" in result.explanation


def _concise(*lines: int) -> str:
    return "".join(f"a.py:{n}:1: E501 Line too long (130 > 120)\n" for n in lines) + f"Found {len(lines)} errors.\n"


def test_findings_are_a_multiset_and_the_added_duplicate_is_reported() -> None:
    result = ratchet("ruff check .", _concise(10, 20), 1, _concise(10, 15, 20), 1)
    assert not result.passed
    assert [f.line for f in result.new] == [15]
    assert [f.line for f in result.preexisting] == [10, 20]
    fewer = ratchet("ruff check .", _concise(10, 20, 30), 1, _concise(13, 23), 1)
    assert fewer.passed
    assert fewer.fixed_count == 1


def test_absolute_paths_without_a_root_are_made_relative_to_their_common_directory() -> None:
    base = load("pyright-base")
    result = ratchet(base.command, base.output, 1, base.output, 1)
    assert result.passed
    assert {f.path for f in result.preexisting} == {"mod.py"}
    moved = load("pyright-new")  # ran in another directory: without roots nothing can be matched
    apart = ratchet(base.command, base.output, 1, moved.output, 1)
    assert not apart.passed
    assert apart.new_count == 5


def test_too_many_findings_to_compare_falls_back_to_exit_status() -> None:
    many = "".join(f"a.py:{n}:1: E501 Line too long\n" for n in range(100_001))
    result = ratchet("ruff check .", many, 1, many, 1)
    assert result.rule == "exit-status"
    assert result.passed
    assert "too many findings" in result.explanation


def test_render_findings_limits_and_formats() -> None:
    findings = [Finding(tool="ruff", path="a.py", line=n, code="F401", message="m") for n in range(1, 36)]
    lines = render_findings(findings)
    assert len(lines) == 31
    assert lines[0] == "a.py:1: F401 m"
    assert lines[-1] == "... and 5 more"
    assert render_findings(findings, limit=2) == ["a.py:1: F401 m", "a.py:2: F401 m", "... and 33 more"]
    bare = Finding(tool="tsc", path=None, line=None, code="TS5023", message="Unknown compiler option 'x'.")
    assert render_findings([bare]) == ["TS5023 Unknown compiler option 'x'."]


def test_message_normalisation_keeps_content_and_drops_line_numbers() -> None:
    assert normalise_message('Name "helper" already defined on line 14') == normalise_message(
        'Name "helper"  already defined on line 17'
    )
    assert (
        normalise_message("add_test.go:18: failed at line 15 of the table")
        == "add_test.go:N: failed at line N of the table"
    )
    assert normalise_message("src/lib.rs - add (line 6)") == "src/lib.rs - add (line N)"
    assert normalise_message("Line too long (116 > 79 characters)") == "Line too long (116 > 79 characters)"
    assert normalise_message("Reimport 'os' (imported line 1)") == "Reimport 'os' (imported line N)"
    assert normalise_message("Similar lines in 2 files\n==a:[3:10]") == "Similar lines in 2 files ==a:[N:N]"


def test_key_ignores_the_line_but_not_the_code_or_the_file() -> None:
    a = Finding(tool="mypy", path="a.py", line=3, code="arg-type", message="Bad")
    assert a.key == Finding(tool="mypy", path="a.py", line=30, code="arg-type", message="Bad").key
    assert a.key != Finding(tool="mypy", path="b.py", line=3, code="arg-type", message="Bad").key
    assert a.key != Finding(tool="mypy", path="a.py", line=3, code="assignment", message="Bad").key
    test = Finding(tool="pytest", path="t.py", line=None, code="FAILED", message="x", test_id="t.py::t")
    assert test.key == Finding(tool="pytest", path="t.py", line=None, code="ERROR", message="y", test_id="t.py::t").key
