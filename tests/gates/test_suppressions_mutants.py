"""Inline suppressions where a one-token change would go unnoticed: the codes a marker names.

Written against mutmut's survivors (make mutation).
"""

from __future__ import annotations

import pytest

from pm_agent.gates.suppressions import added_suppressions, find_markers, python_comment_lines

from .conftest import MakeWork


@pytest.mark.parametrize(
    ("path", "line", "found"),
    [
        ("a.py", "import os, sys  # noqa: F401, E501", [("# noqa", ("F401", "E501"))]),
        ("a.py", "import os  # noqa:F401,E501", [("# noqa", ("F401", "E501"))]),
        ("a.py", "x = 1  # noqa: X100", [("# noqa", ("X100",))]),  # a code is kept whole, whatever its letters
        ("a.ts", "// tslint:disable-next-line:no-console", [("tslint:disable", ("no-console",))]),
        ("a.go", "x := f() //nolint:errcheck,gosec", [("//nolint", ("errcheck", "gosec"))]),
    ],
)
def test_codes_of_a_marker(path: str, line: str, found: list[tuple[str, tuple[str, ...]]]) -> None:
    assert find_markers(path, line) == found


def test_the_reason_separator_is_not_a_code() -> None:
    [(name, codes)] = find_markers("a.ts", "// eslint-disable-next-line no-console -- logging is the point")
    assert name == "eslint-disable"
    assert codes[0] == "no-console"
    assert "--" not in codes


@pytest.mark.parametrize(
    ("path", "line", "found"),
    [
        ("a.py", "# flake8: noqa: E501, W291", [("# ruff: noqa", ("E501", "W291"))]),
        ("a.py", "# ruff: noqa", [("# ruff: noqa", ())]),
        ("a.py", "x  # type: ignore", [("# type: ignore", ())]),
        ("a.py", "x  # pyright: basic", [("# pyright: ignore", ())]),
        ("a.py", "# mypy: disable-error-code=attr-defined", [("# mypy: ignore-errors", ("attr-defined",))]),
        ("a.py", "# pylint: disable-next=W0611,C0114", [("# pylint: disable", ("W0611", "C0114"))]),
        ("a.py", "x  # nosec B101, B102", [("# nosec", ("B101", "B102"))]),
        ("a.py", "x  # nosec", [("# nosec", ())]),
        ("a.py", "x  # NOQA:e501", [("# noqa", ("e501",))]),
        ("a.pyi", "x: int  # type: ignore[misc]", [("# type: ignore", ("misc",))]),
        ("a.js", "x // eslint-disable-line no-console, eqeqeq", [("eslint-disable", ("no-console", "eqeqeq"))]),
        ("a.mjs", "// @ts-nocheck", [("@ts-nocheck", ())]),
        (
            "a.vue",
            "// biome-ignore lint/suspicious/noExplicitAny: legacy",
            [("biome-ignore", ("lint/suspicious/noExplicitAny",))],
        ),
        ("A.TS", "/* tslint:disable */", [("tslint:disable", ())]),
        ("a.svelte", "// @ts-ignore", [("@ts-ignore", ())]),
        ("a.go", "//lint:ignore SA1000 reason", [("//lint:ignore", ("SA1000",))]),
        ("a.go", "//lint:file-ignore U1000 reason", [("//lint:ignore", ("U1000",))]),
        ("a.go", "x // nolint", [("//nolint", ())]),
        ("a.rs", "#[expect(clippy::unwrap_used)]", [("#[allow]", ("clippy::unwrap_used",))]),
        ("a.rs", "#[cfg_attr(test, allow(dead_code))]", [("#[cfg_attr(..., allow)]", ("dead_code",))]),
        ("A.java", '@SuppressWarnings("unchecked")', [("@SuppressWarnings", ("unchecked",))]),
        ("A.java", '@SuppressWarnings({"unchecked", "rawtypes"})', [("@SuppressWarnings", ("unchecked", "rawtypes"))]),
        ("A.java", '@java.lang.SuppressWarnings(value = "all")', [("@SuppressWarnings", ("all",))]),
        ("a.kt", '@Suppress("MagicNumber", "UNCHECKED_CAST")', [("@Suppress", ("MagicNumber", "UNCHECKED_CAST"))]),
        ("a.kts", '@file:Suppress("ktlint:standard:filename")', [("@Suppress", ("ktlint:standard:filename",))]),
        ("A.java", '@SuppressFBWarnings("NP_NULL_ON_SOME_PATH")', [("@SuppressFBWarnings", ("NP_NULL_ON_SOME_PATH",))]),
        ("A.java", "@SuppressFBWarnings", [("@SuppressFBWarnings", ())]),
        ("a.kt", '@SuppressLint("NewApi")', [("@SuppressLint", ("NewApi",))]),
        ("A.java", "// CHECKSTYLE:OFF", [("CHECKSTYLE:OFF", ())]),
        ("A.java", "// CHECKSTYLE.OFF: LineLength", [("CHECKSTYLE:OFF", ("LineLength",))]),
        ("A.java", "int x = 1; // NOPMD - reason", [("NOPMD", ())]),
        ("a.groovy", "// spotless:off", [("spotless:off", ())]),
        ("a.kt", "/* ktlint-disable no-wildcard-imports */", [("ktlint-disable", ("no-wildcard-imports",))]),
        ("A.java", "@SuppressWarningsHolder", []),
        ("A.java", "// CHECKSTYLE:ON", []),
        (
            "a.rb",
            "def f(a, b) # rubocop:disable Naming/MethodParameterName, Metrics/AbcSize",
            [("# rubocop:disable", ("Naming/MethodParameterName", "Metrics/AbcSize"))],
        ),
        ("a.rb", "# rubocop:todo Style/Documentation", [("# rubocop:disable", ("Style/Documentation",))]),
        (
            "tasks/x.rake",
            "x = 1 # standard:disable Lint/UselessAssignment",
            [("# standard:disable", ("Lint/UselessAssignment",))],
        ),
        ("a.rb", "# typed: false", [("# typed: false", ())]),
        ("a.rb", "# typed: strict", []),
        ("a.rb", "x # rubocop:enable Style/Documentation", []),
        (
            "a.php",
            "$x = f(); // phpcs:ignore Generic.Files.LineLength",
            [("phpcs:ignore", ("Generic.Files.LineLength",))],
        ),
        ("a.php", "// phpcs:disable", [("phpcs:ignore", ())]),
        ("a.php", "/** @phpstan-ignore-next-line */", [("@phpstan-ignore", ())]),
        ("a.php", "$a = $b; // @phpstan-ignore argument.type", [("@phpstan-ignore", ("argument.type",))]),
        ("a.php", "/** @psalm-suppress PossiblyNullReference */", [("@psalm-suppress", ("PossiblyNullReference",))]),
        ("a.php", "// @codingStandardsIgnoreLine", [("@codingStandardsIgnore", ())]),
        ("a.php", '@SuppressWarnings("PHPMD.StaticAccess")', [("@SuppressWarnings", ("PHPMD.StaticAccess",))]),
        ("a.go", "x  # noqa", []),  # another language's marker
        ("a.rs", "// eslint-disable", []),
        ("a.txt", "x  # noqa", []),
    ],
)
def test_every_marker_in_its_language(path: str, line: str, found: list[tuple[str, tuple[str, ...]]]) -> None:
    assert find_markers(path, line) == found


