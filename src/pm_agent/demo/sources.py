"""The demo project's files, as the scripted agents write them: a small, real Python package "textstats".

Every string here is a whole file (the Write tool takes a file's exact final content). Applied in the
plan's dependency order they keep the suite, ruff and mypy green; `COUNTS_FIRST_ATTEMPT` is the one
deliberate slip (no silent-e rule, so its own new test fails) that pm-agent's gates must catch.
"""

from __future__ import annotations

from typing import Final

# -- the skeleton (baseline commit) -----------------------------------------------------------------

PYPROJECT: Final = """\
[project]
name = "textstats"
version = "0.1.0"
description = "Statistics about English text: counts and readability scores."
readme = "README.md"
requires-python = ">=3.11"

[tool.pytest.ini_options]
pythonpath = ["src"]
testpaths = ["tests"]
# pm-agent runs these tests with its own interpreter: leave out pytest plugins textstats does not use.
addopts = "-p no:cacheprovider -p no:hypothesispytest -p no:asyncio -p no:anyio"

[tool.ruff]
line-length = 100
target-version = "py311"
src = ["src", "tests"]

[tool.ruff.lint]
select = ["E", "F", "W", "I", "UP", "B"]

[tool.mypy]
strict = true
"""

# Task 6 adds the console script (the file is written whole, so this is the skeleton plus one table).
PYPROJECT_WITH_SCRIPT: Final = PYPROJECT.replace(
    'requires-python = ">=3.11"\n',
    'requires-python = ">=3.11"\n\n[project.scripts]\ntextstats = "textstats.cli:main"\n',
)

INIT_SKELETON: Final = '''\
"""textstats: statistics about English text (counts and readability scores)."""

__version__ = "0.1.0"
'''

TEST_VERSION: Final = """\
import textstats


def test_version_is_set() -> None:
    assert textstats.__version__ == "0.1.0"
"""

README_STUB: Final = """\
# textstats

Statistics about English text: word, sentence and syllable counts and readability scores.

Status: under construction. The design and the plan are in `docs/plans/`.
"""

GITIGNORE: Final = """\
.pm-agent/
__pycache__/
*.pyc
.pytest_cache/
.ruff_cache/
.mypy_cache/
"""

# -- Task 1: input validation (CRITICAL) ------------------------------------------------------------

VALIDATE: Final = r'''"""Input validation: what textstats accepts as text, checked before any analysis."""

from __future__ import annotations

__all__ = ["MAX_TEXT_BYTES", "InvalidTextError", "validate_text"]

MAX_TEXT_BYTES = 1_000_000
"""The largest text accepted, in UTF-8 bytes (the design's 1 MB budget)."""


class InvalidTextError(ValueError):
    """The text cannot be analysed: too large, a NUL byte, or not valid Unicode."""


def validate_text(text: object, *, max_bytes: int = MAX_TEXT_BYTES) -> str:
    """Return `text` unchanged when it is safe to analyse; raise otherwise.

    Raises TypeError when `text` is not a str, and InvalidTextError when it holds a NUL byte,
    a lone surrogate (not valid Unicode) or more than `max_bytes` UTF-8 bytes.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")
    if "\x00" in text:
        raise InvalidTextError("text contains a NUL byte")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise InvalidTextError(f"text is not valid Unicode (position {exc.start})") from None
    if size > max_bytes:
        raise InvalidTextError(f"text is {size} bytes; the limit is {max_bytes}")
    return text
'''

TEST_VALIDATE: Final = r"""import pytest

from textstats.validate import MAX_TEXT_BYTES, InvalidTextError, validate_text


def test_valid_text_is_returned_unchanged() -> None:
    assert validate_text("Hello, world.") == "Hello, world."


def test_non_string_input_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="must be str"):
        validate_text(b"bytes are not text")


def test_nul_byte_is_rejected() -> None:
    with pytest.raises(InvalidTextError, match="NUL"):
        validate_text("abc\x00def")


def test_lone_surrogate_is_rejected() -> None:
    with pytest.raises(InvalidTextError, match="not valid Unicode"):
        validate_text("abc\ud800")


def test_text_over_the_limit_is_rejected() -> None:
    with pytest.raises(InvalidTextError, match="limit"):
        validate_text("a" * (MAX_TEXT_BYTES + 1))


def test_the_limit_counts_utf8_bytes_not_characters() -> None:
    assert validate_text("é" * 5, max_bytes=10) == "é" * 5
    with pytest.raises(InvalidTextError):
        validate_text("é" * 6, max_bytes=10)
"""

# -- Task 2: tokenizer ------------------------------------------------------------------------------

