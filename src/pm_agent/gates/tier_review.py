"""Tier review from the actual change (seed 001, Phase 3).

`auto_escalate_tier`: a change that touches a risky area (auth, schema/migrations, billing/finops,
secrets/env, data integrity, infra/docker, security, public API: the one vocabulary in
`pm_agent.risk_words`, which the plan's tier rules read too) is CRITICAL, whatever the plan said.
Paths are matched by their name or folder and by whole words ("user_auth.py" is auth, "author.py"
is not); the diff's changed lines add schema (DDL, alembic ops), auth and secrets signals. Tests,
docs and generated files are not considered.

`sanity_check`: pm-agent's own review of a LOW task (no reviewer agent): do the changes match the
task's scope, and did schema, API or security behaviour change (then the task goes to NORMAL)?
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePosixPath

from pydantic import BaseModel, ConfigDict, Field

from pm_agent.gates.common import is_ignored_path, is_test_path, norm_path
from pm_agent.gates.integrity import in_scope
from pm_agent.plan.models import Task, Tier
from pm_agent.risk_words import CHANGED_LINES, RiskArea, changed_path_areas
from pm_agent.vcs import parse_unified_diff

_PUBLIC_DEF = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+([A-Za-z][A-Za-z0-9_]*)")
_ROUTE = re.compile(r"@(?:\w+\.)?(?:route|get|post|put|patch|delete|api_view)\b|\bapp\.(?:get|post|put|delete)\(")

TIER_ORDER: dict[Tier, int] = {Tier.LOW: 0, Tier.NORMAL: 1, Tier.CRITICAL: 2}


def path_categories(path: str) -> list[RiskArea]:
    """The risky areas a path belongs to (empty for ordinary code), named as everywhere else."""
    return changed_path_areas(path)


def _changed_lines(diff_text: str) -> list[tuple[str, str]]:
    parsed = parse_unified_diff(diff_text)
    return [(p, t) for p, lines in parsed.added.items() for _, t in lines] + [
        (p, t) for p, lines in parsed.removed.items() for _, t in lines
    ]


_DOC_SUFFIXES = (".md", ".rst", ".txt", ".adoc")


def _skipped(path: str) -> bool:
    """Tests, docs and generated files do not change behaviour."""
    pure = PurePosixPath(path)
    is_doc = pure.suffix.lower() in _DOC_SUFFIXES or (len(pure.parts) > 1 and pure.parts[0] == "docs")
    return is_doc or is_test_path(path) or is_ignored_path(path)


def auto_escalate_tier(changed_paths: Sequence[str], diff_text: str, current_tier: Tier) -> tuple[Tier, list[str]]:
    """CRITICAL when the change touches a sensitive area, with one reason per finding; else `current_tier`."""
    reasons: list[str] = []
    for path in changed_paths:
        if _skipped(path):
            continue
        reasons += [f"{category}: {path}" for category in path_categories(path)]
    seen: set[tuple[str, str]] = set()
    for path, text in _changed_lines(diff_text):
        if _skipped(path):
            continue
        for category, rule in CHANGED_LINES:
            match = rule.search(text)
            if match is not None and (category, path) not in seen:
                seen.add((category, path))
                reasons.append(f"{category}: {path} changes `{match.group(0)}`")
    if reasons:
        return Tier.CRITICAL, reasons
    return current_tier, []


class SanityResult(BaseModel):
    """pm-agent's review of a LOW task's diff."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    matches_scope: bool
    out_of_scope: list[str] = Field(default_factory=list)
    escalate_to_normal: bool = False
    reasons: list[str] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Within scope and no behaviour change that needs a reviewer."""
        return self.matches_scope and not self.escalate_to_normal


def _api_changes(diff_text: str) -> list[str]:
    """Public definitions removed or re-signed, and routes added or removed, in non-test code."""
    parsed = parse_unified_diff(diff_text)
    reasons: list[str] = []
    for path, lines in parsed.removed.items():
        if _skipped(path):
            continue
        for _, text in lines:
            match = _PUBLIC_DEF.match(text)
            if match is not None and not match.group(1).startswith("_"):
                reasons.append(f"API: {path} changes or removes public `{match.group(1)}`")
    for path, lines in [*parsed.added.items(), *parsed.removed.items()]:
        if not _skipped(path) and any(_ROUTE.search(text) for _, text in lines):
            reasons.append(f"API: {path} changes an HTTP route")
    return list(dict.fromkeys(reasons))


def sanity_check(task: Task, changed: Sequence[str], diff_text: str) -> SanityResult:
    """Does a LOW task's change match its scope; did schema, API or security behaviour change?"""
    allowed = [norm_path(".", p) for p in [*task.expected_files.all_paths(), *task.tests_to_add]]
    if task.ownership.strip() and "/" in task.ownership:
        allowed.append(task.ownership.strip().rstrip("/") + "/")
    considered = [p for p in changed if not is_ignored_path(p)]
    outside = [p for p in considered if allowed and not in_scope(p, allowed)]
    _, sensitive = auto_escalate_tier(considered, diff_text, task.tier)
    reasons = [*sensitive, *_api_changes(diff_text)]
    return SanityResult(
        matches_scope=not outside,
        out_of_scope=outside,
        escalate_to_normal=bool(reasons) and TIER_ORDER[task.tier] < TIER_ORDER[Tier.NORMAL],
        reasons=reasons,
    )


__all__ = [
    "TIER_ORDER",
    "SanityResult",
    "auto_escalate_tier",
    "path_categories",
    "sanity_check",
]
