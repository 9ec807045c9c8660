"""Reading configuration files where a one-token change would go unnoticed: JSON with comments, mypy overrides.

Written against mutmut's survivors (make mutation).
"""

from __future__ import annotations

import pytest

from pm_agent.gates.configs import read_settings


def test_json_strings_keep_comment_markers_escaped_quotes_and_empty_values() -> None:
    text = (
        '{"a": "http://x/*y*/", // a comment\n'
        ' "b": "say \\"hi\\" // not a comment", /* a block\n comment */ "c": "",\n'
        ' "d": [1,], "e": "\\\\"} // a last comment without a newline'
    )
    assert read_settings("tsconfig.json", text) == {
        ("tsconfig", "a"): "http://x/*y*/",
        ("tsconfig", "b"): 'say "hi" // not a comment',
        ("tsconfig", "c"): "",
        ("tsconfig", "d"): [1],
        ("tsconfig", "e"): "\\",
    }


def test_a_comment_at_the_very_end_and_an_unclosed_block() -> None:
    assert read_settings("pyrightconfig.json", '{"strict": ["src"]}//') == {("pyright", "strict"): ["src"]}
    assert read_settings("pyrightconfig.json", '{"strict": ["src"]} /* open') == {("pyright", "strict"): ["src"]}


def test_an_unterminated_string_is_unreadable_not_a_crash() -> None:
    with pytest.raises(ValueError, match=r"tsconfig\.json: cannot read as tsconfig"):
        read_settings("tsconfig.json", '{"compilerOptions": {"strict": "open')


def test_mypy_overrides_in_pyproject() -> None:
    text = (
        "[tool.mypy]\n"
        'overrides = ["not a table", {module = "a", ignore_errors = true}, {ignore_missing_imports = true},'
        ' {module = ["b", "c.*"], strict = false}]\n'
    )
    assert read_settings("pyproject.toml", text) == {
        ("mypy", "overrides", "a", "ignore_errors"): True,
        ("mypy", "overrides", "*", "ignore_missing_imports"): True,  # no module: every module
        ("mypy", "overrides", "b", "strict"): False,
        ("mypy", "overrides", "c.*", "strict"): False,
    }
