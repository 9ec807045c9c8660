"""Configuration across a run's life: command-line overrides, and `pm-agent resume` re-reading pm-agent.yaml.

A resumed run takes the current pm-agent.yaml (environment commands, agent settings, budgets and
timeouts), with the overrides `pm-agent run` was given (--slots, --agent) applied again, and
records what changed as a `run.config_changed` event with the old and new values. Keys that would
change what was already done are refused: the working branch holds the finished tasks, and the
review artifacts of finished tasks live under `review_artifacts_dir`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pm_agent.config import CONFIG_FILE, PmConfig, load_config
from pm_agent.engine.events import Listener
from pm_agent.errors import ConfigError
from pm_agent.store import RunRecord, Store
from pm_agent.vcs import working_branch

__all__ = ["FROZEN_KEYS", "RunOverrides", "config_changes", "reload_config", "resume_config"]

FROZEN_KEYS = ("working_branch", "review_artifacts_dir")
OVERRIDES_EVENT = "run.overrides"


@dataclass(frozen=True)
class RunOverrides:
    """Settings given on the command line of `pm-agent run`, above pm-agent.yaml."""

    slots: int | None = None
    runner: str | None = None

    def apply(self, config: PmConfig) -> PmConfig:
        """`config` with the overrides, validated again (e.g. --agent command needs agent.command)."""
        data = config.model_dump(mode="json")
        if self.slots is not None:
            data["max_parallel_agents"] = self.slots
        if self.runner is not None:
            data["agent"] = {**data["agent"], "runner": self.runner}
        try:
            return PmConfig.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            key = ".".join(str(p) for p in first["loc"])
            raise ConfigError(f"{self.describe()}: {key}: {first['msg']}") from exc

    def describe(self) -> str:
        """The overrides as command-line options."""
        parts = []
        if self.slots is not None:
            parts.append(f"--slots {self.slots}")
        if self.runner is not None:
            parts.append(f"--agent {self.runner}")
        return " ".join(parts) or "no overrides"

    def payload(self) -> dict[str, Any]:
        """The overrides as an event payload."""
        return {"slots": self.slots, "runner": self.runner}

    def record(self, store: Store, run_id: str) -> None:
        """Remember the overrides with the run, so `pm-agent resume` applies them again."""
        if self.slots is not None or self.runner is not None:
            store.append_event(run_id, OVERRIDES_EVENT, self.payload())

    @classmethod
    def of_run(cls, store: Store, run_id: str) -> RunOverrides:
        """The overrides recorded with the run by `pm-agent run`."""
        for event in store.events(run_id):
            if event.kind == OVERRIDES_EVENT:
                slots, runner = event.payload.get("slots"), event.payload.get("runner")
                return cls(slots if isinstance(slots, int) else None, runner if isinstance(runner, str) else None)
        return cls()


def _flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(data, dict):
        out: dict[str, Any] = {}
        for key, value in data.items():
            out.update(_flatten(value, f"{prefix}{key}."))
        return out
    return {prefix.rstrip("."): data}


def config_changes(old: PmConfig, new: PmConfig) -> list[dict[str, Any]]:
    """[{key, old, new}] for every setting that differs, keys dotted (`agent.max_turns`)."""
    before, after = _flatten(old.model_dump(mode="json")), _flatten(new.model_dump(mode="json"))
    return [
        {"key": key, "old": before.get(key), "new": after.get(key)}
        for key in sorted(before.keys() | after.keys())
        if before.get(key) != after.get(key)
    ]


def _same_branch(change: dict[str, Any], run: RunRecord) -> bool:
    # Naming the default branch explicitly (or dropping the key) keeps the branch the run works on.
    effective = change["new"] or working_branch(run.plan_id)
    return change["key"] == "working_branch" and effective == run.working_branch


def reload_config(repo: Path, store: Store, run: RunRecord) -> tuple[PmConfig, list[dict[str, Any]]]:
    """The run's configuration from today's pm-agent.yaml, and the changes; ConfigError for a frozen key.

    Writes nothing when refusing. On changes, stores the new configuration with a `run.config_changed`
    event holding the old and new values.
    """
    old = PmConfig.model_validate(run.config)
    new = RunOverrides.of_run(store, run.id).apply(load_config(repo))
    changes = config_changes(old, new)
    frozen = [c for c in changes if c["key"] in FROZEN_KEYS and not _same_branch(c, run)]
    if frozen:
        what = "; ".join(f"{c['key']} {c['old']!r} -> {c['new']!r}" for c in frozen)
        path = repo / CONFIG_FILE
        raise ConfigError(
            f"{what} since run {run.id} started: that would change what the run already did. "
            "Put it back to resume this run, or start a new run with `pm-agent run`",
            path=path if path.exists() else None,
        )
    if changes:
        store.update_run(run.id, event="run.config_reloaded", config=new.model_dump(mode="json"))
        store.append_event(run.id, "run.config_changed", {"changes": changes})
    return new, changes


def resume_config(repo: Path, store: Store, run: RunRecord, *, reread: bool, listener: Listener) -> PmConfig:
    """The configuration a resumed run drives with: the stored one, or today's pm-agent.yaml when `reread`."""
    if not reread:
        return PmConfig.model_validate(run.config)
    config, changes = reload_config(repo, store, run)
    if changes:
        listener.emit(
            "run.config_changed",
            f"{CONFIG_FILE} changed since the run last ran: "
            + "; ".join(f"{c['key']} {c['old']!r} -> {c['new']!r}" for c in changes),
        )
    return config
