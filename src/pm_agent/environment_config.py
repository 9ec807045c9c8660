"""`EnvironmentConfig`: the `environment:` section of `pm-agent.yaml`, the commands pm-agent runs as gates.

Its own module so that `config` (which holds it in `PmConfig`) and `preflight.detect` (which proposes it
for `pm-agent init`) both import it without importing each other.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, ConfigDict, Field

from pm_agent.plan.models import EnvironmentContract

_ENV_NAME = re.compile(r"^[A-Za-z_*?][A-Za-z0-9_*?]*$")


def _env_name(name: str) -> str:
    if not _ENV_NAME.match(name):
        raise ValueError(f"not an environment variable name or glob: {name!r}")
    return name


class EnvironmentConfig(EnvironmentContract):
    """The commands pm-agent runs itself as gates; all optional."""

    # Its field docstrings are read on use, by `config.field_docs` (see `config._Config`).
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    setup_command: str | None = None
    """Run first in every new worktree (each task's, the preflight's, the final gate's and reviewer's), before
    its agent or any gate: what a fresh checkout needs that lives outside git (`yarn install --immutable` for
    Yarn's Plug'n'Play, `bundle install`, `composer install`). It must succeed and leave only files git ignores."""
    migration_dry_run_command: str | None = None
    """Forward migration dry-run, run by the final release gate."""
    migration_rollback_command: str | None = None
    """Rollback validation, run by the final release gate."""
    gate_timeout_s: float = Field(default=600, gt=0)
    """Longest any gate command may run before its process group is killed."""
    baseline: Literal["ratchet", "strict"] = "ratchet"
    """ratchet: gates fail only on findings a task adds to the baseline's; strict: every command must pass."""
    pass_env: list[Annotated[str, AfterValidator(_env_name)]] = Field(default_factory=list)
    """Variables gate commands see although they look secret (names or globs, e.g. [TEST_DB_PASSWORD]).

    Gate commands run without API keys, tokens and pm-agent's own variables; list here what your tests need."""


__all__ = ["EnvironmentConfig"]
