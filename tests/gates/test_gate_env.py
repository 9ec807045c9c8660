"""Gate commands run without pm-agent's secrets; `environment.pass_env` lets named variables through."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from pm_agent.config import parse_config
from pm_agent.errors import ConfigError
from pm_agent.gates import run_command
from pm_agent.gates.ward import allowed_env, gate_env
from pm_agent.redaction import is_secret_env, is_secret_name

SECRETS = {
    "ANTHROPIC_API_KEY": "sk-ant-api03-gate-env-test-value",
    "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/",
    "OPENAI_API_KEY": "sk-openai-gate-env-test",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "AWS_PROFILE": "prod",
    "GITHUB_TOKEN": "ghp_gateenvtest0123456789abcdefghijklmnop",
    "GH_TOKEN": "gho_gateenvtest",
    "PM_AGENT_SESSION_TOKEN": "pm-session-token-value",
    "PM_AGENT_DB": "/tmp/state.db",
    "STRIPE_SECRET_KEY": "sk_test_gateenv",
    "MY_SERVICE_PASSWORD": "hunter2hunter2",
    "SLACK_WEBHOOK_SECRET": "whsec",
    "DATABASE_URL": "postgres://app:s3cr3t@db.internal:5432/app",
    "SSH_AUTH_SOCK": "/tmp/ssh-agent.sock",
}
KEPT = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/home/dev",
    "LANG": "C.UTF-8",
    "TERM": "xterm",
    "VIRTUAL_ENV": "/home/dev/.venv",
    "PYTHONPATH": "src",
    "GIT_AUTHOR_NAME": "Dev",
    "TOKENIZERS_PARALLELISM": "false",
    "KEYBOARD_LAYOUT": "us",
    "CACHE_URL": "redis://cache.internal:6379/0",
}
PRINT_ENV = f"{sys.executable} -c 'import json, os; print(json.dumps(dict(os.environ)))'"


def printed_env(tmp_path: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    # The whole output, not the tail: the tail cuts lines over 2,000 characters, and under `make` the
    # environment printed on one line is longer than that.
    result = run_command(PRINT_ENV, tmp_path, 20, extra, keep_output_bytes=1 << 20)
    assert result.ok, result.output_tail
    assert result.output is not None
    env: dict[str, str] = json.loads(result.output.splitlines()[-1])
    return env


def test_a_gate_command_that_prints_its_environment_sees_no_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in {**SECRETS, **KEPT}.items():
        monkeypatch.setenv(name, value)

    env = printed_env(tmp_path)

    leaked = {name for name in SECRETS if name in env}
    assert leaked == set()
    assert not any(value in json.dumps(env) for value in SECRETS.values() if len(value) > 8)
    for name, value in KEPT.items():
        assert env.get(name) == value, name


def test_pass_env_lets_a_listed_variable_through_and_only_that(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("CALC_TEST_DB_PASSWORD", "let-me-in-please")
    monkeypatch.setenv("CALC_TEST_TOKEN", "calc-token-value")

    allowed = allowed_env(["MY_SERVICE_PASSWORD", "CALC_TEST_*", "NOT_SET_ANYWHERE"])
    env = printed_env(tmp_path, allowed)

    assert allowed == {
        "MY_SERVICE_PASSWORD": "hunter2hunter2",
        "CALC_TEST_DB_PASSWORD": "let-me-in-please",
        "CALC_TEST_TOKEN": "calc-token-value",
    }
    assert env["MY_SERVICE_PASSWORD"] == "hunter2hunter2"
    assert env["CALC_TEST_DB_PASSWORD"] == "let-me-in-please"
    assert "ANTHROPIC_API_KEY" not in env
    assert "GITHUB_TOKEN" not in env


def test_gate_env_is_computed_from_the_given_environment() -> None:
    source = {**SECRETS, **KEPT}
    assert gate_env(None, source) == KEPT
    assert gate_env({"EXTRA": "1"}, {"PATH": "/bin", "API_TOKEN": "x"}) == {"PATH": "/bin", "EXTRA": "1"}


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("ANTHROPIC_AUTH_TOKEN", True),
        ("CLAUDE_CODE_OAUTH_TOKEN", True),
        ("AZURE_CLIENT_ID", True),
        ("NPM_AUTHTOKEN", True),
        ("GPG_KEY", True),
        ("APIKEY", True),
        ("DB_PASS", True),
        ("GOOGLE_APPLICATION_CREDENTIALS", True),
        ("SECRETS_DIR", True),
        ("PWD", False),
        ("OLDPWD", False),
        ("XAUTHORITY", False),
        ("PYTHONDONTWRITEBYTECODE", False),
        ("LC_ALL", False),
        ("CI", False),
    ],
)
def test_secret_names(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


def test_a_url_with_a_password_is_a_secret_whatever_its_name() -> None:
    assert is_secret_env("UPSTREAM", "https://user:pa55word@git.example.com/repo.git")
    assert not is_secret_env("UPSTREAM", "https://git.example.com/repo.git")
    assert not is_secret_env("MAILTO", "user@example.com")


def test_config_pass_env_parses_and_bad_names_name_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "pm-agent.yaml"
    config = parse_config("environment:\n  pass_env: [TEST_DB_PASSWORD, 'CALC_*']\n", path)
    assert config.environment.pass_env == ["TEST_DB_PASSWORD", "CALC_*"]
    assert parse_config("", path).environment.pass_env == []
    with pytest.raises(ConfigError) as info:
        parse_config("retry_budget: 2\nenvironment:\n  pass_env:\n    - OK_NAME\n    - 'bad name'\n", path)
    assert info.value.line == 5
    assert "environment.pass_env" in str(info.value)
    assert "'bad name'" in str(info.value)