def test_python_comments_come_from_the_tokenizer() -> None:
    assert python_comment_lines('x = 1  # a\ns = """\n# not\n"""\n# b\n') == {1: "# a", 5: "# b"}
    assert python_comment_lines('s = """open\n') is None


def test_added_suppressions_of_a_change(make_work: MakeWork) -> None:
    work = make_work(
        {
            "a.py": "import os  # noqa: F401\n",
            "b.ts": "// @ts-ignore\nx();\n// @ts-ignore\ny();\n",
            "gone.py": "x = 1\n",
        }
    )
    work.write("a.py", "import os  # noqa: F401\nimport re  # noqa: F401\nimport sys  # noqa\n")
    work.write("b.ts", "x();\n// @ts-ignore\ny();\n// @ts-ignore\nz();\n// @ts-ignore\n")  # 2 moved, 1 added
    work.write("broken.py", 's = """open  # noqa\nx = 1  # type: ignore\n')  # does not tokenize: whole lines
    work.write("notes.md", "x  # noqa\n")
    work.write("docs/reviews/r.py", "x = 1  # noqa\n")
    work.write("lib.rs", "#[allow(dead_code)]\nfn f() {}\n")
    found = added_suppressions(work.path, work.git.changes(work.base))
    assert [(w.where(), w.what, w.codes, w.text, w.check) for w in found] == [
        ("a.py:2", "inline suppression `# noqa` of F401", ("F401",), "import re  # noqa: F401", "lint/type check"),
        ("a.py:3", "inline suppression `# noqa` (every rule)", ("noqa",), "import sys  # noqa", "lint/type check"),
        ("b.ts:6", "inline suppression `@ts-ignore` (every rule)", ("ts-ignore",), "// @ts-ignore", "lint/type check"),
        (
            "broken.py:1",
            "inline suppression `# noqa` (every rule)",
            ("noqa",),
            's = """open  # noqa',
            "lint/type check",
        ),
        (
            "broken.py:2",
            "inline suppression `# type: ignore` (every rule)",
            ("type: ignore",),
            "x = 1  # type: ignore",
            "lint/type check",
        ),
        (
            "lib.rs:1",
            "inline suppression `#[allow]` of dead_code",
            ("dead_code",),
            "#[allow(dead_code)]",
            "lint/type check",
        ),
    ]


def test_a_python_file_that_is_not_utf8_is_still_read(make_work: MakeWork) -> None:
    work = make_work({"a.py": "x = 1\n"})
    (work.path / "a.py").write_bytes(b"x = 1\nname = '\xff'  # noqa: E501\n")
    [found] = added_suppressions(work.path, work.git.changes(work.base))
    assert (found.line, found.codes) == (2, ("E501",))
