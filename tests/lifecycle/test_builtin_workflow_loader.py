"""The shipped workflows, composed by libyaml (when PyYAML has it), read the same as by the pure-Python parser."""

from __future__ import annotations

from importlib import resources

import pytest

from pm_agent.lifecycle.workflow_file import BUILTIN_WORKFLOWS, load_builtin_workflow, parse_workflow


@pytest.mark.parametrize("name", sorted(BUILTIN_WORKFLOWS))
def test_builtin_workflow_reads_as_parse_workflow_reads_its_file(name: str) -> None:
    resource = resources.files("pm_agent.lifecycle").joinpath(BUILTIN_WORKFLOWS[name])
    expected = parse_workflow(resource.read_text(encoding="utf-8"), source=str(resource))
    shipped = load_builtin_workflow(name)
    assert shipped == expected
    assert dict(shipped.lines) == dict(expected.lines)  # the lines error messages name (not in ==)
    assert shipped.source == expected.source
    assert len(shipped.lines) > 5
