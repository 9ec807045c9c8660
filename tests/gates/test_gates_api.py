"""The gates package's public API is what `__all__` says; gate ids are seed 001's."""

from __future__ import annotations

import pm_agent.gates as gates


def test_every_exported_name_exists() -> None:
    for name in gates.__all__:
        assert hasattr(gates, name), name


def test_gate_ids() -> None:
    assert [g.value for g in gates.MINIMUM_GATES] == [
        "1-plan-alignment",
        "2-tests-added",
        "3-tests-run",
        "4-lint-typecheck",
        "5-no-orphan-todos",
        "6-review-note",
    ]
    assert [g.value for g in gates.INTEGRITY_CHECKS] == [
        "scope",
        "tests-weakened",
        "checks-weakened",
        "vcs-tampering",
        "secrets",
    ]
    assert set(gates.GATES) == {*gates.MINIMUM_GATES, *gates.INTEGRITY_CHECKS}
