"""Format checks on real outputs (tests/gates/fixtures/findings/{ruff-format,black,prettier,gofmt,rustfmt}-*):
a finding per file the formatter would rewrite, one per file it cannot parse, and the ratchet between them."""

from __future__ import annotations

import pytest

from pm_agent.gates.findings import parse_findings, ratchet

from .test_findings_parsers import load, parse, where

OLD_PY, NEW_PY = ("pkg/old.py", None, "format"), ("pkg/new.py", None, "format")
OLD_JS = ("src/old.js", None, "format")
CASES = {
    "ruff-format-base": ("ruff-format", [OLD_PY]),
    "ruff-format-new": ("ruff-format", [NEW_PY, OLD_PY]),
    "ruff-format-syntax": ("ruff-format", [("pkg/broken.py", 1, "syntax"), OLD_PY]),
    "ruff-format-concise-new": ("ruff-format", [NEW_PY, OLD_PY]),
    "ruff-format-concise-syntax": ("ruff-format", [("pkg/broken.py", 1, "syntax"), OLD_PY]),
    "ruff06-format-new": ("ruff-format", [NEW_PY, OLD_PY]),
    "ruff06-format-syntax": ("ruff-format", [("pkg/broken.py", 1, "syntax"), OLD_PY]),
    "black-new": ("black", [NEW_PY, OLD_PY]),
    "black-syntax": ("black", [("pkg/broken.py", 1, "syntax"), OLD_PY]),
    "prettier-new": ("prettier", [("src/new.js", None, "format"), ("src/old.js", None, "format")]),
    "prettier-syntax": ("prettier", [("src/broken.js", 1, "syntax"), ("src/old.js", None, "format")]),
    "gofmt-new": ("gofmt", [("main.go", None, "format"), ("sub/new.go", None, "format")]),
    "gofmt-syntax": ("gofmt", [("main.go", None, "format"), ("sub/broken.go", 2, "syntax")]),
    "rustfmt-new": ("rustfmt", [("src/main.rs", None, "format"), ("src/util.rs", None, "format")]),
    "rustfmt-syntax": ("rustfmt", [("src/util.rs", 2, "syntax")]),
    "oxfmt-new": ("oxfmt", [("src/new.js", None, "format"), ("src/old.js", None, "format")]),
    "oxfmt-syntax": ("oxfmt", [("src/old.js", None, "format"), ("src/broken.js", 1, "syntax")]),
    "biome-format-new": ("biome", [("src/new.js", None, "format"), ("src/old.js", None, "format")]),
    # The parse error biome prints twice (two passes) and counts once ("Found 4 errors.") is one finding.
    "biome-format-syntax": (
        "biome",
        [("src/broken.js", 1, "parse"), ("src/broken.js", 1, "parse"), ("src/broken.js", None, "format"), OLD_JS],
    ),
    # Its two warnings (`!`: useConst, noUnusedVariables) do not fail biome: not findings.
    "biome-check-new": (
        "biome",
        [("src/new.js", 2, "lint/suspicious/noDoubleEquals"), ("src/old.js", 3, "lint/suspicious/noDoubleEquals")],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_unformatted_file_and_each_file_it_cannot_parse(name: str) -> None:
    fs = parse(name)
    parser, expected = CASES[name]
    assert (fs.parser, fs.note) == (parser, "")
    assert where(fs) == expected
    # black and rustfmt print absolute paths: made relative to the folder the check ran in.
    assert all(f.path is not None and not f.path.startswith("/") for f in fs.findings)


@pytest.mark.parametrize(
    ("prefix", "parser", "added"),
    [
        ("ruff-format-", "ruff-format", "pkg/new.py"),
        ("ruff-format-concise-", "ruff-format", "pkg/new.py"),
        ("ruff06-format-", "ruff-format", "pkg/new.py"),
        ("black-", "black", "pkg/new.py"),
        ("prettier-", "prettier", "src/new.js"),
        ("gofmt-", "gofmt", "sub/new.go"),
        ("rustfmt-", "rustfmt", "src/util.rs"),
        ("oxfmt-", "oxfmt", "src/new.js"),
        ("biome-format-", "biome", "src/new.js"),
    ],
)
def test_a_file_left_unformatted_is_the_one_new_finding(prefix: str, parser: str, added: str) -> None:
    base, new = load(prefix + "base"), load(prefix + "new")
    worse = ratchet(
        new.command, base.output, base.exit_code, new.output, new.exit_code, root=new.root, baseline_root=base.root
    )
    assert (worse.passed, worse.rule, worse.parser) == (False, "findings", parser)
    assert [(f.path, f.code) for f in worse.new] == [(added, "format")]
    assert worse.preexisting_count == 1
    same = ratchet(base.command, base.output, base.exit_code, base.output, base.exit_code, root=base.root)
    assert (same.passed, same.rule, same.new_count, same.preexisting_count) == (True, "findings", 0, 1)


@pytest.mark.parametrize(
    "prefix",
    ["ruff-format-", "ruff06-format-", "black-", "prettier-", "rustfmt-", "oxfmt-", "biome-format-", "biome-check-"],
)
def test_a_command_naming_no_formatter_reads_its_output_by_shape(prefix: str) -> None:
    run = load(prefix + "new")
    by_shape = parse_findings(
        "make format-check", run.output + "\nmake: *** [Makefile:9: format-check] Error 1\n", 2, root=run.root
    )
    assert where(by_shape) == where(parse(prefix + "new"))


def test_gofmt_is_never_guessed_from_bare_file_names() -> None:
    run = load("gofmt-new")
    assert not parse_findings("make format-check", run.output, 1, root=run.root).parsed


def test_a_line_gofmt_does_not_print_makes_its_list_unreadable() -> None:
    run = load("gofmt-new")
    broken = run.output + "\nopen sub/secret.go: permission denied\n"
    fs = parse_findings(run.command, broken, 1, root=run.root)
    assert not fs.parsed
    assert "permission denied" in fs.note


def test_a_summary_counting_more_files_than_listed_means_not_parsed() -> None:
    run = load("ruff06-format-new")
    cut = run.output.replace("Would reformat: pkg/new.py\n", "")  # "2 files would be reformatted" kept
    fs = parse_findings(run.command, cut, run.exit_code, root=run.root)
    assert not fs.parsed
    assert "reports 2 but 1" in fs.note
    prettier = load("prettier-new")
    fs = parse_findings(prettier.command, prettier.output.replace("[warn] src/new.js\n", ""), 1, root=prettier.root)
    assert "reports 2 but 1" in fs.note


def test_a_rustfmt_error_without_a_file_is_still_a_finding() -> None:
    fs = parse_findings("cargo fmt --check", "error: couldn't read src/gone.rs: No such file or directory\n", 1)
    assert [(f.path, f.code, f.message) for f in fs.findings] == [
        (None, "error", "couldn't read src/gone.rs: No such file or directory")
    ]
    then_diff = "error: something odd\nDiff in /r/src/a.rs:1:\n-x\n+y\n"
    assert where(parse_findings("cargo fmt --check", then_diff, 1, root="/r")) == [
        (None, None, "error"),
        ("src/a.rs", None, "format"),
    ]


def test_rustfmt_colours_and_charset_escapes_are_stripped() -> None:
    # rustfmt ends each coloured diff line with ESC ( B ESC [ m: a line must still read as `Diff in ...`.
    text = "\x1b(B\x1b[mDiff in /r/src/a.rs:3:\n\x1b[31m-x\n\x1b(B\x1b[m\x1b[32m+y\n"
    assert where(parse_findings("cargo fmt --check", text, 1, root="/r")) == [("src/a.rs", None, "format")]


def test_each_file_is_one_finding_however_many_hunks_it_has() -> None:
    text = "Diff in /r/src/a.rs:1:\n-x\n+y\nDiff in /r/src/a.rs at line 9:\n-x\n+y\n"
    assert where(parse_findings("cargo fmt --check", text, 1, root="/r")) == [("src/a.rs", None, "format")]


@pytest.mark.parametrize("lint_run", ["ruff-concise-base", "ruff-full-base"])
@pytest.mark.parametrize(
    ("name", "check"),
    [
        ("ruff-format-new", "ruff format --check ."),
        ("ruff-format-concise-new", "ruff format --check ."),
        ("ruff06-format-syntax", "ruff format --check ."),
        ("black-syntax", "black --check ."),
        ("prettier-syntax", "prettier --check ."),
        ("rustfmt-syntax", "cargo fmt --check"),
        ("rustfmt-new", "cargo fmt --check"),
        ("oxfmt-syntax", "oxfmt --check"),
    ],
)
def test_findings_of_a_linter_then_a_formatter_keep_the_order_the_output_printed_them(
    lint_run: str, name: str, check: str
) -> None:
    """`ruff check && <format check>`: each finding keeps the output line it came from (ruff's full output's
    arrows, which follow its upper-case codes, are not the formatter's)."""
    lint, run = load(lint_run), load(name)
    fs = parse_findings(f"ruff check --no-fix . && {check}", lint.output + "\n" + run.output, 1, root=run.root)
    assert fs.parsed, fs.note
    assert [f.tool for f in fs.findings] == ["ruff"] * 5 + [CASES[name][0]] * len(parse(name).findings)


def test_rustfmts_last_error_without_a_file_keeps_its_place() -> None:
    lint = load("ruff-concise-base")
    text = lint.output + "\nerror: couldn't read src/gone.rs: No such file or directory\n"
    fs = parse_findings("ruff check --no-fix . && cargo fmt --check", text, 1)
    assert [(f.tool, f.code) for f in fs.findings] == [("ruff", "F401")] * 2 + [("ruff", "F841")] * 2 + [
        ("ruff", "F811"),
        ("rustfmt", "error"),
    ]


def test_ruff_format_with_nothing_to_reformat_but_a_file_it_cannot_parse() -> None:
    text = "error: Failed to parse src/a.py:1:7: Expected a parameter\n2 files already formatted\n"
    assert where(parse_findings("ruff format --check .", text, 2)) == [("src/a.py", 1, "syntax")]


def test_a_ruff_diagnostic_other_than_a_syntax_error_keeps_its_code() -> None:
    text = "src/a.py:1:1: io-error: Permission denied (os error 13)\n1 file already formatted\n"
    fs = parse_findings("ruff format --check .", text, 2)
    assert [(f.path, f.code, f.message) for f in fs.findings] == [
        ("src/a.py", "io-error", "Permission denied (os error 13)")
    ]


def test_blacks_summary_counts_the_files_it_would_reformat_and_those_it_cannot() -> None:
    run = load("black-syntax")
    cut = run.output.replace("would reformat /tmp/fnd-fmt/py-syntax/pkg/old.py\n", "")
    fs = parse_findings(run.command, cut, run.exit_code, root=run.root)
    assert "reports 2 but 1" in fs.note


def test_prettiers_summary_counts_only_the_files_it_would_reformat() -> None:
    text = (
        "Checking formatting...\n[error] src/a.js: SyntaxError: Unexpected token (1:7)\n[error] > 1 | const = ;\n"
        "[warn] src/b.js\n[warn] Code style issues found in the above file. Run Prettier with --write to fix.\n"
    )
    fs = parse_findings("prettier --check .", text, 2)
    assert (fs.parsed, where(fs)) == (True, [("src/a.js", 1, "syntax"), ("src/b.js", None, "format")])


@pytest.mark.parametrize(
    "line",
    [
        "permission denied",  # no `: `, not a .go file
        "stat sub/gone.go: no such file or directory: sub/gone.go",  # ends in .go, but a message
    ],
)
def test_gofmt_lines_that_are_no_listed_file_make_the_list_unreadable(line: str) -> None:
    fs = parse_findings("gofmt -l .", f"main.go\n{line}\n", 1)
    assert not fs.parsed
    assert line in fs.note


def test_gofmt_list_read_past_blank_lines() -> None:
    assert where(parse_findings("gofmt -l .", "a.go\n\nsub/b.go\n", 1)) == [
        ("a.go", None, "format"),
        ("sub/b.go", None, "format"),
    ]


def test_rustfmt_reads_on_after_an_error_and_its_file() -> None:
    text = "error: expected item\n --> /r/src/a.rs:2:1\nDiff in /r/src/b.rs:1:\n-x\n+y\n"
    assert where(parse_findings("cargo fmt --check", text, 1, root="/r")) == [
        ("src/a.rs", 2, "syntax"),
        ("src/b.rs", None, "format"),
    ]


def test_prettiers_warnings_in_sentences_are_no_files() -> None:
    text = "Checking formatting...\n[warn] Ignored unknown option { tabs: true }.\n[warn] src/b.js\n" + (
        "[warn] Code style issues found in the above file. Run Prettier with --write to fix.\n"
    )
    assert where(parse_findings("prettier --check .", text, 1)) == [("src/b.js", None, "format")]


def test_biomes_new_lint_error_is_the_one_new_finding() -> None:
    base, new = load("biome-check-base"), load("biome-check-new")
    worse = ratchet(
        new.command, base.output, base.exit_code, new.output, new.exit_code, root=new.root, baseline_root=base.root
    )
    assert (worse.passed, worse.parser) == (False, "biome")
    assert [(f.path, f.code) for f in worse.new] == [("src/new.js", "lint/suspicious/noDoubleEquals")]


@pytest.mark.parametrize(
    ("name", "cut", "reports"),
    [
        ("oxfmt-new", "src/new.js (0ms)\n", "reports 2 but 1"),
        ("biome-check-new", "  × Using == may be unsafe if you are relying on type coercion.\n", "reports 2 but 1"),
    ],
)
def test_a_summary_counting_more_than_was_listed_means_not_parsed(name: str, cut: str, reports: str) -> None:
    run = load(name)
    assert cut in run.output
    fs = parse_findings(run.command, run.output.replace(cut, "", 1), run.exit_code, root=run.root)
    assert not fs.parsed
    assert reports in fs.note


def test_biome_with_nothing_to_report() -> None:
    fs = parse_findings("biome check .", "Checked 3 files in 1281µs. No fixes applied.\n", 0)
    assert (fs.parser, fs.findings) == ("biome", ())


def test_biomes_findings_after_eslints_keep_their_place() -> None:
    """(Not after ruff's: both print `Found N errors.`, and ruff's count would take biome's in.)"""
    lint, run = load("eslint-stylish-base"), load("biome-format-syntax")
    fs = parse_findings("npx eslint . && npx biome format .", lint.output + "\n" + run.output, 1, root=run.root)
    assert fs.parsed, fs.note
    eslint = len(parse_findings(lint.command, lint.output, lint.exit_code, root=lint.root).findings)
    assert [f.tool for f in fs.findings] == ["eslint"] * eslint + ["biome"] * 4
