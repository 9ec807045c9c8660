"""The demo plan as data: each task's plan entry and the work the scripted agents do for it.

One source of truth: `project.render_plan` writes the plan markdown from `DEMO_TASKS`, and the brain
(`brain.DemoBrain`) writes these files and maps these criteria, so the two cannot drift apart.

What the run shows:
- Task 1 (input validation, CRITICAL) is ready first and runs alone, with a reviewer.
- Tasks 2 → 3 → 4 → 5 → 6 form a dependency chain (tokenize → counts → readability → API → CLI).
- Task 3's first developer attempt runs only the old tests and claims they pass; its new test fails.
  pm-agent's own test run catches it (gates 2 and 3), the fixer adds the missing rule.
- Task 6's developer first asks whether the CLI should print JSON or a plain table by default
  (needs-user-input), then builds what the answer says (`DEMO_ANSWERS`).
- Tasks 7, 8 and 9 are LOW, independent, each in its own ownership area (docs, config, changelog): they
  share the slots and run in parallel, brought forward by the anti-starvation rule after three
  CRITICAL/NORMAL completions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

from pm_agent.demo import sources as src

__all__ = [
    "DEMO_ANSWERS",
    "DEMO_TASKS",
    "Criterion",
    "DemoTask",
    "Question",
    "ReviewText",
    "demo_task",
    "json_default",
]


@dataclass(frozen=True)
class Criterion:
    """An acceptance criterion and where the task's files meet it: the first line holding an anchor."""

    text: str
    path: str
    anchors: tuple[str, ...]


@dataclass(frozen=True)
class ReviewText:
    """Gate 6's review note: what changed, the risks, how to roll it back."""

    summary: str
    risks: tuple[str, ...]
    rollback: str


@dataclass(frozen=True)
class Question:
    """A needs-user-input question a developer asks before it starts."""

    question: str
    context: str


@dataclass(frozen=True)
class DemoTask:
    """One plan task and its scripted work.

    `files` are the final contents (created and modified files, then tests) in the order the agent
    writes them; `variant` replaces them when the content depends on the user's answer.
    `first_attempt` overrides files on the developer's first attempt, which then runs only
    `first_attempt_tests` (the deliberate slip a gate must catch).
    """

    number: int
    title: str
    description: str
    ownership: str
    tier: str | None  # the explicit tier written in the plan; None lets pm-agent classify it
    depends_on: tuple[int, ...]
    create: tuple[str, ...]
    modify: tuple[str, ...]
    tests: tuple[str, ...]
    criteria: tuple[Criterion, ...]
    summary: str
    review: ReviewText
    files: Mapping[str, str] = field(default_factory=dict)
    variant: Callable[[str | None], dict[str, str]] | None = None
    first_attempt: Mapping[str, str] = field(default_factory=dict)
    first_attempt_tests: tuple[str, ...] = ()
    first_attempt_summary: str = ""
    fix_summary: str = ""
    question: Question | None = None
    steps: tuple[str, ...] = ()

    @property
    def ref(self) -> str:
        """`task-<n>`, as pm-agent names the task in contracts and commit trailers."""
        return f"task-{self.number}"

    @property
    def task_id(self) -> str:
        """The plan's task id (`3` for `### Task 3: ...`)."""
        return str(self.number)

    def final_files(self, answer: str | None = None) -> dict[str, str]:
        """Path -> final content, in writing order (for the answer, when the content depends on it)."""
        return self.variant(answer) if self.variant is not None else dict(self.files)

    def attempt_files(self, attempt: int, answer: str | None = None) -> dict[str, str]:
        """What the developer writes on `attempt`: the first attempt's slip, then the final files."""
        files = self.final_files(answer)
        if attempt <= 1:
            files.update(self.first_attempt)
        return files

    def fixed_files(self, answer: str | None = None) -> dict[str, str]:
        """What a fixer rewrites: the files the first attempt got wrong (all files for other tasks)."""
        final = self.final_files(answer)
        wrong = {path: final[path] for path in self.first_attempt if path in final}
        return wrong or final

    @property
    def all_paths(self) -> tuple[str, ...]:
        """Every file the task touches: created, modified, tests."""
        return (*self.create, *self.modify, *self.tests)


def json_default(answer: str | None) -> bool:
    """Whether the user's answer makes JSON the CLI's default: the format it names first wins."""
    text = (answer or "").lower()
    json_at = text.find("json")
    table_at = min((i for i in (text.find("table"), text.find("plain")) if i >= 0), default=-1)
    if json_at < 0:
        return False
    return table_at < 0 or json_at < table_at


