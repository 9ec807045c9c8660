"""Configuration rules where a one-token change would go unnoticed: addopts, "off" values, flat eslint configs.

Written against mutmut's survivors (make mutation).
"""

from __future__ import annotations

from typing import Any

import pytest

from pm_agent.gates.config_rules import (
    LINT,
    RUNNER,
    Rule,
    _rules,
    addopts_items,
    compare_settings,
    file_weakenings,
    flat_eslint_weakenings,
    rule_for,
)
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
        (7, "  ignores: ['dist', '', \"\"],"),
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
        Weakening(LINT, path, 7, "ignores: ['dist', '', \"\"],", "eslint ignores", ("dist",)),
    ]
    assert LINT == "lint/type check"


Found = list[tuple[int | None, str, tuple[str, ...]]]


def _found(old: dict[Any, Any], new: dict[Any, Any], added: list[tuple[int, str]] | None = None) -> Found:
    """(line, what, codes) of each weakening compare_settings finds from `old` to `new`."""
    return [(w.line, w.what, w.codes) for w in compare_settings("cfg", old, new, added or [])]


RUFF_PFI = ("ruff", "per-file-ignores", "tests/*")
FLAKE8_PFI = ("flake8", "per_file_ignores")
TCM = ("pyright", "typeCheckingMode")
TESTPATHS = ("pytest", "testpaths")


