"""Reading the final review's findings: lenient about form, refused with a reason when unreadable."""

from __future__ import annotations

import pytest

from pm_agent.engine.review_findings import (
    Finding,
    ReviewFormatError,
    dump_findings,
    format_help,
    load_findings,
    read_findings,
)

DOC = """\
# Final review

Two problems.

```yaml
findings:
  - id: F1
    severity: high
    file: src/calc/add.py
    line: 3
    finding: add() ignores its second argument
    fix: return a + b
  - id: F2
    severity: low
    file: README.md
    finding: the README does not mention add()
```
"""


def test_reads_the_documented_format() -> None:
    found = read_findings(DOC)
    assert found == [
        Finding(
            id="F1",
            severity="high",
            file="src/calc/add.py",
            line=3,
            finding="add() ignores its second argument",
            fix="return a + b",
        ),
        Finding(id="F2", severity="low", file="README.md", line=None, finding="the README does not mention add()"),
    ]
    assert found[0].describe() == "F1 (high) src/calc/add.py:3: add() ignores its second argument"
    assert found[1].where == "README.md"


def test_the_prompts_example_reads_back() -> None:
    found = read_findings(format_help())
    assert [(f.id, f.severity, f.file, f.line) for f in found] == [("F1", "high", "src/pkg/module.py", 12)]


@pytest.mark.parametrize(
    "text",
    [
        "```yaml\nfindings: []\n```\n",
        "# Review\n\nAll good.\n\n```yaml\nfindings:\n```\n",
        "```yaml\nfindings: none\n```",
        "findings: []",
        "None",
        "no findings.",
    ],
)
def test_clean_reviews(text: str) -> None:
    assert read_findings(text) == []


def test_lenient_keys_synonyms_and_locations() -> None:
    text = """\
```yml
- Severity: Major
  Path: src/a.py:12
  Description: off by one
  Suggestion: use <=
- level: nit
  location: docs/x.md
  lines: "4-9"
  issue: typo
- severity: BLOCKER
  problem: secrets in the log
```
"""
    found = read_findings(text)
    assert [(f.id, f.severity, f.file, f.line, f.finding, f.fix) for f in found] == [
        ("F1", "high", "src/a.py", 12, "off by one", "use <="),
        ("F2", "info", "docs/x.md", 4, "typo", ""),
        ("F3", "critical", "", None, "secrets in the log", ""),
    ]
    assert found[2].where == "the branch"


def test_one_finding_without_the_list_and_a_plain_fence() -> None:
    text = "Review:\n\n```\nfindings:\n  severity: medium\n  finding: no test for empty input\n```\n"
    assert [(f.severity, f.finding) for f in read_findings(text)] == [("medium", "no test for empty input")]
    bare = "```yaml\nseverity: low\nfinding: a long function\n```"
    assert [f.finding for f in read_findings(bare)] == ["a long function"]


def test_duplicate_and_numeric_ids_are_made_unique() -> None:
    text = "findings:\n  - {id: 1, severity: low, finding: a}\n  - {id: 1, severity: low, finding: b}\n"
    assert [f.id for f in read_findings(text)] == ["1", "1-2"]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("```yaml\nfindings: [\n```", "the findings block is not valid YAML at line"),
        ("Looks fine to me, ship it", "no findings list found"),
        ("```yaml\nfindings:\n  - severity: high\n```", "finding 1: no `finding` text"),
        ("```yaml\nfindings:\n  - finding: x\n```", "finding 1: no `severity`: one of critical, high"),
        ("```yaml\nfindings:\n  - {severity: urgent, finding: x}\n```", "severity 'urgent' is not one of"),
        ("```yaml\nfindings:\n  - just a sentence\n```", "finding 1: 'just a sentence' is text"),
        ("```yaml\nfindings: 3\n```", "must be a list of mappings, not int"),
        ("```yaml\nsummary: fine\n```", "the YAML has no `findings:` key (found: summary)"),
        ("```yaml\nfindings: []\n```\n```yaml\nfindings: []\n```", "2 YAML blocks list findings"),
    ],
)
def test_refused_with_the_reason(text: str, reason: str) -> None:
    with pytest.raises(ReviewFormatError) as caught:
        read_findings(text)
    assert reason in str(caught.value)


def test_every_problem_is_named_at_once() -> None:
    text = "findings:\n  - severity: high\n  - {severity: low, finding: fine}\n  - finding: no severity\n"
    with pytest.raises(ReviewFormatError) as caught:
        read_findings(text)
    assert str(caught.value).startswith("finding 1: no `finding` text")
    assert "finding 3: no `severity`" in str(caught.value)
    assert "finding 2" not in str(caught.value)


def test_findings_survive_the_event_payload() -> None:
    found = read_findings(DOC)
    assert load_findings(dump_findings(found)) == found
    assert load_findings(None) == []
