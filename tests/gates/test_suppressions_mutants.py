"""Inline suppressions where a one-token change would go unnoticed: the codes a marker names.

Written against mutmut's survivors (make mutation).
"""

from __future__ import annotations

import pytest

from pm_agent.gates.suppressions import find_markers


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