@pytest.mark.parametrize(
    ("old", "new", "found"),
    [
        # added, with the per-file glob as a second code
        ({}, {RUFF_PFI: ["S101"]}, [(None, "ruff per-file-ignores.tests/* += S101", ("S101", "tests/*"))]),
        ({RUFF_PFI: ["S101"]}, {RUFF_PFI: ["S101"]}, []),
        # flake8's per-file-ignores text: one `glob: codes` per line, or several on one line
        (
            {FLAKE8_PFI: "tests/*: S101"},
            {FLAKE8_PFI: "tests/*:S101 src/*:E501,E203\n  :E1"},
            [
                (None, "flake8 per_file_ignores += src/*: E501", ("src/*: E501",)),
                (None, "flake8 per_file_ignores += src/*: E203", ("src/*: E203",)),
            ],
        ),
        # mypy's exclude: one pattern a line
        (
            {},
            {("mypy", "exclude"): "build/\n  dist/\n"},
            [(None, "mypy exclude += build/", ("build/",)), (None, "mypy exclude += dist/", ("dist/",))],
        ),
        # removed from a select list
        ({("ruff", "select"): "E,F B"}, {("ruff", "select"): "E F"}, [(None, "ruff select -= B", ("B",))]),
        # lists of tables and scalars where a list is expected
        (
            {},
            {("ruff", "ignore"): [{"b": 1, "a": 2}, 3]},
            [(None, 'ruff ignore += {"a": 2, "b": 1}', ('{"a": 2, "b": 1}',)), (None, "ruff ignore += 3", ("3",))],
        ),
        ({}, {("ruff", "ignore"): 5}, [(None, "ruff ignore += 5", ("5",))]),
        # true: turned on, in any spelling; already on is no change
        (
            {("mypy", "ignore_errors"): "False"},
            {("mypy", "ignore_errors"): " Yes"},
            [(None, "mypy ignore_errors =  Yes", ("ignore_errors",))],
        ),
        ({}, {("mypy", "ignore_errors"): 1}, [(None, "mypy ignore_errors = 1", ("ignore_errors",))]),
        ({}, {("mypy", "ignore_errors"): "1"}, [(None, "mypy ignore_errors = 1", ("ignore_errors",))]),
        ({}, {("mypy", "strict"): "0"}, [(None, "mypy strict = 0", ("strict",))]),
        # off: a rule that stays on is no change
        ({("eslint", "rules", "eqeqeq"): "warn"}, {("eslint", "rules", "eqeqeq"): "error"}, []),
        ({("eslint", "rules", "eqeqeq"): "warn"}, {}, [(None, "eslint rules.eqeqeq = (removed)", ("eqeqeq",))]),
        ({("eslint", "rules", "eqeqeq"): "off"}, {}, []),
        # lines: one entry a line, blanks inside a line kept
        (
            {},
            {("mypy", "exclude"): "(?x)(\n    ^one\\.py$\n  | ^two\\.py$\n)"},
            [
                (None, "mypy exclude += (?x)(", ("(?x)(",)),
                (None, "mypy exclude += ^one\\.py$", ("^one\\.py$",)),
                (None, "mypy exclude += | ^two\\.py$", ("| ^two\\.py$",)),
                (None, "mypy exclude += )", (")",)),
            ],
        ),
        (
            {},
            {("pytest", "filterwarnings"): "ignore:an old api:DeprecationWarning"},
            [
                (
                    None,
                    "pytest filterwarnings += ignore:an old api:DeprecationWarning",
                    ("ignore:an old api:DeprecationWarning",),
                )
            ],
        ),
        ({}, {("mypy", "ignore_errors"): "on"}, [(None, "mypy ignore_errors = on", ("ignore_errors",))]),
        ({}, {("mypy", "ignore_errors"): "TRUE"}, [(None, "mypy ignore_errors = TRUE", ("ignore_errors",))]),
        ({("mypy", "ignore_errors"): "on"}, {("mypy", "ignore_errors"): 1}, []),
        ({}, {("mypy", "ignore_errors"): 0}, []),
        ({}, {("mypy", "ignore_errors"): "maybe"}, []),
        # false: turned off or removed while on; already off is no change
        ({("mypy", "strict"): 1}, {}, [(None, "mypy strict = (removed)", ("strict",))]),
        ({("mypy", "strict"): "1"}, {("mypy", "strict"): "No"}, [(None, "mypy strict = No", ("strict",))]),
        ({}, {("mypy", "strict"): "off"}, [(None, "mypy strict = off", ("strict",))]),
        ({("mypy", "strict"): "no"}, {("mypy", "strict"): 0}, []),
        ({("mypy", "strict"): "no"}, {}, []),
        ({("mypy", "strict"): False}, {}, []),
        ({}, {("mypy", "strict"): True}, []),
        (
            {("mypy", "overrides", "pkg.*", "disallow_untyped_defs"): True},
            {("mypy", "overrides", "pkg.*", "disallow_untyped_defs"): False},
            [(None, "mypy overrides.pkg.*.disallow_untyped_defs = false", ("disallow_untyped_defs",))],
        ),
        # value: one of the weakening values, in any case, from another value
        ({}, {("mypy", "follow_imports"): "Skip"}, [(None, "mypy follow_imports = Skip", ("follow_imports",))]),
        ({("mypy", "follow_imports"): "silent"}, {("mypy", "follow_imports"): "skip"}, []),
        ({("mypy", "follow_imports"): "skip"}, {("mypy", "follow_imports"): "normal"}, []),
        # lowered: below the old level (standard when there was none); unknown levels lower nothing
        ({TCM: "strict"}, {TCM: "basic"}, [(None, "pyright typeCheckingMode = basic", ("typeCheckingMode",))]),
        ({TCM: "standard"}, {TCM: "off"}, [(None, "pyright typeCheckingMode = off", ("typeCheckingMode",))]),
        ({}, {TCM: "basic"}, [(None, "pyright typeCheckingMode = basic", ("typeCheckingMode",))]),
        ({TCM: "basic"}, {TCM: "strict"}, []),
        ({}, {TCM: "standard"}, []),
        ({TCM: "standard"}, {TCM: "weird"}, []),
        ({TCM: "weird"}, {TCM: "off"}, []),
        # new: only an entry that did not exist
        (
            {},
            {("golangci", "issues", "exclude-rules", "0", "linters"): ["errcheck"]},
            [(None, 'golangci issues.exclude-rules.0.linters = ["errcheck"]', ("linters",))],
        ),
        (
            {("golangci", "issues", "exclude-rules", "0", "linters"): ["errcheck"]},
            {("golangci", "issues", "exclude-rules", "0", "linters"): ["gosec"]},
            [],
        ),
        # changed: any change
        (
            {("pytest", "python_files"): "test_*.py"},
            {("pytest", "python_files"): "check_*.py"},
            [(None, "pytest python_files = check_*.py", ("python_files",))],
        ),
        ({("pytest", "python_files"): "test_*.py"}, {("pytest", "python_files"): "test_*.py"}, []),
        # narrowed: set where there was none, or a path dropped
        ({}, {TESTPATHS: "tests"}, [(None, "pytest testpaths narrowed to tests", ("tests",))]),
        ({TESTPATHS: "tests docs"}, {TESTPATHS: "tests"}, [(None, "pytest testpaths narrowed to tests", ("tests",))]),
        ({TESTPATHS: "tests"}, {}, [(None, "pytest testpaths narrowed to (nothing)", ("testpaths",))]),
        ({TESTPATHS: "tests"}, {TESTPATHS: "tests,docs"}, []),
        ({TESTPATHS: "a b c"}, {TESTPATHS: "a b"}, [(None, "pytest testpaths narrowed to a, b", ("a", "b"))]),
        (
            {("pytest", "filterwarnings"): "error:an old api:UserWarning\nerror"},
            {("pytest", "filterwarnings"): "error"},
            [(None, "pytest filterwarnings -= error:an old api:UserWarning", ("error:an old api:UserWarning",))],
        ),
        # warnings: new ignore filters, dropped error filters
        (
            {("pytest", "filterwarnings"): "error\nignore::UserWarning\nerror::ResourceWarning"},
            {
                (
                    "pytest",
                    "filterwarnings",
                ): "ignore::UserWarning\nignore::DeprecationWarning\ndefault\nerror::ResourceWarning"
            },
            [
                (None, "pytest filterwarnings += ignore::DeprecationWarning", ("ignore::DeprecationWarning",)),
                (None, "pytest filterwarnings -= error", ("error",)),
            ],
        ),
        # addopts: only options not there before
        (
            {("pytest", "addopts"): "-k a"},
            {("pytest", "addopts"): "-k a -m b"},
            [(None, "pytest addopts += -m b", ("-m b",))],
        ),
    ],
)
def test_each_kind_of_weakening(old: dict[Any, Any], new: dict[Any, Any], found: Found) -> None:
    assert _found(old, new) == found


