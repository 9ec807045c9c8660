"""Justifications where a one-token change would go unnoticed: where they are read, what names a weakening,
how the words of the reason are counted, and the evidence lines.

Written against mutmut's survivors (make mutation).
"""

from __future__ import annotations

import pytest

from pm_agent.gates.justify import (
    MIN_REASON_WORDS,
    Judgement,
    Weakening,
    covers,
    judge_weakenings,
    justification_entries,
    reason_words,
)
from pm_agent.gates.models import AgentReport

TYPE_IGNORE = Weakening(
    "lint/type check", "src/calc.py", 3, "x = f()  # type: ignore[attr-defined]", "ti", ("attr-defined",)
)


def test_entries_come_from_both_risk_lists_then_both_summaries() -> None:
    report = AgentReport.from_payload(
        {
            "reviewNote": {"summary": "one\nb; c;d", "risks": ["r1", "  ", "r2"], "rollback": "revert"},
            "risks": ["s1", " "],
            "summary": "top; two",
        }
    )
    assert justification_entries(report) == ["r1", "r2", "s1", "one", "b", "c;d", "top", "two"]
    assert justification_entries(AgentReport.from_payload({"summary": "x", "risks": ["q"]})) == ["q", "x"]
    assert justification_entries(AgentReport()) == []


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ("src/calc.py:3 ATTR-DEFINED: the stub is wrong", 4),  # the code in any case is not a reason word
        ("src/calc.py:3 attr-defined: the stub is wrong", 4),
        ("calc.py:3: noqa type ignore pyright pylint disable eslint nolint allow line lines the stub", 2),
        ("calc.py calc.py src/calc.py: one two", 2),  # file names are not reason words
        ("calc.py attr-defined attr-defined", 0),
        ("Because Upstream", 2),
    ],
)
def test_reason_words(entry: str, words: int) -> None:
    assert reason_words(entry, TYPE_IGNORE) == words


def test_the_reason_needs_min_reason_words() -> None:
    assert MIN_REASON_WORDS == 3
    assert covers("src/calc.py:3 attr-defined: stub is wrong", TYPE_IGNORE, alone_in_file=False)
    assert not covers("src/calc.py:3 attr-defined: stub wrong", TYPE_IGNORE, alone_in_file=False)


@pytest.mark.parametrize(
    ("entry", "ok"),
    [
        ("src/calc.py:2-4: the stub for the extension is wrong", True),  # a span holding the line
        ("src/calc.py:4-6: the stub for the extension is wrong", False),
        ("calc.py lines 2 to 4: the stub for the extension is wrong", True),
        ("calc.py Line 3: the stub for the extension is wrong", True),
        ("calc.py line 2: the stub for the extension is wrong", False),
        ("calc.py ATTR-DEFINED: the stub for the extension is wrong", True),  # codes in any case
        ("calc.py attr-defined-x: the stub for the extension is wrong", False),  # another code
        ("xcalc.py:3: the stub for the extension is wrong", False),  # another file
        ("calc.pyc:3: the stub for the extension is wrong", False),
        ("see src/calc.py:3, the stub for the extension is wrong", True),
    ],
)
def test_what_names_the_weakening(entry: str, ok: bool) -> None:
    assert covers(entry, TYPE_IGNORE, alone_in_file=False) is ok


def test_the_file_alone_covers_its_only_weakening_unless_another_line_is_named() -> None:
    entry = "src/calc.py: the stub for the extension is wrong"
    assert covers(entry, TYPE_IGNORE, alone_in_file=True)
    assert not covers("src/calc.py:7: the stub for the extension is wrong", TYPE_IGNORE, alone_in_file=True)
    unknown_line = Weakening("lint/type check", "ruff.toml", None, "ignore = ['E501']", "ruff ignore += E501", ("",))
    assert not covers("ruff.toml line 1: long URLs in docstrings cannot wrap", unknown_line, alone_in_file=False)
    assert covers("ruff.toml: long URLs in docstrings cannot wrap", unknown_line, alone_in_file=True)


def test_judge_weakenings_counts_weakenings_per_file() -> None:
    second = Weakening("lint/type check", "src/calc.py", 9, "y = g()  # noqa", "noqa", ("noqa",))
    other = Weakening("lint/type check", "src/other.py", 1, "z = 1  # noqa", "noqa", ("noqa",))
    report = AgentReport.from_payload(
        {"risks": ["calc.py: generated code that we do not edit", "other.py: generated code that we do not edit"]}
    )
    judgement = judge_weakenings([TYPE_IGNORE, second, other], report)
    assert judgement.unjustified == [TYPE_IGNORE, second], "calc.py holds two: the file alone names neither"
    assert judgement.justified == [(other, "other.py: generated code that we do not edit")]


def test_where_quote_and_evidence_lines() -> None:
    no_line = Weakening("test runner", "pytest.ini", None, "addopts = -k x", "pytest addopts += -k x", ("-k x",))
    line_zero = Weakening("test runner", "pytest.ini", 0, "addopts", "what", ())
    long = Weakening("lint/type check", "a.py", 2, "x" * 170, "noqa", ())
    assert no_line.where() == "pytest.ini"
    assert line_zero.where() == "pytest.ini"
    assert TYPE_IGNORE.where() == "src/calc.py:3"
    assert no_line.quote() == "pytest.ini: pytest addopts += -k x: addopts = -k x"
    assert long.quote() == "a.py:2: noqa: " + "x" * 160
    judgement = Judgement(justified=[(TYPE_IGNORE, "y" * 210)], unjustified=[no_line])
    assert judgement.lines() == [
        "  UNJUSTIFIED pytest.ini: pytest addopts += -k x: addopts = -k x",
        "  justified   src/calc.py:3: ti: x = f()  # type: ignore[attr-defined]\n      by: " + "y" * 200,
    ]
