"""Tier rules where a one-token change would go unnoticed: camelCase path words, letter case, word boundaries.

The rule tables are compiled once at import, so the builders (`words_pattern`, `path_pattern`) are also tested on their
own: a changed builder would otherwise only show in a fresh process. Written against mutmut's survivors
(make mutation).
"""

from __future__ import annotations

import pytest

from pm_agent.plan import ExpectedFiles, Task, Tier, classify_tier
from pm_agent.risk_words import path_pattern, path_words, words_pattern


def _classify(title: str, *files: str) -> Task:
    return classify_tier(Task(id="1", title=title, expected_files=ExpectedFiles(create=list(files))))


# ---------------------------------------------------------------- camelCase and separators in paths


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("src/auth/LoginForm.tsx", "src auth Login Form tsx"),
        ("web/AuthService.ts", "web Auth Service ts"),
        ("api/v2Handler.go", "api v2 Handler go"),
        ("lib/HTTPServer.rb", "lib HTTPServer rb"),  # no split inside a run of capitals
        ("a\\b-c__d.e", "a b c d e"),
        ("lowercase", "lowercase"),
    ],
)
def test_path_words(path: str, words: str) -> None:
    assert path_words(path) == words


def test_a_camel_case_file_name_carries_its_keyword() -> None:
    task = _classify("Session screen", "web/AuthService.ts")
    assert task.tier is Tier.CRITICAL
    assert task.security_flags.touches_auth
    assert task.tier_reason == "CRITICAL: security flag touches_auth (keyword 'auth' in path web/AuthService.ts)"


def test_a_keyword_inside_a_camel_case_word_is_not_split_out() -> None:
    # "Authored" is one word even in camelCase: only a capital starts a new word
    assert _classify("Byline", "web/AuthoredBy.ts").tier is Tier.NORMAL


# ---------------------------------------------------------------- letter case


@pytest.mark.parametrize(
    ("files", "reason"),
    [
        (("main.TF",), "infra/docker file main.TF (infra/docker)"),
        (("data/Seed.SQL",), "security flag touches_schema (schema/migrations file data/Seed.SQL)"),
        (("Dockerfile",), "keyword 'dockerfile' in path Dockerfile (infra/docker)"),
        (("build/DOCKERFILE.prod",), "keyword 'dockerfile' in path build/DOCKERFILE.prod (infra/docker)"),
    ],
)
def test_critical_paths_in_any_letter_case(files: tuple[str, ...], reason: str) -> None:
    task = _classify("Stack", *files)
    assert task.tier is Tier.CRITICAL
    assert task.tier_reason == f"CRITICAL: {reason}"


def test_low_risk_paths_in_any_letter_case() -> None:
    task = _classify("Polish", "Makefile", "LICENSE", "NOTES.TXT")
    assert task.tier is Tier.LOW
    assert task.tier_reason == "LOW: every expected file is config and docs (Makefile, LICENSE, NOTES.TXT)"


def test_keywords_in_any_letter_case() -> None:
    assert _classify("Rotate the API KEY").tier_reason == (
        "CRITICAL: security flag touches_secrets (keyword 'api key' in title)"
    )
    assert _classify("SSO for admins").tier is Tier.CRITICAL


def test_path_builder_ignores_case_and_joins_alternatives() -> None:
    pattern = path_pattern(r"(^|/)dockerfile[^/]*$ \.tf$")
    assert pattern.search("ops/Dockerfile")
    assert pattern.search("main.TF")
    assert not pattern.search("dockerfile/readme.md")


# ---------------------------------------------------------------- word boundaries


@pytest.mark.parametrize(
    "title",
    ["Espresso machine", "Lessons page", "Classification", "Capital costume", "Tsso", "ssox", "sso2"],
)
def test_a_keyword_inside_a_longer_word_is_not_a_hit(title: str) -> None:
    assert _classify(title).tier is Tier.NORMAL


@pytest.mark.parametrize("title", ["SSO", "Add sso", "sso-login page", "sso_admin", "(sso)", "okta/sso"])
def test_a_keyword_between_separators_is_a_hit(title: str) -> None:
    task = _classify(title)
    assert task.tier is Tier.CRITICAL
    assert task.security_flags.touches_auth


def test_words_builder_matches_whole_words_in_any_case() -> None:
    pattern = words_pattern("sso api_keys? log[-_]?ins?")
    assert pattern.search("Use SSO here")
    assert pattern.search("rotate api keys")
    assert pattern.search("log-in")
    assert not pattern.search("espresso")
    assert not pattern.search("ssox")
    assert not pattern.search("2sso")
    assert not pattern.search("api_key")  # "_" in a spec stands for a space, not an underscore
    assert pattern.findall("x sso y, SSO.") == ["sso", "SSO"]
