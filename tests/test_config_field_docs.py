"""The configuration's field docstrings, read on use (`config.field_docs`) for `pm-agent init`'s comments."""

from __future__ import annotations

import pytest
from pydantic import BaseModel
from pydantic._internal._docs_extraction import extract_docstrings_from_cls

from pm_agent.config import AgentConfig, FinalReviewConfig, GitHubConfig, PmConfig, field_docs, render_config
from pm_agent.environment_config import EnvironmentConfig


@pytest.mark.parametrize("cls", [PmConfig, AgentConfig, FinalReviewConfig, GitHubConfig, EnvironmentConfig])
def test_field_docs_are_what_pydantic_reads_as_attribute_docstrings(cls: type[BaseModel]) -> None:
    docs = field_docs(cls)
    assert docs == extract_docstrings_from_cls(cls, use_inspect=True)
    assert set(docs) <= set(cls.model_fields)


def test_rendered_config_carries_each_fields_docstring_as_comments() -> None:
    lines = render_config(PmConfig()).splitlines()
    slots = "# Slots: concurrent agent sessions (a task in pm-agent's checks holds none)."
    assert lines[lines.index("max_parallel_agents: 3") - 1] == slots
    at = lines.index("max_iterations: 16")
    assert lines[at - 4 : at] == [
        "# Lifecycle transitions per task before it ends in REQUIRES_HUMAN_INTERVENTION (seed 003's limit).",
        "#",
        "# Seed 003 uses 10; pm-agent's path with gates and review takes 7 (9 with the tester's round and the gates",
        "# after it) and a clarification round 5 more.",
    ]
    assert lines[lines.index("  max_turns: 60") - 1] == "  # Turn limit per agent session."
    gate_timeout = lines.index("  gate_timeout_s: 600")
    assert lines[gate_timeout - 1] == "  # Longest any gate command may run before its process group is killed."
    # The fields EnvironmentConfig inherits (from the plan's EnvironmentContract) have no docstring.
    assert lines[lines.index("  lint_command: null") - 1] == "environment:"