TOKENIZE: Final = r'''"""Splitting text into words and sentences."""

from __future__ import annotations

import re

__all__ = ["sentences", "words"]

_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def words(text: str) -> list[str]:
    """The words of `text` without punctuation; apostrophes stay inside words ("don't")."""
    return _WORD.findall(text)


def sentences(text: str) -> list[str]:
    """The sentences of `text`, split after ".", "!" or "?" followed by whitespace."""
    return [part.strip() for part in _SENTENCE_END.split(text.strip()) if part.strip()]
'''

TEST_TOKENIZE: Final = """\
from textstats.tokenize import sentences, words


def test_words_drop_punctuation() -> None:
    assert words("Hello, world!") == ["Hello", "world"]


def test_apostrophes_stay_inside_words() -> None:
    assert words("Don't stop.") == ["Don't", "stop"]


def test_sentences_split_on_terminal_punctuation() -> None:
    assert sentences("One. Two? Three!") == ["One.", "Two?", "Three!"]


def test_empty_text_gives_empty_lists() -> None:
    assert words("") == []
    assert sentences("   ") == []
"""

# -- Task 3: counts (the first attempt forgets the silent e) ----------------------------------------

_COUNTS_HEAD = '''\
"""Word, sentence and syllable counts."""

from __future__ import annotations

import re
from dataclasses import dataclass

from textstats.tokenize import sentences, words

__all__ = ["Counts", "count", "syllables"]

_VOWEL_GROUP = re.compile(r"[aeiouy]+")


@dataclass(frozen=True)
class Counts:
    """How many words, sentences and syllables a text has."""

    words: int
    sentences: int
    syllables: int


'''

_COUNT_FUNCTION = '''\


def count(text: str) -> Counts:
    """Counts for `text`; empty text gives all zeros."""
    found = words(text)
    return Counts(
        words=len(found),
        sentences=len(sentences(text)),
        syllables=sum(syllables(word) for word in found),
    )
'''

COUNTS: Final = (
    _COUNTS_HEAD
    + '''\
def syllables(word: str) -> int:
    """Syllables in one word: its vowel groups, without a silent final "e" ("make" has one)."""
    lower = word.lower()
    groups = len(_VOWEL_GROUP.findall(lower))
    if lower.endswith("e") and not lower.endswith("le") and groups > 1:
        groups -= 1  # silent e: "make" has one syllable, "table" keeps two
    return max(groups, 1) if lower else 0
'''
    + _COUNT_FUNCTION
)

COUNTS_FIRST_ATTEMPT: Final = (
    _COUNTS_HEAD
    + '''\
def syllables(word: str) -> int:
    """Syllables in one word: its vowel groups."""
    lower = word.lower()
    groups = len(_VOWEL_GROUP.findall(lower))
    return max(groups, 1) if lower else 0
'''
    + _COUNT_FUNCTION
)

TEST_COUNTS: Final = """\
import dataclasses

import pytest

from textstats.counts import Counts, count, syllables


def test_count_returns_counts() -> None:
    assert count("The cat sat. The dog ran!") == Counts(words=6, sentences=2, syllables=6)


def test_counts_are_frozen() -> None:
    result = count("Hi.")
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.words = 3  # type: ignore[misc]


def test_empty_text_gives_all_zeros() -> None:
    assert count("") == Counts(words=0, sentences=0, syllables=0)


def test_syllables_are_vowel_groups() -> None:
    assert syllables("readability") == 5
    assert syllables("cat") == 1


def test_silent_final_e_is_not_a_syllable() -> None:
    assert syllables("make") == 1
    assert syllables("table") == 2
"""

# -- Task 4: readability ----------------------------------------------------------------------------

READABILITY: Final = '''\
"""Readability scores: Flesch reading ease and Flesch-Kincaid grade level."""

from __future__ import annotations

from textstats.counts import Counts

__all__ = ["flesch_kincaid_grade", "flesch_reading_ease"]


def _ratios(counts: Counts) -> tuple[float, float] | None:
    """(words per sentence, syllables per word), or None for a text without sentences or words."""
    if counts.sentences == 0 or counts.words == 0:
        return None
    return counts.words / counts.sentences, counts.syllables / counts.words


def flesch_reading_ease(counts: Counts) -> float | None:
    """206.835 - 1.015 * words/sentences - 84.6 * syllables/words: higher reads easier."""
    ratios = _ratios(counts)
    if ratios is None:
        return None
    per_sentence, per_word = ratios
    return 206.835 - 1.015 * per_sentence - 84.6 * per_word


def flesch_kincaid_grade(counts: Counts) -> float | None:
    """0.39 * words/sentences + 11.8 * syllables/words - 15.59: a US school grade."""
    ratios = _ratios(counts)
    if ratios is None:
        return None
    per_sentence, per_word = ratios
    return 0.39 * per_sentence + 11.8 * per_word - 15.59
'''