def _cli_files(answer: str | None) -> dict[str, str]:
    as_json = json_default(answer)
    return {
        "src/textstats/cli.py": src.cli_source(as_json),
        "pyproject.toml": src.PYPROJECT_WITH_SCRIPT,
        "tests/test_cli.py": src.cli_tests(as_json),
    }


DEMO_TASKS: Final[tuple[DemoTask, ...]] = (
    DemoTask(
        number=1,
        title="Input validation (security)",
        description=(
            "Every text entering textstats passes one validation function first, so oversized or "
            "malformed input never reaches the analysers. It guards the library's only input, so it "
            "gets the full review."
        ),
        ownership="validation",
        tier="critical",
        depends_on=(),
        create=("src/textstats/validate.py",),
        modify=(),
        tests=("tests/test_validate.py",),
        criteria=(
            Criterion(
                "`validate_text(text)` returns the text unchanged when it is valid",
                "src/textstats/validate.py",
                ("    return text",),
            ),
            Criterion(
                "Input that is not a `str` raises `TypeError`",
                "src/textstats/validate.py",
                ("raise TypeError",),
            ),
            Criterion(
                "Text with a NUL byte, invalid Unicode or more than 1 MB of UTF-8 raises `InvalidTextError`",
                "src/textstats/validate.py",
                ("if size > max_bytes",),
            ),
        ),
        files={"src/textstats/validate.py": src.VALIDATE, "tests/test_validate.py": src.TEST_VALIDATE},
        summary=(
            "Added textstats.validate: validate_text() refuses non-str input (TypeError) and text with a "
            "NUL byte, invalid Unicode or more than MAX_TEXT_BYTES of UTF-8 (InvalidTextError)."
        ),
        review=ReviewText(
            summary="New module textstats.validate with validate_text(), MAX_TEXT_BYTES and InvalidTextError.",
            risks=("the 1 MB limit counts UTF-8 bytes, so 1 MB of accented text holds fewer characters",),
            rollback="Revert the commit; nothing imports the module yet.",
        ),
    ),
    DemoTask(
        number=2,
        title="Tokenizer",
        description="Split text into words and sentences with the standard library's `re`.",
        ownership="tokenize",
        tier=None,
        depends_on=(),
        create=("src/textstats/tokenize.py",),
        modify=(),
        tests=("tests/test_tokenize.py",),
        criteria=(
            Criterion(
                "`words(text)` returns the words without punctuation; apostrophes stay inside words",
                "src/textstats/tokenize.py",
                ("return _WORD.findall(text)",),
            ),
            Criterion(
                '`sentences(text)` splits after ".", "!" or "?"',
                "src/textstats/tokenize.py",
                ("return [part.strip()",),
            ),
            Criterion(
                "Empty text gives empty lists, not an error",
                "tests/test_tokenize.py",
                ("def test_empty_text_gives_empty_lists",),
            ),
        ),
        files={"src/textstats/tokenize.py": src.TOKENIZE, "tests/test_tokenize.py": src.TEST_TOKENIZE},
        summary="Added textstats.tokenize with words() and sentences(), regex-based, standard library only.",
        review=ReviewText(
            summary="New module textstats.tokenize: words() keeps apostrophes, sentences() splits on . ! ?",
            risks=('abbreviations such as "e.g." end a sentence early; good enough for readability scores',),
            rollback="Revert the commit; no other module uses it yet.",
        ),
    ),
    DemoTask(
        number=3,
        title="Word, sentence and syllable counts",
        description="Count words, sentences and syllables of a text on top of the tokenizer.",
        ownership="counts",
        tier=None,
        depends_on=(2,),
        create=("src/textstats/counts.py",),
        modify=(),
        tests=("tests/test_counts.py",),
        criteria=(
            Criterion(
                "`count(text)` returns a frozen `Counts(words, sentences, syllables)`",
                "src/textstats/counts.py",
                ("@dataclass(frozen=True)",),
            ),
            Criterion(
                "Empty text gives all zeros, not an error",
                "tests/test_counts.py",
                ("def test_empty_text_gives_all_zeros",),
            ),
            Criterion(
                'Syllables are vowel groups without a silent final "e": "readability" has 5, "make" has 1',
                "src/textstats/counts.py",
                ("groups -= 1", "groups = len(_VOWEL_GROUP"),
            ),
        ),
        files={"src/textstats/counts.py": src.COUNTS, "tests/test_counts.py": src.TEST_COUNTS},
        first_attempt={"src/textstats/counts.py": src.COUNTS_FIRST_ATTEMPT},
        first_attempt_tests=("tests/test_tokenize.py",),
        first_attempt_summary=(
            "Added textstats.counts: count() returns a frozen Counts(words, sentences, syllables); "
            "syllables() counts vowel groups. Ran the tests: all pass."
        ),
        fix_summary=(
            "pm-agent's test run showed test_silent_final_e_is_not_a_syllable failing: syllables('make') "
            "gave 2. syllables() now drops a silent final 'e' (but keeps '-le', as in 'table'); the whole "
            "suite passes."
        ),
        summary=(
            "Added textstats.counts: count() returns a frozen Counts(words, sentences, syllables); "
            "syllables() counts vowel groups and drops a silent final 'e'."
        ),
        review=ReviewText(
            summary="New module textstats.counts: Counts dataclass, count() and the syllables() heuristic.",
            risks=(
                "the syllable heuristic is approximate for irregular words (e.g. 'queue')",
                "tests/test_counts.py misc: the test assigns to a frozen Counts on purpose, so mypy must not check it",
            ),
            rollback="Revert the commit; readability and the API build on it later, nothing yet.",
        ),
    ),
    DemoTask(
        number=4,
        title="Readability scores",
        description="Flesch reading ease and Flesch–Kincaid grade level computed from `Counts`.",
        ownership="readability",
        tier=None,
        depends_on=(3,),
        create=("src/textstats/readability.py",),
        modify=(),
        tests=("tests/test_readability.py",),
        criteria=(
            Criterion(
                "`flesch_reading_ease(counts)` and `flesch_kincaid_grade(counts)` match the published formulas",
                "src/textstats/readability.py",
                ("return 206.835",),
            ),
            Criterion(
                "Text without sentences gives `None`, not a division error",
                "src/textstats/readability.py",
                ("if counts.sentences == 0 or counts.words == 0:",),
            ),
        ),
        files={
            "src/textstats/readability.py": src.READABILITY,
            "tests/test_readability.py": src.TEST_READABILITY,
        },
        summary="Added textstats.readability: Flesch reading ease and Flesch-Kincaid grade, None without sentences.",
        review=ReviewText(
            summary="New module textstats.readability with the two published Flesch formulas.",
            risks=(),
            rollback="Revert the commit; nothing depends on it yet.",
        ),
    ),
    DemoTask(
        number=5,
        title="Public API entry point",
        description=(
            "`textstats.analyze(text) -> Report` is the one function users import: changing it later is a "
            "breaking change, so it gets the full review."
        ),
        ownership="api",
        tier="critical",
        depends_on=(1, 4),
        create=("src/textstats/report.py",),
        modify=("src/textstats/__init__.py",),
        tests=("tests/test_api.py",),
        criteria=(
            Criterion(
                "`from textstats import analyze, Report` works and `__all__` lists exactly these names",
                "src/textstats/__init__.py",
                ('__all__ = ["Report", "analyze"]',),
            ),
            Criterion(
                "`Report` holds the counts and both readability scores",
                "src/textstats/report.py",
                ("class Report:",),
            ),
            Criterion(
                "`analyze()` validates its input with `validate_text` before counting",
                "src/textstats/report.py",
                ("counts = count(validate_text(text))",),
            ),
        ),
        files={
            "src/textstats/report.py": src.REPORT,
            "src/textstats/__init__.py": src.INIT_API,
            "tests/test_api.py": src.TEST_API,
        },
        summary=(
            "Added the public API: textstats.analyze(text) validates the text and returns a frozen Report "
            "(counts, reading_ease, grade_level); textstats.__all__ is exactly ['Report', 'analyze']."
        ),
        review=ReviewText(
            summary="New textstats.report (Report, analyze); textstats/__init__.py re-exports them.",
            risks=("analyze() and Report are now public API: renaming a field later is a breaking change",),
            rollback="Revert the commit; textstats/__init__.py returns to exporting only __version__.",
        ),
    ),
    DemoTask(
        number=6,
        title="Command-line interface",
        description=(
            "A `textstats FILE` command that prints the report. Whether it prints JSON or a plain table "
            "by default is a product decision the plan leaves open."
        ),
        ownership="cli",
        tier=None,
        depends_on=(5,),
        create=("src/textstats/cli.py",),
        modify=("pyproject.toml",),
        tests=("tests/test_cli.py",),
        criteria=(
            Criterion(
                "`textstats FILE` prints the word, sentence and syllable counts and both readability scores",
                "src/textstats/cli.py",
                ('print(render_json(report) if args.format == "json" else render_table(report))',),
            ),
            Criterion(
                "The default output format is the one the user chose, with a flag for the other format",
                "src/textstats/cli.py",
                ("DEFAULT_FORMAT = ",),
            ),
            Criterion(
                "A missing or unreadable file exits with status 2 and a one-line error on stderr",
                "src/textstats/cli.py",
                ("return 2",),
            ),
            Criterion(
                "`textstats` is installed as a console script",
                "pyproject.toml",
                ('textstats = "textstats.cli:main"',),
            ),
        ),
        variant=_cli_files,
        question=Question(
            question="Should `textstats FILE` print JSON or a plain aligned table by default?",
            context=(
                "The plan leaves the default output format open. A plain table reads best in a terminal; "
                "JSON suits scripts and pipelines. Either way the other format will be one flag away "
                "(--json or --table). I would pick the plain table."
            ),
        ),
        summary=(
            "Added the textstats command (src/textstats/cli.py, console script in pyproject.toml) with the "
            "default output format the user chose and a flag for the other; unreadable files exit 2."
        ),
        review=ReviewText(
            summary="New textstats.cli with main(), render_table() and render_json(); console script added.",
            risks=("the default output format is user-visible: scripts parsing it depend on it",),
            rollback="Revert the commit; pyproject.toml loses the [project.scripts] table again.",
        ),
    ),
    DemoTask(
        number=7,
        title="Usage documentation",
        description="Document the library and the command for users.",
        ownership="docs",
        tier="low",
        depends_on=(),
        create=("docs/usage.md",),
        modify=("README.md",),
        tests=(),
        criteria=(
            Criterion(
                "README.md has a Usage section with a library example and a command-line example",
                "README.md",
                ("## Usage",),
            ),
            Criterion(
                "docs/usage.md describes `analyze()`, the `Report` fields and the input limits",
                "docs/usage.md",
                ("## Limits",),
            ),
        ),
        files={"docs/usage.md": src.USAGE_DOC, "README.md": src.README_USAGE},
        summary="Wrote docs/usage.md (API, report fields, command, limits) and a Usage section in README.md.",
        review=ReviewText(
            summary="Documentation only: docs/usage.md and the README's Usage section.",
            risks=("the docs describe the planned API; they must follow if it changes",),
            rollback="Revert the commit.",
        ),
    ),
    DemoTask(
        number=8,
        title="Editor configuration",
        description="One `.editorconfig` so every editor uses the project's whitespace conventions.",
        ownership="config",
        tier="low",
        depends_on=(),
        create=(".editorconfig",),
        modify=(),
        tests=(),
        criteria=(
            Criterion(
                "`.editorconfig` sets UTF-8, LF line endings and a final newline for every file",
                ".editorconfig",
                ("end_of_line = lf",),
            ),
            Criterion("Python files are indented with 4 spaces", ".editorconfig", ("indent_size = 4",)),
        ),
        files={".editorconfig": src.EDITORCONFIG},
        summary="Added .editorconfig: UTF-8, LF, final newline, 4-space Python, 2-space markdown/toml/yaml.",
        review=ReviewText(
            summary="Configuration only: a new .editorconfig.",
            risks=(),
            rollback="Delete .editorconfig (revert the commit).",
        ),
    ),
    DemoTask(
        number=9,
        title="Changelog",
        description="Start a changelog for the 0.1.0 release.",
        ownership="changelog",
        tier="low",
        depends_on=(),
        create=("CHANGELOG.md",),
        modify=(),
        tests=(),
        criteria=(
            Criterion(
                "CHANGELOG.md follows the Keep a Changelog layout with an Unreleased section",
                "CHANGELOG.md",
                ("## [Unreleased]",),
            ),
            Criterion(
                "Every 0.1.0 feature of the plan is listed under Added",
                "CHANGELOG.md",
                ("### Added",),
            ),
        ),
        files={"CHANGELOG.md": src.CHANGELOG},
        summary="Added CHANGELOG.md in the Keep a Changelog format with the 0.1.0 features under Unreleased.",
        review=ReviewText(
            summary="Documentation only: a new CHANGELOG.md.",
            risks=(),
            rollback="Revert the commit.",
        ),
    ),
)

DEMO_ANSWERS: Final[dict[str, str]] = {
    "task-6": "A plain aligned table by default, for people at a terminal; add a --json flag for scripts.",
}
"""The scripted human's answers to the needs-user-input questions, by task ref."""


def demo_task(ref: str) -> DemoTask | None:
    """The demo task for `task-3`, `3` or `Task 3`; None when the plan has no such task."""
    match = re.search(r"(\d+)\s*$", ref.strip())
    if match is None:
        return None
    number = int(match.group(1))
    return next((task for task in DEMO_TASKS if task.number == number), None)
