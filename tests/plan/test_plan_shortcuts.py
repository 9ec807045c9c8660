"""The shortcuts of classification and path reading give what the long way gives.

The quick look before the tier rules never rules out a text a rule hits; the path helpers equal PurePosixPath.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from hypothesis import given, settings
from hypothesis import strategies as st

from pm_agent.plan.fields import parent_dir, posix_path
from pm_agent.plan.tier_rules import LOW_PATHS, LOW_RULES, PATH_RULES, TEXT_RULES
from pm_agent.plan.tiers import (
    _literal_prefix,
    _low_path_area,
    _needles,
    _path_hit,
    _path_signals,
    candidate_rules,
)

WORDS = st.sampled_from(
    [
        "Add", "the", "feeds", "model", "validation", "4", "-", "_", ".", "/", "(", ")", ":", " ", "  ",
        "OAuth2", "oauth", "Login", "log-ins", "logouts", "sign_up", "Sign-In", "authorization", "AUTHN",
        "passwords", "JWTs", "2FA", "ACLs", "access-tokens", "bills", "Invoicing", "payouts", "Stripe",
        "spending", "migrations", "migrated", "ALTER TABLE", "json_schema", "schemas", "yaml_schema",
        "secrets", "API-keys", "private_keys", ".env", "dotenv", "PEM", "data integrity", "backups",
        "Dockerfile", "docker-compose", "containerization", "k8s", "deployments", "ci/cd", "CVEs",
        "sql injection", "sanitizing", "encryption", "TLS", "public API", "breaking changes", "openapi",
        "api_versioning", "author", "authority", "logo", "signal", "design", "costume", "accessory",
        "helmet", "cors", "xss", "vaults", "kms", "terraform", "env", "README", "docs", "Refactoring",
        "renamed", "clean-up", "cleanup", "typos", "i18n", "linting", "pre-commit", "docstrings", "config",
    ]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(WORDS, max_size=12))
def test_a_rule_left_out_hits_no_text(words: list[str]) -> None:
    texts = ["".join(words[:6]), "".join(words[6:])]
    hits = [rule for rule in TEXT_RULES if any(rule.pattern.search(text) for text in texts)]
    kept = candidate_rules(texts)
    assert all(rule in kept for rule in hits), (texts, [rule.area for rule in hits])
    low_hits = [rule for rule in LOW_RULES if any(rule.pattern.search(text) for text in texts)]
    low_kept = candidate_rules(texts, LOW_RULES)
    assert all(rule in low_kept for rule in low_hits), (texts, [rule.area for rule in low_hits])


def test_most_feature_texts_are_ruled_out() -> None:
    assert candidate_rules(["Feeds validation 4 handles case 2", "src app feeds validation 4 py"]) == []
    assert [rule.area for rule in candidate_rules(["Add OAuth login"])] == ["auth"]
    assert candidate_rules(["Ａuth in full width letters"]) == list(TEXT_RULES)  # not ASCII: every rule


def test_literal_prefixes() -> None:
    assert _literal_prefix("auth[nz]?") == "auth"
    assert _literal_prefix("bills?") == "bill"
    assert _literal_prefix(r"\.env") == ".env"
    assert _literal_prefix("(?<!json_)(?<!yaml_)schemas?") == "schema"
    assert _literal_prefix("(?:in|up)") == ""


def test_needles_of_a_rule() -> None:
    needles = _needles(TEXT_RULES[0])
    assert needles is not None
    assert "auth" in needles
    assert "authenticat" not in needles  # found through "auth"


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(["a", "b.py", ".", "..", "", "~", " x", ".env", "/"]), min_size=1, max_size=6))
def test_posix_path_helpers_are_pure_posix_path(parts: list[str]) -> None:
    path = "/".join(parts)
    assert posix_path(path) == str(PurePosixPath(path))
    assert parent_dir(path) == str(PurePosixPath(path).parent)


PATH_PARTS = st.sampled_from(
    [
        "src", "app", "/", "/", ".", "-", "_", "Migrations", "migration", "alembic", "schema", "Schema.SQL", "sql",
        ".env", ".ENV.local", ".envrc", "secret", "Secrets", "key", "PEM", "Dockerfile", "docker-compose",
        "compose", ".yml", ".yaml", "terraform", "k8s", "Helm", "deploy", ".github", "workflows", ".circleci",
        "openapi", "Swagger", ".json", ".proto", ".graphql", "README", "docs", "CHANGELOG", "pyproject.toml",
        "setup.cfg", ".gitignore", "Makefile", ".pre-commit-config.yaml", "chart.yaml", "Procfile", "x.py", "ö",
    ]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(PATH_PARTS, min_size=1, max_size=8))
def test_path_rules_find_what_their_patterns_find(parts: list[str]) -> None:
    path = "".join(parts)
    lowered = path.lower() if path.isascii() else None
    for rule in (*PATH_RULES, *LOW_PATHS):
        assert _path_hit(rule, path, lowered) == (rule.pattern.search(path) is not None), (path, rule.area)


@settings(max_examples=500, deadline=None)
@given(st.lists(PATH_PARTS, min_size=1, max_size=8))
def test_the_rule_sets_filters_leave_out_no_path_a_rule_hits(parts: list[str]) -> None:
    # One search of all the CRITICAL (or LOW) path rules' words rules a path out before the rules are tried.
    path = "".join(parts)
    assert [s.rule for s in _path_signals(path)] == [r for r in PATH_RULES if r.pattern.search(path)], path
    assert _low_path_area(path) == next((r.area for r in LOW_PATHS if r.pattern.search(path)), None), path
