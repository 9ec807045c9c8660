"""Choosing and running the findings parsers, on cases the captured fixtures do not show (mutmut's survivors)."""

from __future__ import annotations

import pytest

from pm_agent.gates.findings import MAX_FINDINGS, parse_findings, parsers_for_command
from pm_agent.gates.findings._common import Raw
from pm_agent.gates.findings.select import ParseResult, _shape


@pytest.mark.parametrize(
    ("command", "parsers"),
    [
        ('"ruff" check .', ["ruff"]),
        (".venv/bin/ruff check .;mypy src", ["ruff", "mypy"]),
        ("/opt/tools/bin/flake8 src", ["flake8"]),
        ("ruff format --check . && mypy .", ["ruff-format", "mypy"]),
        ("cargo -q clippy", ["clippy"]),
        ("cargo +nightly clippy", ["clippy"]),
        ("cargo -q -v --locked clippy", []),  # the subcommand is looked for in the next three words only
        ("cargo", []),
        ("go -C service vet ./...", ["go-vet"]),  # -C's value is not the subcommand
        ("go -C vet", []),
        ("pip install git+https://example.com/x.git#egg=x && pytest", ["pytest"]),  # a # inside a word
    ],
)
def test_parsers_for_command_words(command: str, parsers: list[str]) -> None:
    assert parsers_for_command(command) == parsers


def _raws(n: int) -> list[Raw]:
    return [Raw("ruff", "a.py", i, "F401", "m", at=i) for i in range(n)]


def test_finding_sets_keep_max_findings_and_say_what_was_left_out() -> None:
    full = ParseResult("ruff", _raws(MAX_FINDINGS)).to_set()
    assert (full.total, full.truncated, full.note, len(full.findings)) == (MAX_FINDINGS, False, "", MAX_FINDINGS)
    over = ParseResult("ruff", _raws(MAX_FINDINGS + 1)).to_set()
    assert (over.total, over.truncated, len(over.findings)) == (MAX_FINDINGS + 1, True, MAX_FINDINGS)
    assert over.note == f"{MAX_FINDINGS + 1} findings, the first {MAX_FINDINGS} kept"
    capped = ParseResult("ruff", _raws(MAX_FINDINGS + 1), capped=True).to_set()
    assert capped.note == f"over {MAX_FINDINGS + 1} findings, the first {MAX_FINDINGS} kept"
    few_capped = ParseResult("ruff", _raws(2), capped=True).to_set()
    assert (few_capped.truncated, few_capped.note) == (True, "")


def test_shape_mode_skips_a_parser_whose_signature_matched_without_findings() -> None:
    output = "==== ERRORS ====\nsrc/a.py:1:1: E501 line too long (120 > 79 characters)\n"
    found = parse_findings("make lint", output, 1)
    assert found.parser == "flake8"
    assert [(f.path, f.code) for f in found.findings] == [("src/a.py", "E501")]


def test_named_parsers_each_read_every_line() -> None:
    # claiming lines is for shape mode only: two named tools that both understand a line both report it
    found = parse_findings("ruff check . ; flake8 .", "a.py:1:1: F401 `os` imported but unused\n", 1)
    assert found.parser == "ruff+flake8"
    assert [f.tool for f in found.findings] == ["ruff", "flake8"]


def test_problems_of_several_parsers_are_all_named() -> None:
    output = "Found 2 errors.\nFound 3 errors in 1 file (checked 1 source file)\n"
    found = parse_findings("ruff check . && mypy .", output, 1)
    assert found.parser is None
    assert found.note == (
        "ruff: its summary reports 2 but 0 were parsed (output cut or in an unknown format); "
        "mypy: its summary reports 3 but 0 were parsed (output cut or in an unknown format)"
    )


def test_a_failing_exit_with_nothing_parsed_names_every_tool_run() -> None:
    found = parse_findings("ruff check . && mypy .", "Traceback: boom\n", 2)
    assert found.note == "ruff+mypy: exit 2 but no findings parsed (a crash or config error?)"


def test_one_tool_keeps_its_own_order() -> None:
    # go test reports a package's failed tests at the package's closing line, after its compile errors
    output = "--- FAIL: TestA (0.00s)\n./a.go:3:1: vet says no\nFAIL\texample.com/a\t0.01s\n"
    found = parse_findings("go test ./...", output, 1)
    assert [(f.path, f.test_id) for f in found.findings] == [("a.go", None), (None, "example.com/a::TestA")]


def test_shape_signatures_match_at_the_start_of_any_line() -> None:
    # PARSERS is built at import; this checks the helper it is built with, on an output's later line
    shape = _shape(r"^Ran \d+ tests? in ")
    assert shape.search("....\nRan 4 tests in 0.01s\n")
    assert not shape.search("....\n  Ran 4 tests in 0.01s\n")