TEST_READABILITY: Final = """\
import pytest

from textstats.counts import Counts
from textstats.readability import flesch_kincaid_grade, flesch_reading_ease

SAMPLE = Counts(words=100, sentences=5, syllables=150)


def test_flesch_reading_ease_matches_the_formula() -> None:
    assert flesch_reading_ease(SAMPLE) == pytest.approx(59.635)


def test_flesch_kincaid_grade_matches_the_formula() -> None:
    assert flesch_kincaid_grade(SAMPLE) == pytest.approx(9.91)


def test_text_without_sentences_has_no_score() -> None:
    empty = Counts(words=0, sentences=0, syllables=0)
    assert flesch_reading_ease(empty) is None
    assert flesch_kincaid_grade(empty) is None
"""

# -- Task 5: public API entry point (CRITICAL) ------------------------------------------------------

REPORT: Final = '''\
"""The public entry point: `analyze(text)` gives a `Report`."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from textstats.counts import Counts, count
from textstats.readability import flesch_kincaid_grade, flesch_reading_ease
from textstats.validate import validate_text

__all__ = ["Report", "analyze"]


@dataclass(frozen=True)
class Report:
    """Everything textstats reports about one text: the counts and both readability scores."""

    counts: Counts
    reading_ease: float | None
    grade_level: float | None

    def as_dict(self) -> dict[str, Any]:
        """The report as plain data (for JSON output)."""
        return asdict(self)


def analyze(text: str) -> Report:
    """Validate `text`, then count it and score its readability."""
    counts = count(validate_text(text))
    return Report(
        counts=counts,
        reading_ease=flesch_reading_ease(counts),
        grade_level=flesch_kincaid_grade(counts),
    )
'''

INIT_API: Final = '''\
"""textstats: statistics about English text (counts and readability scores)."""

from textstats.report import Report, analyze

__all__ = ["Report", "analyze"]
__version__ = "0.1.0"
'''

TEST_API: Final = r"""import pytest

import textstats
from textstats import Report, analyze
from textstats.validate import InvalidTextError


def test_the_public_names_are_exactly_analyze_and_report() -> None:
    assert sorted(textstats.__all__) == ["Report", "analyze"]


def test_analyze_returns_counts_and_scores() -> None:
    report = analyze("The cat sat on the mat. The dog ran.")
    assert isinstance(report, Report)
    assert (report.counts.words, report.counts.sentences) == (9, 2)
    assert report.reading_ease is not None
    assert report.grade_level is not None


def test_analyze_validates_its_input() -> None:
    with pytest.raises(InvalidTextError):
        analyze("bad\x00input")


def test_empty_text_has_no_scores() -> None:
    report = analyze("")
    assert report.reading_ease is None
    assert report.grade_level is None
"""

# -- Task 6: command-line interface (its default format is the user's answer) -----------------------

_CLI_TEMPLATE = '''\
"""The `textstats` command: counts and readability scores of a text file."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from textstats.report import Report, analyze
from textstats.validate import InvalidTextError

__all__ = ["main", "render_json", "render_table"]

DEFAULT_FORMAT = "@DEFAULT@"  # the user's decision on task-6: @DECISION@


def render_table(report: Report) -> str:
    """The report as aligned `name  value` lines."""
    rows = [
        ("words", str(report.counts.words)),
        ("sentences", str(report.counts.sentences)),
        ("syllables", str(report.counts.syllables)),
        ("reading ease", _score(report.reading_ease)),
        ("grade level", _score(report.grade_level)),
    ]
    width = max(len(name) for name, _ in rows)
    return "\\n".join(f"{name.ljust(width)}  {value}" for name, value in rows)


def render_json(report: Report) -> str:
    """The report as JSON."""
    return json.dumps(report.as_dict(), indent=2)


def _score(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="textstats", description="Counts and readability scores of a text file."
    )
    parser.add_argument("file", type=Path, help="the text file to analyse (UTF-8)")
    parser.add_argument(
        "@FLAG@",
        dest="format",
        action="store_const",
        const="@OTHER@",
        default=DEFAULT_FORMAT,
        help="@HELP@",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; the exit status: 0, or 2 when the file cannot be read or analysed."""
    args = _parser().parse_args(argv)
    try:
        report = analyze(args.file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, InvalidTextError) as exc:
        print(f"textstats: {args.file}: {_reason(exc)}", file=sys.stderr)
        return 2
    print(render_json(report) if args.format == "json" else render_table(report))
    return 0


def _reason(exc: Exception) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return str(exc)


if __name__ == "__main__":
    raise SystemExit(main())
'''