def test_the_line_of_a_weakening_is_the_first_added_line_naming_it() -> None:
    key = ("ruff", "ignore")
    added = [(3, "[tool.ruff]"), (4, 'ignore = ["F401",'), (5, '  "E501"]')]
    assert [(w.line, w.text) for w in compare_settings("p", {}, {key: ["E501", "F401"]}, added)] == [
        (5, '"E501"]'),
        (4, 'ignore = ["F401",'),
    ]
    pfi = [(7, '"tests/*" = ["S101"]')]
    assert _found({}, {RUFF_PFI: ["S101"]}, pfi)[0][0] == 7
    flake8 = [(2, "per-file-ignores ="), (3, "  tests/*: S101")]
    assert _found({}, {FLAKE8_PFI: "tests/*: S101"}, flake8)[0][0] == 3, "the code, then the whole item"
    named_by_key = [(2, "[mypy]"), (3, "strict = false")]
    assert [(w.line, w.text) for w in compare_settings("m", {}, {("mypy", "strict"): "false"}, named_by_key)] == [
        (3, "strict = false")
    ]
    assert [(w.line, w.text) for w in compare_settings("m", {}, {("mypy", "strict"): "false"}, [(9, " x ")])] == [
        (9, "x")
    ], "no added line names it: the first added line"
    assert [w.text for w in compare_settings("m", {}, {("mypy", "strict"): "false"}, [])] == ["mypy strict = false"]
    # an option and its value: the whole item first, not its last word
    addopts = [(2, "# about"), (3, 'addopts = "-m b"')]
    assert [w.line for w in compare_settings("p", {}, {("pytest", "addopts"): "-m b"}, addopts)] == [3]
    # a TOML list does not hold "-m b": the line naming the setting, not the table's header
    listed = [(5, "[tool.pytest.ini_options]"), (6, 'addopts = ["-m", "b"]')]
    assert [w.line for w in compare_settings("p", {}, {("pytest", "addopts"): ["-m", "b"]}, listed)] == [6]
    # a code on a line the change kept: the line naming the glob, not the table's header
    moved = [(3, "[tool.ruff.per-file-ignores]"), (4, '"tests/*" = [')]
    assert [w.line for w in compare_settings("p", {}, {RUFF_PFI: ["S101"]}, moved)] == [4]
    flake8_tight = [(2, "per-file-ignores ="), (3, "    tests/*:S101")]
    assert _found({}, {FLAKE8_PFI: "tests/*:S101"}, flake8_tight)[0][0] == 3, "the code alone, without the glob"


def test_only_the_rules_of_the_check_asked_for() -> None:
    both = {("pytest", "addopts"): "-m b", ("ruff", "ignore"): ["E1"]}
    runner = compare_settings("pyproject.toml", {}, both, [], RUNNER)
    assert [(w.check, w.what) for w in runner] == [(RUNNER, "pytest addopts += -m b")]
    lint = compare_settings("pyproject.toml", {}, both, [], LINT)
    assert [(w.check, w.what) for w in lint] == [(LINT, "ruff ignore += E1")]
    assert [w.what for w in compare_settings("pyproject.toml", {}, both, [])] == [
        "pytest addopts += -m b",
        "ruff ignore += E1",
    ]
    assert compare_settings("x", {}, {("ruff", "line-length"): 200, ("black", "ignore"): ["x"]}, []) == []


