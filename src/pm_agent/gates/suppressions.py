"""Inline suppressions a change adds: `# noqa`, `# type: ignore`, `eslint-disable`, `@ts-ignore`, `//nolint`,
`@SuppressWarnings`, ...

Only source files are read (Python, JavaScript/TypeScript, Go, Rust, Java/Kotlin/Groovy/Scala, Ruby, PHP), so a
README
quoting `# noqa` is not
a suppression. In Python the marker must be in a comment (the tokenizer says which text is one), so a
string that mentions `# noqa` is not either. A suppression counts as added when the change adds more of
that exact suppression (marker and codes) to a file than it removes: moving or re-indenting a line that
already carried one adds nothing.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections import Counter, defaultdict
from pathlib import Path, PurePosixPath

from pm_agent.gates.common import is_ignored_path
from pm_agent.gates.justify import Weakening
from pm_agent.vcs import ChangeSet

PYTHON_SUFFIXES = (".py", ".pyi")
JVM_SUFFIXES = (".java", ".kt", ".kts", ".groovy", ".scala")
JS_SUFFIXES = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".vue", ".svelte")

_CODES = r"(?P<codes>[^\n]*)"
# (marker name, pattern): the pattern's `codes` group, when present, holds the rules it names.
PYTHON_MARKERS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("# noqa", re.compile(r"#\s*noqa\b(?::?\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)),
    ("# ruff: noqa", re.compile(r"#\s*(?:ruff|flake8)\s*:\s*noqa\b" + r"(?::\s*(?P<codes>[A-Z0-9, ]+))?")),
    ("# type: ignore", re.compile(r"#\s*type:\s*ignore\b(?:\[(?P<codes>[^\]]*)\])?")),
    ("# pyright: ignore", re.compile(r"#\s*pyright:\s*(?:ignore|basic|off)\b(?:\[(?P<codes>[^\]]*)\])?")),
    ("# mypy: ignore-errors", re.compile(r"#\s*mypy:\s*(?:ignore-errors|disable-error-code\s*=?\s*" + _CODES + ")")),
    ("# pylint: disable", re.compile(r"#\s*pylint:\s*disable(?:-next)?\s*=\s*(?P<codes>[\w\-, ]+)")),
    ("# nosec", re.compile(r"#\s*nosec\b(?:\s+(?P<codes>B\d+(?:[\s,]+B\d+)*))?")),
    ("# fmt: off", re.compile(r"#\s*fmt:\s*(?:off|skip)\b")),  # ruff format and black leave the code as written
)
JS_MARKERS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("eslint-disable", re.compile(r"eslint-disable(?:-next-line|-line)?\b(?P<codes>[^*\n]*)")),
    ("@ts-ignore", re.compile(r"@ts-ignore\b")),
    ("@ts-expect-error", re.compile(r"@ts-expect-error\b")),
    ("@ts-nocheck", re.compile(r"@ts-nocheck\b")),
    ("biome-ignore", re.compile(r"biome-ignore(?:-all)?\s+(?P<codes>[\w/]+)")),
    ("prettier-ignore", re.compile(r"prettier-ignore(?:-start)?\b")),
    ("tslint:disable", re.compile(r"tslint:disable(?:-next-line|-line)?\b(?P<codes>[^*\n]*)")),
)
GO_MARKERS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("//nolint", re.compile(r"//\s*nolint\b(?::(?P<codes>[\w,-]+))?")),
    ("//lint:ignore", re.compile(r"//\s*lint:(?:file-)?ignore\s+(?P<codes>\S+)")),
)
RUST_MARKERS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("#[allow]", re.compile(r"#!?\[\s*(?:allow|expect)\s*\((?P<codes>[^)]*)\)")),
    ("#[rustfmt::skip]", re.compile(r"#!?\[\s*rustfmt::skip\b")),
    ("#[cfg_attr(..., allow)]", re.compile(r"#!?\[\s*cfg_attr\s*\(.*\ballow\s*\((?P<codes>[^)]*)\)")),
)


_ARGS = r"(?:\s*\(\s*(?:value\s*=\s*)?(?P<codes>[^)]*)\))?"
JVM_MARKERS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("@SuppressWarnings", re.compile(r"@(?:java\.lang\.)?SuppressWarnings\b" + _ARGS)),  # javac, IDEs, checkstyle
    ("@Suppress", re.compile(r"@(?:file:)?Suppress\s*\(\s*(?P<codes>[^)]*)\)")),  # Kotlin: the compiler, detekt, ktlint
    ("@SuppressFBWarnings", re.compile(r"@SuppressFBWarnings\b" + _ARGS)),  # SpotBugs
    ("@SuppressLint", re.compile(r"@(?:file:)?SuppressLint\b" + _ARGS)),  # Android lint
    ("CHECKSTYLE:OFF", re.compile(r"//\s*CHECKSTYLE[:.]\s*OFF\b:?(?P<codes>[\w, |]*)")),
    ("NOPMD", re.compile(r"//\s*NOPMD\b")),
    ("spotless:off", re.compile(r"spotless:off\b")),
    ("ktlint-disable", re.compile(r"ktlint-disable\b(?P<codes>[\w:, -]*)")),
)


RUBY_MARKERS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("# rubocop:disable", re.compile(r"#\s*rubocop\s*:\s*(?:disable|todo)\b\s*(?P<codes>[\w/, ]*)")),
    ("# standard:disable", re.compile(r"#\s*standard\s*:\s*disable\b\s*(?P<codes>[\w/, ]*)")),
    ("# typed: false", re.compile(r"^#\s*typed:\s*(?:false|ignore)\b")),  # Sorbet's checks turned down for the file
    ("# steep:ignore", re.compile(r"#\s*steep:ignore\b\s*(?P<codes>[\w, ]*)")),
)
PHP_MARKERS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("phpcs:ignore", re.compile(r"phpcs:(?:ignore|disable)(?:File)?\b\s*(?P<codes>[\w., ]*)")),
    ("@codingStandardsIgnore", re.compile(r"@codingStandardsIgnore(?:Line|Start|File)\b")),
    ("@phpstan-ignore", re.compile(r"@phpstan-ignore(?:-line|-next-line)?\b\s*(?P<codes>[\w.,\- ]*)")),
    ("@psalm-suppress", re.compile(r"@psalm-suppress\s+(?P<codes>\w+)")),
    ("@SuppressWarnings", re.compile(r"@SuppressWarnings\s*\(\s*(?P<codes>[^)]*)\)")),  # PHPMD
)


def markers_for(path: str) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """The suppression markers of `path`'s language (none for files that are not source code)."""
    suffix = PurePosixPath(path).suffix.lower()
    if suffix in PYTHON_SUFFIXES:
        return PYTHON_MARKERS
    if suffix in JS_SUFFIXES:
        return JS_MARKERS
    if suffix == ".go":
        return GO_MARKERS
    if suffix == ".rs":
        return RUST_MARKERS
    if suffix in JVM_SUFFIXES:
        return JVM_MARKERS
    if suffix in (".rb", ".rake"):
        return RUBY_MARKERS
    if suffix == ".php":
        return PHP_MARKERS
    return ()


