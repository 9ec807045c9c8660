"""Go and Rust parsers on small outputs the captured fixtures do not show (mutmut's survivors, make mutation).

Each test gives a parser a few output lines and checks every field of what it found, including `at`, the
output line a finding came from: the shape mode of parse_findings claims lines and orders the findings of
several tools by it.
"""

from __future__ import annotations

from pm_agent.gates.findings import parse_findings
from pm_agent.gates.findings._common import Ctx, Raw
from pm_agent.gates.findings.go_rust import parse_cargo, parse_cargo_test, parse_go_test, parse_go_vet

GO = Ctx(tool="go-vet")
GO_TEST = Ctx(tool="go-test")
CARGO = Ctx(tool="cargo")


def test_go_vet_takes_staticcheck_codes_out_of_the_message() -> None:
    lines = [
        "# example.com/app",
        "./main.go:8:2: should use fmt.Println instead (S1038)",
        "./util.go:3:1: unreachable code",
    ]
    assert parse_go_vet(lines, GO).raws == [
        Raw("go-vet", "main.go", 8, "S1038", "should use fmt.Println instead", at=1),
        Raw("go-vet", "util.go", 3, None, "unreachable code", at=2),
    ]


def test_go_test_names_each_test_after_its_package_and_reads_past_the_first_package() -> None:
    lines = [
        "--- FAIL: TestAdd (0.00s)",
        "    add_test.go:9: got 3",
        "FAIL",
        "FAIL\texample.com/a\t0.002s",
        "ok  \texample.com/b\t0.001s",
        "--- FAIL: TestSub (0.00s)",
        "FAIL\texample.com/c\t0.003s",
        "# example.com/d",
        "d/d.go:4:2: undefined: x",
        "FAIL\texample.com/d [build failed]",
    ]
    assert parse_go_test(lines, GO_TEST).raws == [
        Raw("go-test", None, None, "FAIL", "", "example.com/a::TestAdd", 0),
        Raw("go-test", None, None, "FAIL", "", "example.com/c::TestSub", 5),
        Raw("go-test", "d/d.go", 4, None, "undefined: x", at=8),
        Raw("go-test", None, None, "FAIL", "", "example.com/d [build failed]", 9),
    ]


def test_go_test_an_ok_package_line_closes_the_tests_above_it() -> None:
    lines = ["--- FAIL: TestA (0.00s)", "ok  \texample.com/a\t0.001s", "FAIL\texample.com/b\t0.001s"]
    assert [r.test_id for r in parse_go_test(lines, GO_TEST).raws] == ["example.com/a::TestA"]


def test_go_test_output_cut_before_the_package_line_keeps_the_bare_test_names() -> None:
    lines = ["=== RUN   TestA", "--- FAIL: TestA (0.00s)", "    --- FAIL: TestA/sub (0.00s)"]
    assert parse_go_test(lines, GO_TEST).raws == [
        Raw("go-test", None, None, "FAIL", "", "TestA", 1),
        Raw("go-test", None, None, "FAIL", "", "TestA/sub", 2),
    ]


def test_cargo_error_header_and_arrow_with_the_clippy_lint_from_its_link() -> None:
    lines = [
        "warning: unused variable: `y`",
        "   = help: for further information visit https://rust-lang.github.io/rust-clippy/master/index.html#unused",
        "error: this let-binding has unit value",
        " --> src/main.rs:3:5",
        "  |",
        "  = help: for further information visit https://rust-lang.github.io/rust-clippy/master/index.html#let_unit",
        "warning: unused import",
        "  = help: https://rust-lang.github.io/rust-clippy/master/index.html#unused_imports",
        "error: could not compile `app` (bin \"app\") due to 1 previous error",
    ]
    out = parse_cargo(lines, CARGO)
    assert out.raws == [
        Raw("cargo", "src/main.rs", 3, "clippy::let_unit", "this let-binding has unit value", at=2),
    ]
    assert out.expected == 1
    assert out.mismatch() is None


