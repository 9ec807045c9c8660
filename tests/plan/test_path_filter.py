"""The path patterns' word filter (plan/path_filter.py): it rules out only paths the pattern cannot hit."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pm_agent.plan import tiers
from pm_agent.plan.path_filter import pattern_words, required_words, split_alternatives
from pm_agent.plan.tier_rules import LOW_PATHS, PATH_RULES


@pytest.mark.parametrize(
    ("source", "words"),
    [
        (r"(^|/)(migrations?|alembic)/", ("alembic", "migration")),
        (r"\.sql$", (".sql",)),
        (r"(^|/)(docker-)?compose[^/]*\.ya?ml$", ("compose",)),
        (r"\.tf(vars)?$", (".tf",)),
        (r"(?:ab|cd)e?", ("ab", "cd")),
        (r"\bSECRET_KEY\b", ("secret_key",)),
        (r"x{2,}yz", ("yz",)),
        (r"a+b", ("a",)),  # the run ends at a repeat: `aab` holds `a` but not `ab`
        (r"(?=foo)bar", ("bar",)),
    ],
)
def test_the_words_every_hit_holds(source: str, words: tuple[str, ...]) -> None:
    assert pattern_words(source) == words


@pytest.mark.parametrize("source", [r"(^|/)x?", r"[abc]+", r".*|x", r"(a|b?)c?", r"\d+"])
def test_a_pattern_with_an_alternative_of_no_sure_word_is_not_filtered(source: str) -> None:
    assert pattern_words(source) is None


def test_alternatives_split_at_the_top_level_only() -> None:
    assert split_alternatives(r"a|b(c|d)|[|]e|\|f") == ["a", "b(c|d)", "[|]e", r"\|f"]
    assert required_words("(c|d)") == frozenset({"c", "d"})


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
