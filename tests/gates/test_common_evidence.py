"""Command evidence lines, test paths and agent-written paths: the shared helpers of the gates.

Written against mutmut's survivors (make mutation) in gates/common.py. Command results come from
real commands run through the ward, except where a duration or a count has to be exact.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pm_agent.gates.common import command_evidence, describe, is_test_path, norm_path
from pm_agent.gates.ward import CommandResult, TestCounts, run_command

PY = f"{sys.executable} -c"


def _result(**fields: object) -> CommandResult:
    return CommandResult.model_validate(
        {"cmd": "make test", "exit_code": 0, "duration_ms": 0, "output_tail": ""} | fields
    )


@pytest.mark.parametrize(
    ("fields", "line"),
    [
        ({"duration_ms": 100_000}, "`make test` PASSED: exit 0 in 100.0s"),
        ({"exit_code": 2, "duration_ms": 1500}, "`make test` FAILED: exit 2 in 1.5s"),
        ({"exit_code": -9, "timed_out": True, "duration_ms": 30_000}, "`make test` TIMED OUT: exit -9 in 30.0s"),
        ({"exit_code": 0, "timed_out": True}, "`make test` TIMED OUT: exit 0 in 0.0s"),
        (
            {"exit_code": 1, "test_counts": TestCounts(passed=3, failed=1, warnings=2)},
            "`make test` FAILED: exit 1 (3 passed, 1 failed, 2 warnings) in 0.0s",
        ),
        ({"exit_code": 5, "test_counts": TestCounts()}, "`make test` FAILED: exit 5 (no tests ran) in 0.0s"),
    ],
)
def test_describe(fields: dict[str, object], line: str) -> None:
    assert describe(_result(**fields)) == line


def test_a_failed_command_shows_its_last_15_output_lines(tmp_path: Path) -> None:
    script = "import sys; print('\\n'.join(f'line {i}' for i in range(1, 21))); sys.exit(3)"
    result = run_command(f'{PY} "{script}"', tmp_path, timeout_s=60)
    lines = command_evidence([result])
    assert lines[0].startswith(f"`{result.cmd}` FAILED: exit 3 in ")
    assert lines[1:] == [f"    line {i}" for i in range(6, 21)]
    assert command_evidence([result], tail_lines=2)[1:] == ["    line 19", "    line 20"]


def test_a_passing_command_shows_no_output_and_a_silent_failure_no_tail(tmp_path: Path) -> None:
    passed = run_command(f"{PY} \"print('all good')\"", tmp_path, timeout_s=60)
    silent = run_command(f'{PY} "import sys; sys.exit(1)"', tmp_path, timeout_s=60)
    lines = command_evidence([passed, silent])
    assert len(lines) == 2
    assert lines[0].startswith(f"`{passed.cmd}` PASSED: exit 0 in ")
    assert lines[1].startswith(f"`{silent.cmd}` FAILED: exit 1 in ")


@pytest.mark.parametrize(
    ("path", "is_test"),
    [
        ("src/tests/helper.py", True),  # a tests directory below the top
        ("tests/helper.py", True),
        ("pkg/spec/fixtures/data.json", True),
        ("src/helper.py", False),
        ("tests", False),  # the directory's own name is not a file under it
        ("src/main/java/shop/CartTest.java", True),  # by its name, wherever it lives
        ("core/src/it/java/shop/CartIT.java", True),
        ("app/src/test/kotlin/shop/CartSpec.kt", True),
        ("shared/src/commonTest/kotlin/shop/Cart.kt", True),  # Kotlin and Android test source sets
        ("app/src/androidTest/java/shop/Screen.java", True),
        ("app/src/integrationTest/java/shop/Flow.java", True),
        ("Shop.Tests/CartTests.cs", True),
        ("Shop.UnitTests/Helpers.cs", True),
        ("spec/models/cart_spec.rb", True),
        ("src/main/java/shop/Contest.java", False),  # not Test at a word's start
        ("src/main/java/shop/Latest.java", False),
        ("src/main/java/shop/TestData.java", False),
        ("src/main/kotlin/shop/Attest.kt", False),
        ("src/main/java/shop/inspect/Cart.java", False),
        ("src/latest/Cart.java", False),
        ("Shop.Testing/Cart.cs", False),
    ],
)
def test_files_under_a_test_directory_at_any_depth(path: str, is_test: bool) -> None:
    assert is_test_path(path) is is_test


def test_norm_path_turns_backslashes_into_slashes(tmp_path: Path) -> None:
    assert norm_path(tmp_path, " .\\src\\a.py ") == "src/a.py"
    assert norm_path(tmp_path, f"{tmp_path.resolve()}\\src\\b.py".replace("/", "\\")) == "src/b.py"


def test_norm_path_of_a_worktree_whose_name_ends_in_x(tmp_path: Path) -> None:
    root = tmp_path / "GFX"
    root.mkdir()
    assert norm_path(root, f"{root.resolve()}/src/a.py") == "src/a.py"
    assert norm_path(f"{root}/", f"{root.resolve()}/src/a.py") == "src/a.py"


def test_norm_path_of_a_worktree_at_the_filesystem_root() -> None:
    assert norm_path("/", "/srv/app/a.py") == "srv/app/a.py"
