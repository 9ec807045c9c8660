"""Seed 001's tier rules as data: keyword and path patterns, the area they signal, the flag they set."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pm_agent.plan.models import Tier


@dataclass(frozen=True)
class Rule:
    """A pattern that signals a tier; `flag` names the SecurityFlags field it sets, if any."""

    tier: Tier
    area: str
    pattern: re.Pattern[str]
    flag: str | None = None


def _words(spec: str) -> re.Pattern[str]:
    """Whole words only: `auth` hits `auth` and `auth-service`, never `author` or `authority`.

    `spec` lists regex alternatives separated by whitespace; `_` inside one stands for a space.
    """
    alternatives = "|".join(word.replace("_", " ") for word in spec.split())
    return re.compile(rf"(?<![A-Za-z0-9])(?:{alternatives})(?![A-Za-z0-9])", re.IGNORECASE)


def _path(spec: str) -> re.Pattern[str]:
    return re.compile("|".join(spec.split()), re.IGNORECASE)


C, L = Tier.CRITICAL, Tier.LOW
AUTH, SCHEMA, BILLING, SECRETS = "touches_auth", "touches_schema", "touches_billing", "touches_secrets"

# Keywords in a task's title, ownership, description, acceptance criteria and file path words.
TEXT_RULES: tuple[Rule, ...] = (
    Rule(
        C,
        "auth",
        _words("""
        auth[nz]? authenticat(?:e|es|ed|ing|ion|or) authori[sz](?:e|es|ed|ing|ation|ations) oauth2?
        log[-_]?ins? log[-_]?outs? sign[-_]?(?:in|up)s? passwords? passwd jwts? sso saml mfa 2fa rbac
        permissions? access[-_]tokens?
    """),
        AUTH,
    ),
    Rule(
        C,
        "billing",
        _words("""
        billing bills? invoic(?:e|es|ed|ing) payments? payouts? pricing subscriptions? stripe refunds?
        checkout finops costs? spend(?:ing)?
    """),
        BILLING,
    ),
    Rule(
        C,
        "schema",
        _words("""
        migrations? migrat(?:e|es|ed|ing) alembic ddl alter_table
        (?<!json_)(?<!yaml_)(?<!xml_)(?<!graphql_)(?<!openapi_)(?<!pydantic_)(?<!config_)schemas?
    """),
        SCHEMA,
    ),
    Rule(
        C,
        "secrets",
        _words(r"secrets? api[-_]keys? private[-_]keys? credentials? \.env dotenv vault"),
        SECRETS,
    ),
    Rule(C, "data integrity", _words("data_integrity integrity data_loss corruption backups? restores?")),
    Rule(
        C,
        "infra",
        _words("""
        infra infrastructure docker(?:file)? docker[-_]compose dockeri[sz](?:e|es|ed|ing)
        containeri[sz](?:e|es|ed|ing|ation) kubernetes k8s helm terraform ansible
        deploy(?:s|ed|ing|ments?)? nginx ci/cd
    """),
    ),
    Rule(
        C,
        "security",
        _words("""
        security vulnerabilit(?:y|ies) cves? xss csrf sql_injection injection sanitiz(?:e|es|ed|ing|ation)
        encrypt(?:s|ed|ion)? decrypt(?:s|ed|ion)? tls cors
    """),
    ),
    Rule(
        C,
        "public API",
        _words("""
        public_api public_interface breaking_changes? api_contract openapi api_version(?:s|ing)?
    """),
    ),
)

# Low-risk keywords; they count in the title and ownership only (prose mentions a README all the time).
LOW_RULES: tuple[Rule, ...] = (
    Rule(
        L,
        "UI copy",
        _words("ui_copy copy_?text microcopy copywriting wording typos? translations? i18n l10n"),
    ),
    Rule(L, "refactor", _words(r"refactor\w* renam(?:e|es|ed|ing) clean_?up tidy dead_code simplif\w*")),
    Rule(
        L,
        "docs",
        _words("docs? documentation readme changelog docstrings? user_guide tutorials? usage_guide"),
    ),
    Rule(L, "config", _words("config configs configuration lint(?:ing|er)? pre-commit gitignore editorconfig")),
)

# Patterns on expected file paths (the path as written, POSIX separators).
PATH_RULES: tuple[Rule, ...] = (
    Rule(C, "schema", _path(r"(^|/)(migrations?|alembic)/ \.sql$ (^|/)schema\.(sql|prisma|rb)$"), SCHEMA),
    Rule(C, "secrets", _path(r"(^|/)\.env(\.[^/]*)?$ (^|/)secrets?(/|\.[^/]*$)"), SECRETS),
    Rule(
        C,
        "infra",
        _path(r"""
        (^|/)dockerfile[^/]*$ (^|/)(docker-)?compose[^/]*\.ya?ml$ (^|/)\.dockerignore$ \.tf$
        (^|/)(infra|terraform|k8s|kubernetes|helm|deploy|deployment)/
    """),
    ),
)

# A file is "low risk" (docs or config) when it matches one of these.
LOW_PATHS: tuple[Rule, ...] = (
    Rule(L, "docs", _path(r"\.(md|rst|adoc|txt)$ (^|/)docs?/ (^|/)(license|changelog|readme)[^/]*$")),
    Rule(
        L,
        "config",
        _path(r"""
        (^|/)(pyproject\.toml|setup\.cfg|tox\.ini|mypy\.ini|ruff\.toml|\.flake8|makefile|\.editorconfig)$
        (^|/)\.gitignore$ (^|/)\.pre-commit-config\.ya?ml$ (^|/)\.github/ \.(toml|ini|cfg)$
    """),
    ),
)


def path_words(path: str) -> str:
    """`src/auth/LoginForm.tsx` -> `src auth Login Form tsx`: path words for TEXT_RULES."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", path)
    return re.sub(r"[/_.\-\\]+", " ", spaced)
