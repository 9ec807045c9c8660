"""RSpec, RuboCop, PHPUnit and PHPStan shapes beyond the captured runs (fixtures/findings rspec-*, rubocop-*,
phpunit-*): a spec file that does not load, sections PHPUnit prints that are not failures, outputs cut short,
PHPStan's raw format (PHPStan is not installed here), and the words and shapes that pick each parser."""

from __future__ import annotations

import pytest

from pm_agent.gates.findings import parse_findings
from pm_agent.gates.findings.select import parsers_for_command


@pytest.mark.parametrize(
    ("command", "parsers"),
    [
        ("bundle exec rspec", ["rspec"]),
        ("bundle exec rubocop --parallel", ["rubocop"]),
        ("bundle exec standardrb", ["rubocop"]),
        ("vendor/bin/phpunit", ["phpunit"]),
        ("vendor/bin/phpstan analyse --no-progress --error-format=raw", ["phpstan"]),
    ],
)
def test_the_command_names_the_parser(command: str, parsers: list[str]) -> None:
    assert parsers_for_command(command) == parsers


def test_a_spec_file_that_does_not_load_is_a_finding_of_its_own() -> None:
    output = (
        "An error occurred while loading ./spec/cart_spec.rb.\n"
        "Failure/Error: require 'cart'\n\nLoadError:\n  cannot load such file -- cart\n"
        "No examples found.\n\nFinished in 0.00003 seconds (files took 0.1 seconds to load)\n"
        "0 examples, 0 failures, 1 error occurred outside of examples\n"
    )
    found = parse_findings("bundle exec rspec", output, 1)
    assert [(f.path, f.code, f.test_id) for f in found.findings] == [
        ("spec/cart_spec.rb", "ERROR", "loading spec/cart_spec.rb")
    ]


def test_an_rspec_output_cut_above_its_failed_examples_is_not_parsed() -> None:
    output = "rspec ./spec/calc_spec.rb:8 # Calc fails\n2 examples, 2 failures\n"
    found = parse_findings("bundle exec rspec", output, 1)
    assert found.parser is None
    assert found.note == "rspec: its summary reports 2 but 1 were parsed (output cut or in an unknown format)"


def test_phpunits_risky_skipped_and_warnings_are_not_failures() -> None:
    output = (
        "There was 1 warning:\n\n1) CartTest::testOld\nThe @expectedException annotation is deprecated\n\n--\n\n"
        "There was 1 risky test:\n\n1) CartTest::testNothing\nThis test did not perform any assertions\n\n--\n\n"
        "There were 2 failures:\n\n1) CartTest::testTotal with data set #1 (1, 2, 4)\nFailed asserting that 3 is "
        "identical to 4.\n\n2) Shop\\CartTest::testEmpty\nFailed asserting that false is true.\n\n"
        "FAILURES!\nTests: 6, Assertions: 5, Failures: 2, Warnings: 1, Risky: 1.\n"
    )
    found = parse_findings("vendor/bin/phpunit", output, 1)
    assert [f.test_id for f in found.findings] == [
        "CartTest::testTotal with data set #1 (1, 2, 4)",
        "Shop\\CartTest::testEmpty",
    ]


def test_a_phpunit_summary_counting_more_than_was_listed_is_not_parsed() -> None:
    output = (
        "There was 1 error:\n\n1) CartTest::testBoom\nRuntimeException: boom\n\nTests: 2, Assertions: 1, Errors: 2.\n"
    )
    assert parse_findings("vendor/bin/phpunit", output, 2).parser is None


def test_rubocop_with_no_offenses_and_a_cut_offense_list() -> None:
    clean = parse_findings("bundle exec rubocop", "1 file inspected, no offenses detected\n", 0)
    assert (clean.parser, clean.findings, clean.note) == ("rubocop", (), "")
    offense = "lib/a.rb:1:1: C: Style/Documentation: Missing top-level documentation comment.\n"
    cut = offense + "1 file inspected, 2 offenses detected\n"
    assert parse_findings("bundle exec rubocop", cut, 1).parser is None


def test_phpstans_raw_errors() -> None:
    output = (
        "/w/shop/src/Cart.php:12:Method Shop\\Cart::total() should return int but returns string.\n"
        "/w/shop/src/Cart.php:30:Undefined variable: $items\n"
    )
    found = parse_findings("vendor/bin/phpstan analyse --no-progress --error-format=raw", output, 1, root="/w/shop")
    assert [(f.path, f.line, f.message) for f in found.findings] == [
        ("src/Cart.php", 12, "Method Shop\\Cart::total() should return int but returns string."),
        ("src/Cart.php", 30, "Undefined variable: $items"),
    ]


def test_their_outputs_behind_make_are_read_by_their_shape() -> None:
    rspec = "bundle exec rspec\nrspec ./spec/calc_spec.rb:8 # Calc fails\n1 example, 1 failure\n"
    assert [f.test_id for f in parse_findings("make test", rspec, 2).findings] == ["Calc fails"]
    phpunit = "There was 1 failure:\n\n1) CalcTest::testFails\nFailed.\n\nTests: 1, Assertions: 1, Failures: 1.\n"
    assert [f.test_id for f in parse_findings("make test", phpunit, 2).findings] == ["CalcTest::testFails"]
