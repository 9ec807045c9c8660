"""Seed 001's tier rules as data: the patterns that signal a tier, the area they name, the flag they set.

The CRITICAL areas and their words are the one vocabulary in `pm_agent.risk_words`, which the tier
review of the actual change (`pm_agent.gates.tier_review`) reads too; the LOW areas are the plan's own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pm_agent.plan.models import Tier
from pm_agent.risk_words import AREA_WORDS, PATHS, RiskArea, path_pattern, path_words, words_pattern

__all__ = ["LOW_PATHS", "LOW_RULES", "PATH_RULES", "TEXT_RULES", "Rule", "path_words"]


@dataclass(frozen=True)
class Rule:
    """A pattern that signals a tier; `flag` names the SecurityFlags field it sets, if any."""

    tier: Tier
    area: str
    pattern: re.Pattern[str]
    flag: str | None = None


C, L = Tier.CRITICAL, Tier.LOW
# The areas that set one of seed 001's security flags; the others make a task CRITICAL without a flag.
FLAGS: dict[RiskArea, str] = {
    RiskArea.AUTH: "touches_auth",
    RiskArea.SCHEMA: "touches_schema",
    RiskArea.BILLING: "touches_billing",
    RiskArea.SECRETS: "touches_secrets",
}

# Keywords in a task's title, ownership, description, acceptance criteria and file path words, English and
# Chinese (one rule each, same area and flag). An area's `changed_path_words` ("api", "env") are not among
# them: the tier review counts those in the change.
TEXT_RULES: tuple[Rule, ...] = tuple(
    Rule(C, e.area, pattern, FLAGS.get(e.area))
    for e in AREA_WORDS
    for pattern in (e.words, e.cjk_words)
    if pattern is not None
)

# Patterns on expected file paths (the path as written, POSIX separators).
PATH_RULES: tuple[Rule, ...] = tuple(Rule(C, area, pattern, FLAGS.get(area)) for area, pattern in PATHS)

# Low-risk keywords; they count in the title and ownership only (prose mentions a README all the time).
LOW_RULES: tuple[Rule, ...] = (
    Rule(
        L,
        "UI copy",
        words_pattern("ui_copy copy_?text microcopy copywriting wording typos? translations? i18n l10n"),
    ),
    Rule(L, "refactor", words_pattern(r"refactor\w* renam(?:e|es|ed|ing) clean_?up tidy dead_code simplif\w*")),
    Rule(
        L,
        "docs",
        words_pattern("docs? documentation readme changelog docstrings? user_guide tutorials? usage_guide"),
    ),
    Rule(L, "config", words_pattern("config configs configuration lint(?:ing|er)? pre-commit gitignore editorconfig")),
)

# A file is "low risk" (docs or config) when it matches one of these.
LOW_PATHS: tuple[Rule, ...] = (
    Rule(L, "docs", path_pattern(r"\.(md|rst|adoc|txt)$ (^|/)docs?/ (^|/)(license|changelog|readme)[^/]*$")),
    Rule(
        L,
        "config",
        path_pattern(r"""
        (^|/)(pyproject\.toml|setup\.cfg|tox\.ini|mypy\.ini|ruff\.toml|\.flake8|makefile|\.editorconfig)$
        (^|/)\.gitignore$ (^|/)\.pre-commit-config\.ya?ml$ (^|/)\.github/ \.(toml|ini|cfg)$
    """),
    ),
)
