"""The words a regex's matches must hold (regex_words.py), and the path rules' filter built on them
(plan/tiers.py): a filter may only rule out paths the pattern cannot hit."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pm_agent.plan import tiers
from pm_agent.plan.tier_rules import LOW_PATHS, PATH_RULES
from pm_agent.regex_words import required_words, words_pattern

MIGRATIONS = ("migration", "migrations", "alembic")


@pytest.mark.parametrize(
    ("source", "words"),
    [
        (r"(^|/)(migrations?|alembic)/", {f"{lead}{word}/" for lead in ("", "/") for word in MIGRATIONS}),
        (r"\.sql$", {".sql"}),
        (r"\.tf(vars)?$", {".tf", ".tfvars"}),
        (r"(?:ab|cd)e?", {"ab", "abe", "cd", "cde"}),
        (r"\bSECRET_KEY\b", {"SECRET_KEY"}),  # as written: the caller lowers them for a case-blind search
        (r"x{2,}yz", {"yz"}),
        (r"a+b", {"a"}),  # `aab` holds `a` and `b` but not `ab`; of two one-letter sets the first is kept
        (r"(?=foo)bar", {"bar"}),
        (r"[abc]+", {"a", "b", "c"}),
    ],
)  # fmt: skip
def test_the_words_every_match_holds(source: str, words: set[str]) -> None:
    assert required_words(source) == words
    pattern = re.compile(source)
    for sample in ("aab", "xxyz", "cde", "/alembic/x", "db.sql", "main.tfvars", "foobar", "SECRET_KEY=1", "bb"):
        if pattern.search(sample):
            assert any(word in sample for word in words), (source, sample)


@pytest.mark.parametrize("source", [r"(^|/)x?", r".*|x", r"(a|b?)c?", r"\d+"])
def test_a_pattern_with_a_match_of_no_sure_word_is_not_filtered(source: str) -> None:
    assert required_words(source) is None


def test_the_words_pattern_finds_where_any_word_starts() -> None:
    pattern = re.compile(words_pattern({"key", "keyword", "pass", "a.b"}))
    assert [bool(pattern.search(t)) for t in ("my keyword", "passwd", "a.b", "axb", "ke y")] == [
        True, True, True, False, False,
    ]  # fmt: skip


def test_every_path_rule_is_filtered() -> None:
    # Were the filter given up for a rule, nothing would fail but the time: say so here.
    for rule in (*PATH_RULES, *LOW_PATHS):
        assert tiers._PATH_FILTERS[id(rule.pattern)] is not None, rule.area


PIECES = st.sampled_from(
    [
        "src", "app", "migrations", "Migration", "alembic", "schema.sql", "schema.yml", "x.sql", ".env",
        ".env.local", ".envrc", "key.pem", "secrets", "secret.json", "Dockerfile", "docker-compose.yml",
        "compose.yaml", ".dockerignore", "main.tf", "x.tfvars", "infra", "k8s", "helm", "deploy", "deployment",
        ".gitlab-ci.yml", "Jenkinsfile", "Chart.yaml", "Procfile", ".github", "workflows", ".circleci",
        "openapi.json", "swagger.yaml", "api.proto", "s.graphqls", "README.md", "docs", "doc", "CHANGELOG",
        "LICENSE.txt", "notes.rst", "a.adoc", "pyproject.toml", "setup.cfg", "tox.ini", "mypy.ini",
        ".flake8", "Makefile", ".editorconfig", ".gitignore", ".pre-commit-config.yaml", "x.ini", "model.py",
    ]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(PIECES, min_size=1, max_size=5), st.booleans())
def test_a_filtered_path_rule_hits_what_its_pattern_hits(parts: list[str], upper: bool) -> None:
    path = "/".join(parts).upper() if upper else "/".join(parts)
    lowered = path.lower()
    for rule in (*PATH_RULES, *LOW_PATHS):
        assert tiers._path_hit(rule, path, lowered) == (rule.pattern.search(path) is not None), (rule.area, path)