def test_cargo_counts_every_could_not_compile_line() -> None:
    lines = [
        "error[E0308]: mismatched types",
        " --> src/a.rs:1:1",
        "error: could not compile `a` (lib) due to 2 previous errors",
        "error: could not compile `b` (lib) due to 1 previous error",
    ]
    out = parse_cargo(lines, CARGO)
    assert out.expected == 3
    assert out.mismatch() == "its summary reports 3 but 1 were parsed (output cut or in an unknown format)"


def test_cargo_arrow_three_lines_below_the_header_counts_four_does_not() -> None:
    near = ["error[E0425]: cannot find value `x`", "a", "b", " --> src/a.rs:2:9"]
    far = ["error[E0425]: cannot find value `x`", "a", "b", "c", " --> src/a.rs:2:9"]
    assert parse_cargo(near, CARGO).raws == [Raw("cargo", "src/a.rs", 2, "E0425", "cannot find value `x`", at=0)]
    assert parse_cargo(far, CARGO).raws == []


def test_cargo_a_warning_ends_the_error_before_it() -> None:
    lines = ["error: linking with `cc` failed", "warning: unused variable: `x`", " --> src/main.rs:2:9"]
    assert parse_cargo(lines, CARGO).raws == []


def test_cargo_arrows_and_links_with_no_error_above_them_are_ignored() -> None:
    lines = [
        " --> src/early.rs:1:1",
        "  = help: https://rust-lang.github.io/rust-clippy/master/index.html#early",
        "error[E0308]: mismatched types",
        "note: expected --> found",
        " --> src/late.rs:1:1",
        "error[E0599]: no method named `x`",
        " --> src/b.rs:4:7",
        "note: the method is defined here",
        " --> src/c.rs:9:1",
    ]
    assert parse_cargo(lines, CARGO).raws == [Raw("cargo", "src/b.rs", 4, "E0599", "no method named `x`", at=5)]


def test_cargo_test_names_tests_after_their_binary_and_counts_failures() -> None:
    lines = [
        "     Running unittests src/lib.rs (target/debug/deps/app-1)",
        "test tests::a ... FAILED",
        "test result: FAILED. 1 passed; 1 failed; 0 ignored",
        "   Doc-tests app",
        "test src/lib.rs - add (line 3) ... FAILED",
        "test result: FAILED. 0 passed; 1 failed; 0 ignored",
        "        FAIL [   0.004s] app::integration tests::b",
    ]
    out = parse_cargo_test(lines, Ctx(tool="cargo-test"))
    assert out.raws == [
        Raw("cargo-test", None, None, "FAILED", "", "src/lib.rs::tests::a", 1),
        Raw("cargo-test", None, None, "FAILED", "", "doc-tests app::src/lib.rs - add (line 3)", 4),
        Raw("cargo-test", None, None, "FAILED", "", "app::integration::tests::b", 6),
    ]
    assert out.expected == 2


def test_cargo_test_without_a_running_line_the_name_alone() -> None:
    out = parse_cargo_test(["test it_works ... FAILED"], Ctx(tool="cargo-test"))
    assert [r.test_id for r in out.raws] == ["it_works"]


def test_findings_of_two_tools_come_in_the_order_printed() -> None:
    # shape mode (the command names no tool): go-test's and mypy's findings sorted by output line
    output = "\n".join(
        [
            "src/m.py:1: error: Bad thing  [misc]",
            "./a.go:1:1: first (SA4006)",
            "--- FAIL: TestX (0.00s)",
            "FAIL\texample.com/x\t0.01s",
            "src/m.py:2: error: Other thing  [misc]",
            "FAIL\texample.com/y [setup failed]",
        ]
    )
    found = parse_findings("make check", output, 1)
    assert found.parser == "go-test+mypy"
    assert [(f.tool, f.path, f.code, f.test_id) for f in found.findings] == [
        ("mypy", "src/m.py", "misc", None),
        ("go-test", "a.go", "SA4006", None),
        ("go-test", None, "FAIL", "example.com/x::TestX"),
        ("mypy", "src/m.py", "misc", None),
        ("go-test", None, "FAIL", "example.com/y [setup failed]"),
    ]
