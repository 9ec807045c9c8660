"""Ward's pieces where a one-token change would go unnoticed: the summary line, the rolling tail, kept output.

Written against mutmut's survivors (make mutation).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pm_agent.gates.ward import CommandResult, TestCounts, _Tail, parse_pytest_summary, run_command


@pytest.mark.parametrize(
    ("output", "counts"),
    [
        ("1 error, 2 warnings in 0.1s", TestCounts(errors=1, warnings=2)),
        ("3 failed, 1 rerun in 2.0s", TestCounts(failed=3, rerun=1)),
        ("2 passed in 0.1s\n1 failed, 1 passed in 0.2s", TestCounts(failed=1, passed=1)),  # the last summary
        ("1 passed in 0.1s\nwarning: 3 passed without a time\n", TestCounts(passed=1)),  # no "in Ns": not a summary
        ("1 passed, 2 passed in 0.1s", TestCounts(passed=3)),  # counts of one word add up
        ("5 passed in 0.1s\nin 0.2s done", TestCounts(passed=5)),  # a time without counts: not a summary
    ],
)
def test_summary_line_choice_and_every_word(output: str, counts: TestCounts) -> None:
    assert parse_pytest_summary(output) == counts


def test_no_summary_at_all() -> None:
    assert parse_pytest_summary("") is None
    assert parse_pytest_summary("ran in 0.1s\n") is None


def test_tail_keeps_the_last_lines_caps_long_ones_and_counts_everything() -> None:
    tail = _Tail(max_lines=2, max_line_chars=10, keep_bytes=5)
    tail.feed(b"one\r\ntwo\nthr")
    tail.feed(b"ee\n" + b"x" * 25 + b"\nrest")
    assert tail.total_bytes == len(b"one\r\ntwo\nthr") + 3 + 25 + 5
    assert tail.total_lines == 4
    assert list(tail.lines) == ["three", "xxxxx [...] xxxxx"]
    assert tail.text() == "three\nxxxxx [...] xxxxx\nrest"
    assert tail.truncated()
    assert bytes(tail.kept) == b"one\r\n"


def test_tail_of_short_output_is_not_truncated() -> None:
    tail = _Tail(max_lines=3, max_line_chars=10)
    tail.feed(b"a\nb\n")
    assert tail.text() == "a\nb"
    assert not tail.truncated()
    assert tail.kept == bytearray()
    exact = _Tail(max_lines=3, max_line_chars=3)
    exact.feed(b"abc\n")
    assert exact.text() == "abc"
    assert not exact.truncated()


def test_an_endless_line_keeps_its_ends() -> None:
    tail = _Tail(max_lines=3, max_line_chars=4)
    tail.feed(b"ab" + b"-" * 20 + b"yz")
    assert tail.partial == "ab [...] yz"
    assert tail.text() == "ab [...] yz"


def test_kept_output_and_whether_it_is_whole(tmp_path: Path) -> None:
    script = f"{sys.executable} -c \"print('a' * 10)\""
    whole = run_command(script, tmp_path, 20, keep_output_bytes=11)
    assert whole.output == "a" * 10 + "\n"
    assert whole.output_complete
    cut = run_command(script, tmp_path, 20, keep_output_bytes=4)
    assert cut.output == "aaaa"
    assert not cut.output_complete
    none = run_command(script, tmp_path, 20)
    assert none.output is None
    assert not none.output_complete
    assert none.output_tail == "a" * 10
    assert none.cwd == str(tmp_path)


def test_command_result_tail_and_ok() -> None:
    result = CommandResult(cmd="x", exit_code=0, duration_ms=1, output_tail="1\n2\n3")
    assert result.tail(2) == "2\n3"
    assert result.ok
    assert not result.model_copy(update={"timed_out": True}).ok
    assert not result.model_copy(update={"exit_code": 1}).ok


def test_a_capped_line_alone_makes_the_tail_truncated() -> None:
    tail = _Tail(max_lines=5, max_line_chars=4)
    tail.feed(b"abcdefgh\n")
    assert list(tail.lines) == ["ab [...] gh"]
    assert tail.truncated()


def test_line_ends_and_undecodable_bytes() -> None:
    tail = _Tail(max_lines=5, max_line_chars=20)
    tail.feed(b"a  \r\n\rb\r\n\xff\xfe\n")
    assert list(tail.lines) == ["a  ", "\rb", "\ufffd\ufffd"]


def test_a_partial_line_is_capped_only_past_twice_the_line_limit() -> None:
    at_limit = _Tail(max_lines=3, max_line_chars=4)
    at_limit.feed(b"abcdefgh")  # 8 = 2 x 4: kept whole until it ends
    assert at_limit.partial == "abcdefgh"
    past = _Tail(max_lines=3, max_line_chars=4)
    past.feed(b"abcdefghij")  # 10 > 8
    assert past.partial == "ab [...] ij"


def test_a_command_that_cannot_start_is_exit_127_with_the_reason(tmp_path: Path) -> None:
    missing = tmp_path / "gone"
    result = run_command("true", missing, 5)
    assert result.cmd == "true"
    assert result.cwd == str(missing)
    assert result.exit_code == 127
    assert result.duration_ms == 0
    assert result.output_tail.startswith("cannot start: ")
    assert str(missing) in result.output_tail


def test_command_result_tail_defaults_to_20_lines() -> None:
    result = CommandResult(cmd="x", exit_code=0, duration_ms=1, output_tail="\n".join(map(str, range(30))))
    assert result.tail() == "\n".join(map(str, range(10, 30)))
