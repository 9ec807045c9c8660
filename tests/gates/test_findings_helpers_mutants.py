"""The findings helpers the parsers share, and the ratchet's fallbacks, with exact outputs.

Written against mutmut's survivors (make mutation); whole parses are in test_findings_mutants.py.
"""

from __future__ import annotations

from pm_agent.gates.findings import Finding, parse_findings, ratchet, render_findings
from pm_agent.gates.findings._common import Ctx, norm_root
from pm_agent.gates.findings.models import finding_key, one_line


def test_one_line_flattens_and_cuts_at_the_limit() -> None:
    assert one_line("a\n  b\tc") == "a b c"
    assert one_line("x" * 5, limit=5) == "xxxxx"
    assert one_line("x" * 6, limit=5) == "xx..."


def test_norm_root_and_paths_under_it() -> None:
    assert norm_root("C:\\w\\repo\\") == "C:/w/repo/"
    assert norm_root("/w/repo//") == "/w/repo/"
    assert norm_root("") is None
    assert norm_root(None) is None
    ctx = Ctx(tool="t", root="/w/repo/")
    assert ctx.path(" .\\src\\a.py ") == "src/a.py"
    assert ctx.path("/w/repo/./b.py") == "b.py"
    assert ctx.message("see /w/repo/a.py now") == "see a.py now"
    assert Ctx(tool="t").message("see /w/repo/a.py") == "see /w/repo/a.py"


def test_finding_key_leaves_empty_parts_empty() -> None:
    assert finding_key("ruff", None, None, "msg at line 3", None) == "ruff|||msg at line N"


def test_render_findings_limit() -> None:
    found = [Finding(tool="ruff", path="a.py", line=i, code="F1", message="m") for i in range(3)]
    assert render_findings(found, limit=2) == ["a.py:0: F1 m", "a.py:1: F1 m", "... and 1 more"]
    assert render_findings(found, limit=3) == ["a.py:0: F1 m", "a.py:1: F1 m", "a.py:2: F1 m"]
    assert render_findings(found, limit=0) == ["... and 3 more"]


def test_render_a_failing_test_with_and_without_a_code() -> None:
    plain = Finding(tool="pytest", path=None, line=None, code=None, message="boom", test_id="t::x")
    coded = Finding(tool="pytest", path="a.py", line=None, code="FAILED", message="", test_id="t::x")
    assert render_findings([plain, coded]) == ["t::x - boom", "FAILED t::x"]


def test_notes_when_nothing_is_parsed() -> None:
    assert parse_findings("./check.sh", "nothing here", 0).note == "no parser recognised the output"
    assert parse_findings("./check.sh", "nothing here", 3).note == (
        "no known tool: exit 3 but no findings parsed (a crash or config error?)"
    )
    assert parse_findings("ruff check .", "garbage", 1).note == (
        "ruff: exit 1 but no findings parsed (a crash or config error?)"
    )


def test_ratchet_fallbacks_say_why_and_compare_exit_codes() -> None:
    worse = ratchet("./x.sh", "garbage", 1, "garbage2", 2)
    assert not worse.passed
    assert worse.explanation == (
        "rule exit-status (current output not parsed: no known tool: exit 2 but no findings parsed "
        "(a crash or config error?)): exit 2, baseline exit 1: worse than the baseline"
    )
    same = ratchet("./x.sh", "garbage", 1, "garbage2", 1)
    assert same.passed
    assert same.explanation.endswith("exit 1, baseline exit 1: no worse than the baseline")
    clean = ratchet("ruff check .", "garbage", 1, "", 0)
    assert clean.explanation == "rule clean: exit 0 (baseline exit 1, its output not parsed)"
    assert clean.fixed == ()


def test_ratchet_when_only_the_baseline_is_unparsed_names_the_current_parser() -> None:
    current = "pkg/a.py:1:1: F401 `os` imported but unused\nFound 1 error.\n"
    result = ratchet("ruff check .", "garbage", 1, current, 1)
    assert result.rule == "exit-status"
    assert result.parser == "ruff"
    assert result.passed
    assert result.explanation.startswith("rule exit-status (baseline output not parsed: ruff: exit 1 but no findings")