def _codes(text: str | None) -> tuple[str, ...]:
    # Annotation arguments quote their names and may list them in braces: `{"unchecked", "rawtypes"}`.
    names = (c.strip("\"'{}") for c in re.split(r"[\s,]+", (text or "").strip(" -:")))
    return tuple(c for c in names if c and c != "--")


def find_markers(path: str, text: str) -> list[tuple[str, tuple[str, ...]]]:
    """The suppressions in one line of `path`: (marker name, codes) each."""
    found: list[tuple[str, tuple[str, ...]]] = []
    for name, pattern in markers_for(path):
        for match in pattern.finditer(text):
            codes = match.groupdict().get("codes")
            found.append((name, _codes(codes)))
    return found


def python_comment_lines(source: str) -> dict[int, str] | None:
    """Line number -> the comment on that line, from the tokenizer; None when the file does not tokenize."""
    comments: dict[int, str] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                comments[token.start[0]] = token.string
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None
    return comments


def _added_text(root: Path, path: str, number: int, text: str, comments: dict[int, str] | None) -> str:
    """The part of an added line where a suppression may be: its comment in Python, else the whole line."""
    if not path.endswith(PYTHON_SUFFIXES) or comments is None:
        return text
    return comments.get(number, "")


def added_suppressions(root: Path, changes: ChangeSet) -> list[Weakening]:
    """Suppressions the change adds to source files, one `Weakening` each, in file and line order."""
    found: list[Weakening] = []
    for path, lines in sorted(changes.added.items()):
        if is_ignored_path(path) or not markers_for(path):
            continue
        comments: dict[int, str] | None = None
        if path.endswith(PYTHON_SUFFIXES) and (root / path).is_file():
            comments = python_comment_lines((root / path).read_text(encoding="utf-8", errors="replace"))
        removed: Counter[tuple[str, tuple[str, ...]]] = Counter()
        for _, text in changes.removed.get(path, []):
            removed.update(find_markers(path, text))
        per_key: dict[tuple[str, tuple[str, ...]], list[Weakening]] = defaultdict(list)
        for number, text in lines:
            for name, codes in find_markers(path, _added_text(root, path, number, text, comments)):
                what = f"inline suppression `{name}`" + (f" of {', '.join(codes)}" if codes else " (every rule)")
                per_key[(name, codes)].append(
                    Weakening("lint/type check", path, number, text.strip(), what, codes or (name.strip("#/ @[]"),))
                )
        for key, items in per_key.items():
            found += items[removed[key] :]  # as many as were removed are moves, not additions
    return sorted(found, key=lambda w: (w.path, w.line or 0))


__all__ = ["added_suppressions", "find_markers", "markers_for", "python_comment_lines"]
