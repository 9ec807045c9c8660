"""The ratchet and the evidence lines, on cases the captured runs do not show (mutmut's survivors)."""

from __future__ import annotations

from pm_agent.gates.findings import Finding, ratchet, render_finding
from pm_agent.gates.findings._common import HARD_CAP

SUMMARY = "==== 1 failed in 0.10s ===="


def _flake8(*lines: str) -> str:
    return "".join(f"{line}\n" for line in lines)


def test_a_finding_is_new_when_its_tool_code_or_test_differs() -> None:
    # shape mode: the baseline's line reads as ruff ([*] marks a fix), the current one as flake8
    other_tool = ratchet("make lint", "a.py:1:1: F401 [*] `os` unused\n", 1, "a.py:1:1: F401 `os` unused\n", 1)
    assert (other_tool.passed, other_tool.new_count, other_tool.fixed_count) == (False, 1, 1)
    other_code = ratchet("flake8 .", _flake8("a.py:1:1: E501 same text"), 1, _flake8("a.py:1:1: W291 same text"), 1)
    assert [f.code for f in other_code.new] == ["W291"]
    other_test = ratchet(
        "pytest",
        f"FAILED tests/a.py::test_one - assert 0\n{SUMMARY}\n",
        1,
        f"FAILED tests/a.py::test_two - assert 0\n{SUMMARY}\n",
        1,
    )
    assert [f.test_id for f in other_test.new] == ["tests/a.py::test_two"]
    assert [f.test_id for f in other_test.fixed] == ["tests/a.py::test_one"]


def test_without_a_root_the_shared_directory_leaves_paths_and_messages() -> None:
    base = _flake8("/w/repo/src/a.py:1:1: E501 too long")
    cur = _flake8(
        "/w/repo/src/a.py:1:1: E501 too long",
        "/w/repo/src/b.py:2:1: F401 see /w/repo/src/a.py for the import",
        "rel.py:3:1: E302 expected 2 blank lines",
    )
    result = ratchet("flake8 .", base, 1, cur, 1)
    assert [(f.path, f.message) for f in result.new] == [
        ("b.py", "see a.py for the import"),
        ("rel.py", "expected 2 blank lines"),
    ]
    assert [f.path for f in result.preexisting] == ["a.py"]


def test_paths_sharing_only_the_filesystem_root_are_left_whole() -> None:
    cur = _flake8("/a/x.py:1:1: E501 see http://example.com/doc", "/b/y.py:1:1: E501 too long")
    result = ratchet("flake8 .", "", 0, cur, 1)
    assert [(f.path, f.message) for f in result.new] == [
        ("/a/x.py", "see http://example.com/doc"),
        ("/b/y.py", "too long"),
    ]


def test_with_a_root_paths_outside_it_stay_absolute() -> None:
    cur = _flake8("/usr/lib/x.py:1:1: E501 too long", "/usr/lib/y.py:1:1: E501 too long")
    result = ratchet("flake8 .", "", 0, cur, 1, root="/w/repo")
    assert [f.path for f in result.new] == ["/usr/lib/x.py", "/usr/lib/y.py"]


def test_a_clean_baseline_keeps_nothing_even_when_it_printed_findings() -> None:
    # ruff --exit-zero prints its findings and exits 0: the baseline has nothing to keep, nothing to fix
    printed = _flake8("a.py:1:1: F401 `os` imported but unused")
    worse = ratchet("ruff check --exit-zero .", printed, 0, printed, 1)
    assert (worse.passed, worse.rule, worse.new_count, worse.preexisting_count) == (False, "findings", 1, 0)
    clean = ratchet("ruff check --exit-zero .", printed, 0, "", 0)
    assert (clean.fixed, clean.explanation) == ((), "rule clean: exit 0")


def test_clean_run_counts_the_baseline_findings_it_fixed() -> None:
    base = _flake8("a.py:1:1: F401 `os` imported but unused", "a.py:2:1: E501 too long")
    result = ratchet("flake8 .", base, 1, "", 0)
    assert result.explanation == "rule clean: exit 0 (baseline exit 1; 2 baseline findings fixed)"
    assert result.fixed_count == 2
    assert [(f.path, f.line, f.code) for f in result.fixed] == [("a.py", 1, "F401"), ("a.py", 2, "E501")]


def test_too_many_current_findings_fall_back_to_exit_codes() -> None:
    cur = "".join(f"a.py:{i}:1: E501 too long\n" for i in range(1, HARD_CAP + 2))
    result = ratchet("flake8 .", _flake8("a.py:1:1: E501 too long"), 1, cur, 1)
    assert (result.rule, result.passed, result.parser) == ("exit-status", True, "flake8")
    assert result.explanation == (
        "rule exit-status (too many findings to compare): exit 1, baseline exit 1: no worse than the baseline"
    )


def test_an_unparsed_baseline_with_another_exit_code_is_worse() -> None:
    result = ratchet("flake8 .", "Traceback: boom\n", 2, _flake8("a.py:1:1: E501 too long"), 1)
    assert (result.rule, result.passed, result.parser) == ("exit-status", False, "flake8")
    assert result.explanation.endswith("exit 1, baseline exit 2: worse than the baseline")


def test_render_a_finding_without_a_path() -> None:
    assert render_finding(Finding(tool="tsc", path=None, line=3, code="TS6053", message="m")) == "TS6053 m"
    assert render_finding(Finding(tool="tsc", path="a.ts", line=None, code=None, message="m")) == "a.ts: m"
