"""Findings parsers on real tool outputs (tests/gates/fixtures/findings, captured from small sample projects)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic import ValidationError

from pm_agent.gates.findings import Finding, FindingSet, parse_findings, parsers_for_command

FIXTURES = Path(__file__).parent / "fixtures" / "findings"


@dataclass(frozen=True)
class Captured:
    """One captured run: the `#@` header (tool, command, exit, root) and the output as the tool printed it."""

    tool: str
    command: str
    exit_code: int
    root: str
    output: str


def load(name: str) -> Captured:
    meta: dict[str, str] = {}
    text = (FIXTURES / f"{name}.txt").read_text(encoding="utf-8")
    lines = text.split("\n")
    while lines and lines[0].startswith("#@ "):
        key, _, value = lines.pop(0)[3:].partition(": ")
        meta[key] = value
    return Captured(meta["tool"], meta["command"], int(meta["exit"]), meta["root"], "\n".join(lines))


def parse(name: str, *, with_root: bool = True) -> FindingSet:
    run = load(name)
    return parse_findings(run.command, run.output, run.exit_code, root=run.root if with_root else None)


def where(fs: FindingSet) -> list[tuple[str | None, int | None, str | None]]:
    return [(f.path, f.line, f.code) for f in fs.findings]


def test_every_fixture_names_its_tool_command_and_exit() -> None:
    names = sorted(p.stem for p in FIXTURES.glob("*.txt"))
    assert len(names) >= 60
    for name in names:
        run = load(name)
        assert run.tool, name
        assert run.command, name
        assert run.root.startswith("/"), name


RUFF_BASE = [
    ("pkg/mod.py", 1, "F401"),
    ("pkg/mod.py", 2, "F401"),
    ("pkg/mod.py", 10, "F841"),
    ("pkg/mod.py", 15, "F841"),
    ("pkg/mod.py", 19, "F811"),
]


@pytest.mark.parametrize("name", ["ruff-concise-base", "ruff-full-base"])
def test_ruff_concise_and_full_formats(name: str) -> None:
    fs = parse(name)
    assert fs.parser == "ruff"
    assert where(fs) == RUFF_BASE
    assert fs.findings[0].message == "`os` imported but unused"
    assert fs.findings[0].tool == "ruff"


def test_ruff_syntax_errors_and_config_error() -> None:
    assert [f.code for f in parse("ruff-syntax").findings] == ["invalid-syntax", "invalid-syntax"]
    broken = parse("ruff-config-error")
    assert not broken.parsed
    assert "exit 2" in broken.note


def test_flake8() -> None:
    fs = parse("flake8-base")
    assert [f.code for f in fs.findings] == ["F401", "F401", "F841", "F841", "F811", "E501"]
    assert fs.findings[4].message == "redefinition of unused 'helper' from line 14"


def test_pylint_default_and_parseable_agree() -> None:
    default, parseable = parse("pylint-base"), parse("pylint-parseable-base")
    assert default.parser == parseable.parser == "pylint"
    assert len(default.findings) == 12
    assert where(default) == where(parseable)
    assert [f.key for f in default.findings] == [f.key for f in parseable.findings]
    assert default.findings[1].message == "Missing module docstring (missing-module-docstring)"


def test_mypy_plain_columns_and_pretty() -> None:
    plain = parse("mypy-base")
    assert [(f.line, f.code) for f in plain.findings] == [
        (10, "assignment"),
        (11, "return-value"),
        (11, "arg-type"),
        (19, "no-redef"),
    ]
    assert plain.findings[3].message == 'Name "helper" already defined on line 14'
    columns, pretty = parse("mypy-columns-base"), parse("mypy-pretty-base")
    assert where(columns) == where(pretty)
    # --pretty wraps the first message over two lines: joined, it is the plain message again.
    assert pretty.findings[0].message == plain.findings[0].message


def test_mypy_notes_are_not_findings_and_crashes_are_not_parsed() -> None:
    notes = parse("mypy-notes")
    assert [f.code for f in notes.findings] == ["import-not-found", "override", "arg-type"]
    assert all("Revealed type" not in f.message for f in notes.findings)
    assert [f.code for f in parse("mypy-syntax").findings] == ["syntax", "syntax"]
    config = parse("mypy-config-error")
    assert not config.parsed
    assert config.findings == ()


def test_pyright_paths_relative_to_root_and_rules_from_detail_lines() -> None:
    fs = parse("pyright-base")
    assert where(fs) == [
        ("pkg/mod.py", 10, "reportAssignmentType"),
        ("pkg/mod.py", 11, "reportReturnType"),
        ("pkg/mod.py", 11, "reportArgumentType"),
        ("pkg/mod.py", 14, "reportRedeclaration"),
    ]
    absolute = parse("pyright-base", with_root=False)
    assert absolute.findings[0].path == "/tmp/fnd/py/base/pkg/mod.py"


PYTEST_IDS = {
    "tests/test_mod.py::test_fail",
    "tests/test_mod.py::test_param[1-2]",
    "tests/test_mod.py::test_param[x y-z - w]",
    "tests/test_mod.py::TestC::test_m",
    "tests/test_mod.py::test_uses_broken",
}


@pytest.mark.parametrize("name", ["pytest-q-base", "pytest-default-base", "pytest-rA-base", "pytest-tbno-base"])
def test_pytest_short_summary(name: str) -> None:
    fs = parse(name)
    assert fs.parser == "pytest"
    assert {f.test_id for f in fs.findings} == PYTEST_IDS
    by_id = {f.test_id: f for f in fs.findings}
    assert by_id["tests/test_mod.py::test_uses_broken"].code == "ERROR"
    assert by_id["tests/test_mod.py::test_param[x y-z - w]"].message == "AssertionError: assert 'x y' == 'z - w'"
    assert by_id["tests/test_mod.py::test_fail"].path == "tests/test_mod.py"


def test_pytest_without_short_summary_uses_verbose_lines_then_section_titles() -> None:
    assert {f.test_id for f in parse("pytest-v-rN-base").findings} == PYTEST_IDS
    titles = parse("pytest-q-rN-base")
    assert titles.parser == "pytest"
    assert sorted((f.code or "", f.test_id or "") for f in titles.findings) == [
        ("ERROR", "test_uses_broken"),
        ("FAILED", "TestC.test_m"),
        ("FAILED", "test_fail"),
        ("FAILED", "test_param[1-2]"),
        ("FAILED", "test_param[x y-z - w]"),
    ]


def test_pytest_printing_only_counts_is_not_parsed_and_says_why() -> None:
    fs = parse("pytest-tbno-rN-base")  # -q --tb=no -rN: progress dots and the closing counts, no test ids
    assert not fs.parsed
    assert "reports 5 but 0" in fs.note


def test_pytest_crash_or_missing_closing_line_is_not_parsed() -> None:
    run = load("pytest-q-base")
    crashed = run.output + "\nINTERNALERROR> Traceback (most recent call last):\n"
    assert "INTERNALERROR" in parse_findings(run.command, crashed, 3).note
    killed = "\n".join(line for line in run.output.split("\n") if " in 0." not in line)
    fs = parse_findings(run.command, killed, 1)
    assert not fs.parsed
    assert "closing counts line is missing" in fs.note


def test_pytest_collection_error_is_a_finding_and_no_tests_is_not_parsed() -> None:
    fs = parse("pytest-collect-error")
    assert [(f.code, f.test_id) for f in fs.findings] == [("ERROR", "tests_bad/test_imp.py")]
    empty = parse("pytest-no-tests")
    assert not empty.parsed
    assert "exit 5" in empty.note


def test_pytest_output_cut_at_the_top_is_not_parsed() -> None:
    run = load("pytest-q-base")
    cut = "\n".join(line for line in run.output.split("\n") if "test_param[1-2] - " not in line)
    fs = parse_findings(run.command, cut, run.exit_code)
    assert not fs.parsed
    assert "reports 5 but 4" in fs.note


def test_unittest_ids_subtests_and_import_failures() -> None:
    fs = parse("unittest-base")
    assert [(f.code, f.test_id) for f in fs.findings] == [
        ("ERROR", "tests_ut.test_u.TestU.test_error"),
        ("ERROR", "unittest.loader._FailedTest.tests_ut.test_u_imp"),
        ("FAIL", "tests_ut.test_u.TestU.test_fail"),
        ("FAIL", "tests_ut.test_u.TestU.test_sub (i=1)"),
        ("FAIL", "tests_ut.test_u.TestU.test_sub (i=2)"),
    ]
    assert fs.findings[2].message == "AssertionError: 3 != 4"
    assert len(parse("unittest-v-base").findings) == 4


def test_unittest_older_python_format_gets_the_same_id() -> None:
    old = "=" * 70 + "\nFAIL: test_fail (tests_ut.test_u.TestU)\n" + "-" * 70 + "\nAssertionError: 3 != 4\n\n"
    old += "-" * 70 + "\nRan 1 test in 0.001s\n\nFAILED (failures=1)\n"
    fs = parse_findings("python -m unittest", old, 1)
    assert [f.test_id for f in fs.findings] == ["tests_ut.test_u.TestU.test_fail"]


ESLINT_ERRORS = [
    ("src/a.js", 1, "no-unused-vars"),
    ("src/a.js", 4, "eqeqeq"),
    ("src/a.js", 5, "no-undef"),
    ("src/a.js", 7, "no-undef"),
    ("src/a.js", 11, "no-redeclare"),
    ("src/b.js", 3, None),
]


@pytest.mark.parametrize("name", ["eslint-stylish-base", "eslint-unix-base", "eslint-compact-base"])
def test_eslint_formats_keep_errors_not_warnings(name: str) -> None:
    fs = parse(name)
    assert fs.parser == "eslint"
    assert where(fs) == ESLINT_ERRORS
    assert all("console statement" not in f.message for f in fs.findings)


def test_eslint_warnings_count_under_max_warnings() -> None:
    run = load("eslint-stylish-base")
    fs = parse_findings("npx eslint --max-warnings 0 src", run.output, 1, root=run.root)
    assert len(fs.findings) == 7
    assert ("src/a.js", 5, "no-console") in where(fs)


def test_eslint_crash_is_not_parsed() -> None:
    assert not parse("eslint-config-error").parsed


TSC_BASE = [
    ("src/t.ts", 1, "TS2322"),
    ("src/t.ts", 4, "TS2322"),
    ("src/t.ts", 8, "TS2741"),
    ("src/t.ts", 10, "TS2323"),
    ("src/t.ts", 10, "TS2393"),
    ("src/t.ts", 11, "TS2323"),
    ("src/t.ts", 11, "TS2393"),
]


@pytest.mark.parametrize("name", ["tsc-base", "tsc-pretty-base", "tsc5-base"])
def test_tsc_plain_and_pretty(name: str) -> None:
    fs = parse(name)
    assert fs.parser == "tsc"
    assert where(fs) == TSC_BASE
    assert fs.findings[0].message == "Type 'string' is not assignable to type 'number'."


def test_tsc_pretty_with_colours_and_related_locations() -> None:
    fs = parse("tsc5-pretty-new")
    assert len(fs.findings) == 8
    assert all(f.code and f.code.startswith("TS") for f in fs.findings)


def test_go_vet_and_go_build_diagnostics() -> None:
    assert where(parse("go-vet-base")) == [("sub/sub.go", 5, None), ("sub/sub.go", 6, None), ("main.go", 7, None)]
    typeerror = parse("go-vet-typeerror")
    assert typeerror.findings[-1].message == "undeclared name: undefinedName"
    assert typeerror.findings[-1].path == "add.go"


def test_go_test_failures_with_package_and_build_failures() -> None:
    ids = [f.test_id for f in parse("go-test-base").findings]
    assert ids == ["example.com/m::TestAdd", "example.com/m::TestTable", "example.com/m::TestTable/bad_one"]
    broken = parse("go-test-build-failed")
    assert [(f.path, f.test_id) for f in broken.findings] == [
        ("add.go", None),
        (None, "example.com/m [build failed]"),
    ]


def test_clippy_codes_from_error_headers_and_lint_links() -> None:
    fs = parse("clippy-new")
    assert [(f.line, f.code) for f in fs.findings] == [
        (10, None),
        (15, None),
        (35, None),
        (11, "clippy::needless_return"),
        (14, "clippy::ptr_arg"),
        (36, "clippy::needless_return"),  # the second occurrence has no lint note, only the link
    ]
    assert where(parse("cargo-build-error")) == [("src/lib.rs", 32, "E0308")]
    assert where(parse("clippy-warn-and-error")) == [("src/lib.rs", 32, "E0308")]


def test_cargo_warnings_are_not_findings() -> None:
    fs = parse("cargo-check-base")
    assert fs.parser == "cargo"
    assert fs.findings == ()


def test_cargo_test_unit_and_doc_tests() -> None:
    fs = parse("cargo-test-base")
    assert fs.parser == "cargo+cargo-test"
    assert [f.test_id for f in fs.findings] == ["src/lib.rs::tests::adds", "doc-tests m::src/lib.rs - add (line 3)"]


@pytest.mark.parametrize(
    ("command", "parsers"),
    [
        (".venv/bin/python -m pytest -q -p no:cacheprovider", ["pytest"]),
        ("ruff check . && mypy --strict src", ["ruff", "mypy"]),
        ("uv run ruff check src", ["ruff"]),
        ("ruff format --check .", ["ruff-format"]),
        ("ruff check --no-fix . && ruff format --check .", ["ruff", "ruff-format"]),
        (".venv/bin/python -m black --check src", ["black"]),
        ("npx prettier --check .", ["prettier"]),
        ("out=$(gofmt -l . 2>&1); printf '%s' \"$out\"; test -z \"$out\"", ["gofmt"]),
        ("cargo fmt --all --check", ["rustfmt"]),
        ("cargo +nightly fmt -- --check", ["rustfmt"]),
        ("cargo clippy --all-targets -- -D warnings", ["clippy"]),
        ("cargo +nightly test --workspace", ["cargo", "cargo-test"]),
        ("go vet ./...", ["go-vet"]),
        ("go test -count=1 ./...", ["go-test"]),
        ("npx eslint . && npx tsc --noEmit", ["eslint", "tsc"]),
        ("python manage.py test", ["unittest"]),
        ("python -m unittest discover -s tests", ["unittest"]),
        ("make lint", []),
        ("tox -e lint 'unbalanced", []),
    ],
)
def test_parsers_for_command(command: str, parsers: list[str]) -> None:
    assert parsers_for_command(command) == parsers


def test_a_command_naming_no_tool_is_read_by_shape() -> None:
    ruff, mypy = load("ruff-concise-base"), load("mypy-base")
    fs = parse_findings("make lint", ruff.output + "\n" + mypy.output + "\nmake: *** [Makefile:3: lint] Error 1\n", 2)
    assert fs.parser == "mypy+ruff"  # named in the parsers' fixed order, whatever the output's
    assert [f.tool for f in fs.findings] == ["ruff"] * 5 + ["mypy"] * 4
    assert parse_findings("tox -e lint", load("flake8-base").output, 1).parser == "flake8"
    assert parse_findings("./scripts/test.sh", load("pytest-q-base").output, 1).parser == "pytest"
    assert not parse_findings("./check.sh", "Segmentation fault (core dumped)\n", 139).parsed


def test_a_count_that_disagrees_with_the_summary_means_not_parsed() -> None:
    run = load("mypy-base")
    cut = run.output.split("\n", 1)[1]  # the first error line lost, "Found 4 errors" kept
    fs = parse_findings(run.command, cut, run.exit_code)
    assert not fs.parsed
    assert fs.findings == ()
    assert "reports 4 but 3" in fs.note


def test_huge_output_is_capped_and_parsed_in_linear_time() -> None:
    lines = [f"src/m{i % 50}.py:{i}:1: E501 Line too long ({100 + i % 7} > 88)" for i in range(120_000)]
    started = time.monotonic()
    fs = parse_findings("ruff check .", "\n".join(lines), 1)
    assert time.monotonic() - started < 20
    assert fs.parsed
    assert fs.truncated
    assert len(fs.findings) == 10_000
    assert fs.total == 100_000
    assert fs.note == "over 100000 findings, the first 10000 kept"
    started = time.monotonic()
    endless = parse_findings("ruff check .", "x.py" + ":1" * 2_000_000, 1)
    assert time.monotonic() - started < 5
    assert not endless.parsed


def test_models_are_frozen_and_reject_unknown_fields() -> None:
    finding = Finding(tool="ruff", path="a.py", line=1, code="F401", message="`os` imported but unused")
    with pytest.raises(ValidationError):
        Finding(tool="ruff", path="a.py", line=1, code="F401", message="m", column=3)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        finding.line = 2  # type: ignore[misc]
