"""The release manifest (seed 001 section 7), exactly its fields, and the handoff summary."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ManifestTask(_Strict):
    """One completed task in the manifest."""

    task_id: str
    commit_sha: str
    review_artifact: str
    tier: Literal["critical", "normal", "low"]
    breaking_change: bool


class ManifestRisk(_Strict):
    """A risk that is no longer open."""

    id: str
    status: Literal["mitigated", "accepted"]
    description: str


class EnvironmentCheck(_Strict):
    """One environment command at the baseline and at release (pm-agent's addition to seed 001's fields)."""

    name: str
    command: str
    baseline: str  # "exit 1, 12 finding(s) (ruff)", "exit 0", "not run"
    final: str
    rule: Literal["clean", "findings", "exit-status", "strict", "environment"]
    new_findings: int = 0
    preexisting_findings: int = 0


class ReleaseManifest(_Strict):
    """docs/releases/<plan-id>-release.yaml."""

    plan_id: str
    plan_doc: str
    design_doc: str
    completed_at: datetime
    tasks: list[ManifestTask]
    tests_run: int
    tests_passed: int
    lint_clean: bool
    typecheck_clean: bool
    build_clean: bool
    risks: list[ManifestRisk]
    breaking_changes: list[str]
    migration_steps: list[str]
    rollback_plan: str
    recommended_next: list[str]
    # pm-agent's addition after seed 001's fields: each command at the baseline and at release, so findings
    # that were there before the run are listed as such, not passed off as clean.
    environment: list[EnvironmentCheck] = []
    # The final review of the whole branch (seed 004's Lawbringer), committed with the manifest; "" when off.
    final_review: str = ""


def manifest_path(release_dir: str, plan_id: str) -> str:
    """Where the manifest lives in the repository."""
    return f"{release_dir.rstrip('/')}/{plan_id}-release.yaml"


def render_manifest(manifest: ReleaseManifest) -> str:
    """The manifest as YAML, fields in seed 001's order."""
    data = manifest.model_dump(mode="json")
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def parse_manifest(text: str) -> ReleaseManifest:
    """Read a manifest back, validating every field."""
    return ReleaseManifest.model_validate(yaml.safe_load(text))


def render_handoff(
    manifest: ReleaseManifest,
    *,
    plan_name: str,
    total_tasks: int,
    open_risks: Sequence[str],
    manifest_file: str,
    reviews_dir: str,
) -> str:
    """Seed 001's RELEASE SUMMARY."""
    return "\n".join(
        [
            f"RELEASE SUMMARY — {plan_name}",
            "",
            f"Tasks: {len(manifest.tasks)}/{total_tasks} completed",
            f"Commits: {len({t.commit_sha for t in manifest.tasks})} (see release manifest for full list)",
            "Breaking changes: " + (", ".join(manifest.breaking_changes) or "none"),
            "Open risks: " + (", ".join(open_risks) or "none — all mitigated/accepted"),
            "Migration: " + ("; ".join(manifest.migration_steps) or "none required"),
            "Rollback: see release manifest",
            *[
                f"Pre-existing: {c.name}: baseline {c.baseline}; final {c.final} ({c.preexisting_findings} "
                f"pre-existing finding(s) left, {c.new_findings} new)"
                for c in manifest.environment
                if c.preexisting_findings or c.rule in ("findings", "exit-status")
            ],
            "Recommended next: " + ("; ".join(manifest.recommended_next) or "none"),
            "",
            "Artifacts:",
            f"  - Release manifest: {manifest_file}",
            f"  - Review notes: {reviews_dir.rstrip('/')}/<task-id>-review.md (per task)",
            *([f"  - Final review: {manifest.final_review}"] if manifest.final_review else []),
        ]
    )
