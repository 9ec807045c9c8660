"""Tier rules (seed 001), table-driven, with the false positives word matching must avoid."""

from __future__ import annotations

import pytest

from pm_agent.plan import ExpectedFiles, IOContract, SecurityFlags, Task, Tier, classify_tier

FEATURE = "no critical or low-risk signal (feature work)"
AUTH, BILLING = "security flag touches_auth ", "security flag touches_billing "
SCHEMA, SECRETS = "security flag touches_schema ", "security flag touches_secrets "


def make(
    title: str,
    *,
    files: tuple[str, ...] = (),
    description: str = "",
    ownership: str = "",
    criteria: tuple[str, ...] = (),
    explicit: Tier | None = None,
) -> Task:
    return Task(
        id="1",
        title=title,
        description=description,
        ownership=ownership,
        acceptance_criteria=list(criteria),
        expected_files=ExpectedFiles(create=list(files)),
        explicit_tier=explicit,
        tier=explicit or Tier.NORMAL,
    )


@pytest.mark.parametrize(
    ("title", "files", "tier", "reason"),
    [
        # auth
        ("Add user authentication", (), "critical", AUTH + "(keyword 'authentication' in title)"),
        ("Login form", (), "critical", AUTH + "(keyword 'login' in title)"),
        ("Hash passwords with argon2", (), "critical", AUTH + "(keyword 'passwords' in title)"),
        ("OAuth callback", (), "critical", AUTH + "(keyword 'oauth' in title)"),
        (
            "Session helpers",
            ("src/auth/session.py",),
            "critical",
            AUTH + "(keyword 'auth' in path src/auth/session.py)",
        ),
        # costs / billing
        ("Invoice PDF", (), "critical", BILLING + "(keyword 'invoice' in title)"),
        ("Track model costs per run", (), "critical", BILLING + "(keyword 'costs' in title)"),
        (
            "Ledger",
            ("src/billing/ledger.py",),
            "critical",
            BILLING + "(keyword 'billing' in path src/billing/ledger.py)",
        ),
        # schema / migrations
        ("Migrate users to UUID keys", (), "critical", SCHEMA + "(keyword 'migrate' in title)"),
        ("Add migration for orders", (), "critical", SCHEMA + "(keyword 'migration' in title)"),
        (
            "Orders table",
            ("db/migrations/0002_orders.py",),
            "critical",
            SCHEMA + "(keyword 'migrations' in path db/migrations/0002_orders.py)",
        ),
        ("Seed data", ("sql/seed.sql",), "critical", SCHEMA + "(schema/migrations file sql/seed.sql)"),
        # secrets
        ("Load settings", (".env.example",), "critical", SECRETS + "(secrets/env file .env.example)"),
        ("Rotate the API key", (), "critical", SECRETS + "(keyword 'api key' in title)"),
        # data integrity, infra, security, public API (no flag)
        ("Nightly backups", (), "critical", "keyword 'backups' in title (data integrity)"),
        ("Dockerize the worker", (), "critical", "keyword 'dockerize' in title (infra/docker)"),
        ("Image", ("Dockerfile",), "critical", "keyword 'dockerfile' in path Dockerfile (infra/docker)"),
        (
            "Cluster",
            ("deploy/k8s/app.yaml",),
            "critical",
            "keyword 'deploy' in path deploy/k8s/app.yaml (infra/docker)",
        ),
        ("Stack", ("infra/main.tf",), "critical", "keyword 'infra' in path infra/main.tf (infra/docker)"),
        ("Escape HTML to stop XSS", (), "critical", "keyword 'xss' in title (security)"),
        ("Freeze the public API", (), "critical", "keyword 'public api' in title (public API)"),
        # LOW
        ("Fix typos on the landing page", (), "low", "keyword 'typos' in title (UI copy)"),
        ("Refactor the tokenizer", ("src/tokenize.py",), "low", "keyword 'refactor' in title (refactor)"),
        ("Write the README", ("README.md",), "low", "keyword 'readme' in title (docs)"),
        ("Ruff config", ("ruff.toml",), "low", "keyword 'config' in title (config)"),
        ("Usage guide", ("docs/usage.md", "pyproject.toml"), "low", "keyword 'usage guide' in title (docs)"),
        (
            "Polish",
            ("docs/usage.md", "setup.cfg"),
            "low",
            "every expected file is config and docs (docs/usage.md, setup.cfg)",
        ),
        # NORMAL, including words that merely contain a keyword
        ("Word counts", ("src/textstats/counts.py",), "normal", FEATURE),
        ("Track the author of each recipe", (), "normal", FEATURE),
        ("Show the authority of a source", (), "normal", FEATURE),
        ("Authors page", ("src/site/authors.py",), "normal", FEATURE),
        ("Tokenizer", ("src/textstats/tokenize.py",), "normal", FEATURE),
        ("Validate input with a JSON schema", (), "normal", FEATURE),
        ("Costume catalogue", (), "normal", FEATURE),
        ("Blogging engine", (), "normal", FEATURE),
        ("Document store adapter", ("src/store/documents.py",), "normal", FEATURE),
        ("Add a login-free guest mode", (), "critical", AUTH + "(keyword 'login' in title)"),
    ],
)
def test_rules(title: str, files: tuple[str, ...], tier: str, reason: str) -> None:
    result = classify_tier(make(title, files=files))
    assert result.tier is Tier(tier)
    assert result.tier_reason == f"{tier.upper()}: {reason}"
    assert result.decision_log[-1] == f"tier {tier.upper()}: {reason}"


