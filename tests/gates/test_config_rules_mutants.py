"""Configuration rules where a one-token change would go unnoticed: addopts, "off" values, flat eslint configs.

Written against mutmut's survivors (make mutation).
"""

from __future__ import annotations

from typing import Any

import pytest

from pm_agent.gates.config_rules import LINT, addopts_items, compare_settings, flat_eslint_weakenings
from pm_agent.gates.justify import Weakening


@pytest.mark.parametrize(
    ("value", "items"),
    [
        ('-k "not slow', ['-k "not']),  # unbalanced quote: split on blanks instead
        (["--lf", "-x"], ["--lf"]),  # --lf takes no value: -x is not its value
        ("-q -k", ["-k"]),  # a trailing option without its value
        ("-q -m", ["-m"]),
        ("-vv -knot_slow", ["-k not_slow"]),  # -vv is not -k or -m
        ("-mslow", ["-m slow"]),
        ("-kx", ["-k x"]),
        ("--deselect=tests/a.py::t --ignore b", ["--deselect tests/a.py::t", "--ignore b"]),
        (None, []),
    ],
)
def test_addopts_items(value: Any, items: list[str]) -> None:
    assert addopts_items(value) == items


def _off(value: Any) -> list[str]:
    """What compare_settings reports when an eslint rule, absent before, is set to `value`."""
    key = ("eslint", "rules", "no-console")
    return [w.what for w in compare_settings(".eslintrc.json", {}, {key: value}, [])]


@pytest.mark.parametrize("value", ["off", "OFF ", "none", "allow", "false", "False", "0", 0, False, ["off", {}]])
def test_values_that_turn_a_rule_off(value: Any) -> None:
    assert _off(value) != []


@pytest.mark.parametrize("value", ["error", "warn", 2, 1, True, ["error", {"allow": ["warn"]}], ["warn"]])
def test_values_that_keep_a_rule_on(value: Any) -> None:
    assert _off(value) == []


def test_a_lint_level_table_is_read_by_its_level() -> None:
    key = ("cargo", "lints", "clippy", "unwrap_used")
    allowed = compare_settings("Cargo.toml", {}, {key: {"level": "allow", "priority": 1}}, [])
    assert [w.what for w in allowed] == ['cargo lints.clippy.unwrap_used = {"level": "allow", "priority": 1}']
    assert compare_settings("Cargo.toml", {}, {key: {"level": "deny", "priority": 1}}, []) == []
    assert compare_settings("Cargo.toml", {}, {key: [{"level": "deny"}, "x"]}, []) == []


def test_a_rule_turned_off_and_back_on() -> None:
    key = ("pyright", "reportMissingImports")
    assert [w.what for w in compare_settings("pyrightconfig.json", {key: True}, {key: False}, [])] == [
        "pyright reportMissingImports = false"
    ]
    assert compare_settings("pyrightconfig.json", {key: False}, {key: True}, []) == []
    assert compare_settings("pyrightconfig.json", {key: "none"}, {key: "off"}, []) == []


def test_flat_eslint_config_lines() -> None:
    added = [
        (2, "  'no-console': 'off',"),
        (3, '  "eqeqeq": 0 }'),
        (4, "  ignores: [ 'dist/**' , \"build\", 'Xcode', 'X' ],"),
        (5, "  ignores: [],"),
        (6, "  'no-undef': 'error',"),
    ]
    path = "eslint.config.js"
    assert flat_eslint_weakenings(path, added) == [
        Weakening(LINT, path, 2, "'no-console': 'off',", "eslint rule no-console off", ("no-console",)),
        Weakening(LINT, path, 3, '"eqeqeq": 0 }', "eslint rule eqeqeq off", ("eqeqeq",)),
        Weakening(
            LINT,
            path,
            4,
            "ignores: [ 'dist/**' , \"build\", 'Xcode', 'X' ],",
            "eslint ignores",
            ("dist/**", "build", "Xcode", "X"),
        ),
        Weakening(LINT, path, 5, "ignores: [],", "eslint ignores", ("ignores",)),
    ]
    assert LINT == "lint/type check"
