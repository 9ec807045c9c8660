"""Findings: the diagnostics and failing tests of real tools, parsed into comparable sets, and the ratchet.

A repository whose lint already fails must not make every task fail its gates: pm-agent runs each
environment command on the baseline commit too, and a gate fails only on what the task made worse.

    parse_findings(command, output, exit_code, root=...) -> FindingSet    which parser, which findings
    ratchet(command, baseline_output, baseline_exit, current_output, current_exit, root=...) -> Ratchet
    render_findings(findings, limit=30) -> list[str]                     lines for the evidence

Understood: pytest, unittest (and Django), mypy, pyright, ruff, flake8, pylint, eslint, tsc, go vet /
go build, go test, cargo / clippy, cargo test and nextest, gradle and maven (failing tests, javac and kotlinc
errors, checkstyle), rspec, rubocop (and standardrb), phpunit, phpstan (raw), biome, and the format checks
of ruff format, black, prettier, oxfmt, gofmt and cargo fmt (a finding per file). A finding's `key` leaves out line
numbers, so code that only moved keeps its findings' identity.
"""

from __future__ import annotations

from pm_agent.gates.findings.compare import ratchet, render_finding, render_findings
from pm_agent.gates.findings.models import (
    MAX_FINDINGS,
    Finding,
    FindingSet,
    Ratchet,
    Rule,
    normalise_message,
)
from pm_agent.gates.findings.select import PARSERS, parse_findings, parsers_for_command

__all__ = [
    "MAX_FINDINGS",
    "PARSERS",
    "Finding",
    "FindingSet",
    "Ratchet",
    "Rule",
    "normalise_message",
    "parse_findings",
    "parsers_for_command",
    "ratchet",
    "render_finding",
    "render_findings",
]