@pytest.mark.parametrize(
    ("key", "kind"),
    [
        (("ruff", "extend_ignore"), "added"),  # `_` and `-` are the same
        (("mypy", "disallow_untyped_defs"), "false"),
        (("mypy", "overrides", "pkg", "ignore_errors"), "true"),
        (("mypy", "overrides", "pkg", "follow-imports"), "value"),
        (("eslint", "overrides", "0", "rules", "eqeqeq"), "off"),
        (("pytest", "xfail_strict"), "false"),
        (("pyright", "reportMissingImports"), "off"),
        (("pyright", "strict"), "removed"),
    ],
)
def test_rule_for(key: tuple[str, ...], kind: str) -> None:
    rule = rule_for(key)
    assert rule is not None
    assert rule.kind == kind


@pytest.mark.parametrize(
    "key", [("ruff",), ("ruff", "ignore", "x"), ("mypy", "overrides", "ignore_errors"), ("RUFF", "ignore"), ("x", "y")]
)
def test_no_rule_for(key: tuple[str, ...]) -> None:
    assert rule_for(key) is None


def test_a_deleted_configuration_file() -> None:
    ruff = "[tool.ruff]\nline-length = 100\nignore = []\n"
    assert [w.quote() for w in file_weakenings("pyproject.toml", ruff, None, [], LINT)] == [
        "pyproject.toml: configuration file deleted (lint/type check): (file deleted)"
    ]
    assert file_weakenings("pyproject.toml", ruff, None, [], RUNNER) == [], "no runner setting was in it"
    [deleted] = file_weakenings("pytest.ini", "[pytest]\naddopts = -q\n", None, [], RUNNER)
    assert (deleted.check, deleted.codes) == (RUNNER, ("pytest.ini",))
    both = '[tool.ruff]\nignore = ["E1"]\n[tool.pytest.ini_options]\naddopts = "-m b"\n'
    assert [w.what for w in file_weakenings("pyproject.toml", None, both, [], RUNNER)] == ["pytest addopts += -m b"]
    assert [w.what for w in file_weakenings("pyproject.toml", None, both, [], LINT)] == ["ruff ignore += E1"]
    assert file_weakenings("pyproject.toml", '[project]\nname = "x"\n', None, [], LINT) == []
    assert file_weakenings("pyproject.toml", None, ruff, [], LINT) == [], "ignore = [] adds nothing"
    assert file_weakenings("eslint.config.js", None, "x", [(1, "'eqeqeq': 'off',")], RUNNER) == []
    [flat] = file_weakenings("eslint.config.js", None, "x", [(1, "'eqeqeq': 'off',")], LINT)
    assert flat.what == "eslint rule eqeqeq off"


def test_rules_builds_one_rule_per_name_and_mypy_override_variants() -> None:
    # RULES is built once at import; _rules is called again here so that a change to it can be seen
    assert _rules("ruff", "ignore|lint/extend-ignore", "added") == [
        Rule(("ruff", "ignore"), "added"),
        Rule(("ruff", "lint", "extend-ignore"), "added"),
    ]
    assert _rules("mypy", "strict", "false", check=RUNNER, values=("a",)) == [
        Rule(("mypy", "strict"), "false", check=RUNNER, values=("a",)),
        Rule(("mypy", "overrides", "*", "strict"), "false", check=RUNNER, values=("a",)),
    ]
    assert _rules("flake8", "per-file-ignores", "added", split="perfile") == [
        Rule(("flake8", "per-file-ignores"), "added", LINT, "perfile")
    ]


@pytest.mark.parametrize(
    ("text", "items"),
    [
        # flake8 separates entries by commas as well as blanks
        ("a.py:E1,b.py:E2", ["a.py: E1", "b.py: E2"]),
        ("a.py:E1,E2 b.py : E3", ["a.py: E1", "a.py: E2", "b.py: E3"]),
        ("\n  tests/*: S101, F401\n  :E9", ["tests/*: S101", "tests/*: F401"]),
    ],
)
def test_flake8_per_file_ignores_entries(text: str, items: list[str]) -> None:
    found = _found({}, {FLAKE8_PFI: text})
    assert [codes[0] for _, _, codes in found] == items
