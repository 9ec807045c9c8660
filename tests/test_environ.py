"""The cached environment: a change made through os.environ is seen by the next call."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from pm_agent import environ
from pm_agent.redaction import known_secrets


def _names(env: Mapping[str, str]) -> frozenset[str]:
    return frozenset(env)


def test_current_follows_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PM_AGENT_ENV_PROBE", raising=False)
    before = environ.current()
    assert "PM_AGENT_ENV_PROBE" not in before
    assert environ.current() is before  # unchanged: the same object, nothing recomputed
    monkeypatch.setenv("PM_AGENT_ENV_PROBE", "one")
    assert environ.current()["PM_AGENT_ENV_PROBE"] == "one"
    monkeypatch.setenv("PM_AGENT_ENV_PROBE", "two")
    assert environ.current()["PM_AGENT_ENV_PROBE"] == "two"
    monkeypatch.delenv("PM_AGENT_ENV_PROBE")
    assert "PM_AGENT_ENV_PROBE" not in environ.current()


def test_derived_is_recomputed_when_the_environment_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PM_AGENT_ENV_PROBE", raising=False)
    first = environ.derived(_names)
    assert environ.derived(_names) is first
    monkeypatch.setenv("PM_AGENT_ENV_PROBE", "x")
    assert "PM_AGENT_ENV_PROBE" in environ.derived(_names)


def test_redaction_sees_a_credential_set_after_earlier_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PROBE_API_TOKEN", raising=False)
    assert "s3cr3t-value-123" not in known_secrets()
    monkeypatch.setenv("PROBE_API_TOKEN", "s3cr3t-value-123")
    assert known_secrets()["s3cr3t-value-123"] == "$PROBE_API_TOKEN"
    monkeypatch.delenv("PROBE_API_TOKEN")
    assert "s3cr3t-value-123" not in known_secrets()
