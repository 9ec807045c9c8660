"""Baseline records of environment commands, field by field: mutmut's survivors (make mutation)."""

from __future__ import annotations

from typing import Any

from pm_agent.gates.environment import Baseline, BaselineCommand, baseline_entry, relative_output
from pm_agent.gates.ward import CommandResult

RUFF_FINDING = "/w/repo/pkg/mod.py:1:8: F401 [*] `os` imported but unused\nFound 1 error.\n"


def _result(**fields: Any) -> CommandResult:
    values: dict[str, Any] = {"cmd": "ruff check .", "exit_code": 1, "duration_ms": 5, "output_tail": "tail"}
    return CommandResult(**{**values, **fields})


def _entry(**fields: Any) -> BaselineCommand:
    values: dict[str, Any] = {"key": "lint_command", "name": "lint", "command": "ruff check .", "exit_code": 1}
    return BaselineCommand(**{**values, "duration_ms": 5, **fields})


def test_summary_names_findings_only_for_a_failed_parsed_run() -> None:
    assert _entry(parser="ruff", findings=3).summary() == "exit 1, 3 finding(s) (ruff)"
    assert _entry(exit_code=0, parser="ruff").summary() == "exit 0"
    assert _entry(parser=None).summary() == "exit 1"
    assert _entry(cannot_run="exit 127: ruff: not found").summary() == "cannot run: exit 127: ruff: not found"


def test_a_failing_run_without_readable_findings_is_blind_to_new_failures() -> None:
    """The ratchet compares findings where it reads them; otherwise only the exit status."""
    assert _entry(parser=None).blind
    assert _entry(parser="ruff", output_complete=False).blind  # too much output kept to compare findings
    assert not _entry(parser="ruff").blind
    assert not _entry(exit_code=0, parser=None).blind
    assert not _entry(parser=None, cannot_run="exit 127: sh: 1: xo: not found").blind
    assert _entry(parser="ruff").ratchet_note() == "gates will fail only on new findings"
    assert "sees only a change of exit status, not a new failure inside it" in _entry(parser=None).ratchet_note()


def test_baseline_finds_a_command_by_key_and_by_command_line() -> None:
    lint = _entry()
    tests = _entry(key="test_command", name="tests", command="pytest -q")
    baseline = Baseline(sha="abc", commands=(lint, tests))
    assert baseline.get("test_command") is tests
    assert baseline.get("lint_command") is lint
    assert baseline.get("build_command") is None
    assert baseline.for_command("pytest -q") is tests
    assert baseline.for_command("ruff check .") is lint
    assert baseline.for_command("pytest") is None


def test_relative_output_strips_the_working_directory_with_or_without_a_slash() -> None:
    assert relative_output(_result(output=RUFF_FINDING, cwd="/w/repo")).startswith("pkg/mod.py:1:8: F401")
    assert relative_output(_result(output=RUFF_FINDING, cwd="/w/repo/")).startswith("pkg/mod.py:1:8: F401")
    assert relative_output(_result(output=RUFF_FINDING, cwd="")) == RUFF_FINDING
    assert relative_output(_result(output=None, output_tail="at /w/repo/a.py", cwd="/w/repo")) == "at a.py"
    assert relative_output(_result(output="", output_tail="tail", cwd="/w/repo")) == ""


def test_baseline_entry_keeps_every_field_of_the_run() -> None:
    result = _result(
        output=RUFF_FINDING,
        output_tail="Found 1 error.",
        cwd="/w/repo",
        exit_code=1,
        duration_ms=42,
        output_complete=False,
    )
    entry = baseline_entry("lint_command", "lint", result, 30.0)
    assert entry.model_dump() == {
        "key": "lint_command",
        "name": "lint",
        "command": "ruff check .",
        "cwd": "/w/repo",
        "exit_code": 1,
        "duration_ms": 42,
        "timed_out": False,
        "output_tail": "Found 1 error.",
        "output": RUFF_FINDING.replace("/w/repo/", ""),
        "output_complete": False,
        "parser": "ruff",
        "findings": 1,
        "cannot_run": None,
    }


def test_a_clean_run_is_parsed_as_clean_and_a_timed_out_one_says_after_how_long() -> None:
    clean = baseline_entry("lint_command", "lint", _result(exit_code=0, output="All checks passed!\n"), 30.0)
    assert (clean.parser, clean.findings) == ("ruff", 0)
    late = baseline_entry("lint_command", "lint", _result(exit_code=-9, timed_out=True, output=""), 2.5)
    assert late.timed_out
    assert late.cannot_run == "timed out after 2.5s"
