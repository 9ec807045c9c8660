"""The command that runs only the task's test files: each way a runner and a path are told apart.

Written against mutmut's survivors (make mutation).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.gates.common import command_for_test_files


@pytest.mark.parametrize(
    ("command", "files", "expected"),
    [
        ("pytest -x {files} -q", ["a b.py", "c.py"], "pytest -x 'a b.py' c.py -q"),
        ("pytest tests/unit -q", ["a.py", "b.py"], "pytest -q a.py b.py"),
        ("py.test tests/ -q", ["a.py"], "py.test -q a.py"),
        (".venv/bin/pytest tests/test_x.py::test_y", ["a.py"], ".venv/bin/pytest a.py"),
        ("pytest -q", ["a.py"], "pytest -q a.py"),
        ("pytest --rootdir=/tmp/x tests/unit", ["a.py"], "pytest --rootdir=/tmp/x a.py"),
        ("pytest tests", ["a.py"], "pytest tests a.py"),  # without the worktree "tests" is not known to be a path
        ("npm test", ["a.test.js", "b.test.js"], "npm test a.test.js b.test.js"),
        ('pytest "unbalanced', ["a.py"], 'pytest "unbalanced a.py'),
    ],
)
def test_command_for_test_files(command: str, files: list[str], expected: str) -> None:
    assert command_for_test_files(command, files) == expected


def test_a_directory_of_the_worktree_is_a_path_argument(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    assert command_for_test_files("pytest tests -q", ["a.py"], tmp_path) == "pytest -q a.py"
    assert command_for_test_files("pytest unit -q", ["a.py"], tmp_path) == "pytest unit -q a.py"  # no such dir