@pytest.mark.parametrize(
    ("kwargs", "flag"),
    [
        ({"description": "Users sign in with a magic link."}, "touches_auth"),
        ({"ownership": "payments"}, "touches_billing"),
        ({"criteria": ("The schema change is reversible",)}, "touches_schema"),
        ({"description": "Read credentials from the vault."}, "touches_secrets"),
    ],
)
def test_flags_from_description_ownership_and_criteria(kwargs: dict[str, object], flag: str) -> None:
    result = classify_tier(make("Plain title", **kwargs))  # type: ignore[arg-type]
    assert result.tier is Tier.CRITICAL
    assert {k for k, v in result.security_flags.model_dump().items() if v} == {flag}


def test_low_keywords_in_description_do_not_lower_a_feature() -> None:
    result = classify_tier(make("Search endpoint", description="Also mention it in the README and docs."))
    assert result.tier is Tier.NORMAL


def test_explicit_tier_is_respected_without_flags() -> None:
    result = classify_tier(make("Dockerfile for the worker", explicit=Tier.LOW))
    assert result.tier is Tier.LOW
    assert result.tier_reason == "LOW: explicit tier in the plan"
    assert result.decision_log == [
        "explicit tier low kept although keyword 'dockerfile' in title suggests CRITICAL",
        "tier LOW: explicit tier in the plan",
    ]
    assert classify_tier(make("Readme", explicit=Tier.CRITICAL)).tier is Tier.CRITICAL


def test_security_flag_overrides_explicit_tier_and_says_so() -> None:
    result = classify_tier(make("Docs for login", explicit=Tier.LOW))
    assert result.tier is Tier.CRITICAL
    assert result.tier_reason == (
        "CRITICAL: security flag touches_auth (keyword 'login' in title) overrides the explicit tier low"
    )
    assert result.decision_log[0] == "security flag touches_auth: keyword 'login' in title"


def test_contract_flags_force_critical_even_without_keywords() -> None:
    task = make("Plain title", explicit=Tier.NORMAL).model_copy(
        update={"security_flags": SecurityFlags(touches_billing=True)}
    )
    result = classify_tier(task)
    assert result.tier is Tier.CRITICAL
    assert result.tier_reason == (
        "CRITICAL: security flag touches_billing (security flag set in the task contract) "
        "overrides the explicit tier normal"
    )


def test_breaking_change_makes_it_critical() -> None:
    task = make("Rename a function").model_copy(update={"io_contract": IOContract(breaking_change=True)})
    result = classify_tier(task)
    assert (result.tier, result.tier_reason) == (
        Tier.CRITICAL,
        "CRITICAL: public API: io_contract declares a breaking change",
    )


def test_classify_returns_a_copy() -> None:
    task = make("Login form")
    classify_tier(task)
    assert (task.tier, task.tier_reason, task.decision_log) == (Tier.NORMAL, "", [])