_TEST_CLI_HEAD = """\
import json
from pathlib import Path

import pytest

from textstats.cli import main

TEXT = "The cat sat on the mat. The dog ran.\\n"


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    path = tmp_path / "sample.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


"""

_TEST_CLI_TABLE_DEFAULT = """\
def test_the_default_output_is_a_plain_table(
    sample: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(sample)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["words", "9"]
    assert lines[3].startswith("reading ease")


def test_the_json_flag_prints_json(sample: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--json", str(sample)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["counts"] == {"words": 9, "sentences": 2, "syllables": 9}
"""

_TEST_CLI_JSON_DEFAULT = """\
def test_the_default_output_is_json(sample: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(sample)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["counts"] == {"words": 9, "sentences": 2, "syllables": 9}


def test_the_table_flag_prints_a_plain_table(
    sample: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--table", str(sample)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["words", "9"]
    assert lines[3].startswith("reading ease")
"""

_TEST_CLI_TAIL = """\


def test_a_missing_file_exits_2_with_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tmp_path / "missing.txt")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "missing.txt" in err
"""


def cli_source(json_default: bool) -> str:
    """`src/textstats/cli.py` for the format the user chose as the default."""
    if json_default:
        values = {
            "@DEFAULT@": "json",
            "@DECISION@": "JSON unless --table is given",
            "@FLAG@": "--table",
            "@OTHER@": "table",
            "@HELP@": "print a plain table instead of JSON",
        }
    else:
        values = {
            "@DEFAULT@": "table",
            "@DECISION@": "a plain table unless --json is given",
            "@FLAG@": "--json",
            "@OTHER@": "json",
            "@HELP@": "print JSON instead of a plain table",
        }
    text = _CLI_TEMPLATE
    for key, value in values.items():
        text = text.replace(key, value)
    return text


def cli_tests(json_default: bool) -> str:
    """`tests/test_cli.py` for the format the user chose as the default."""
    middle = _TEST_CLI_JSON_DEFAULT if json_default else _TEST_CLI_TABLE_DEFAULT
    return _TEST_CLI_HEAD + middle + _TEST_CLI_TAIL


# -- Task 7: usage documentation (LOW, docs) --------------------------------------------------------

README_USAGE: Final = """\
# textstats

Statistics about English text: word, sentence and syllable counts and readability scores.

## Usage

As a library:

```python
from textstats import analyze

report = analyze("The cat sat on the mat. The dog ran.")
print(report.counts.words, report.reading_ease, report.grade_level)
```

From the command line:

```
textstats essay.txt
textstats --help
```

Every function, field and limit is described in [docs/usage.md](docs/usage.md).
"""

USAGE_DOC: Final = """\
# Using textstats

## The library

`textstats.analyze(text)` is the one entry point. It returns a frozen `Report`:

| field | meaning |
|---|---|
| `counts.words` | words, punctuation dropped ("don't" is one word) |
| `counts.sentences` | sentences, split after `.`, `!` and `?` |
| `counts.syllables` | syllables by the vowel-group heuristic (a silent final "e" does not count) |
| `reading_ease` | Flesch reading ease (higher reads easier), `None` for a text without sentences |
| `grade_level` | Flesch-Kincaid grade level, `None` for a text without sentences |

## The command

`textstats FILE` prints the same report for a UTF-8 text file; `textstats --help` lists the
output options. It exits with status 2 and a one-line message when the file cannot be read.

## Limits

- Text must be a `str` of at most 1 MB of UTF-8 (`textstats.validate.MAX_TEXT_BYTES`).
- Text with a NUL byte or invalid Unicode is refused with `InvalidTextError`.
"""

# -- Task 8: editor configuration (LOW, config) -----------------------------------------------------

EDITORCONFIG: Final = """\
root = true

[*]
charset = utf-8
end_of_line = lf
insert_final_newline = true
trim_trailing_whitespace = true

[*.py]
indent_style = space
indent_size = 4

[*.{md,toml,yaml,yml}]
indent_style = space
indent_size = 2
"""

# -- Task 9: changelog (LOW, changelog) -------------------------------------------------------------

CHANGELOG: Final = """\
# Changelog

All notable changes to textstats are listed here, newest first.
The format follows [Keep a Changelog](https://keepachangelog.com/en/1.1.0/).

## [Unreleased]

### Added

- Input validation: text over 1 MB, with a NUL byte or invalid Unicode is refused.
- Word, sentence and syllable counts.
- Flesch reading ease and Flesch-Kincaid grade level.
- `textstats.analyze(text)`, the one public entry point, returning a `Report`.
- The `textstats FILE` command.
"""
