"""`pm-agent resume` re-reads pm-agent.yaml: what may change, what may not, and what is recorded."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pm_agent.config import PmConfig, load_config
from pm_agent.engine.events import RecordingListener
from pm_agent.engine.reconfig import RunOverrides, config_changes, reload_config, resume_config
from pm_agent.errors import ConfigError
from pm_agent.plan.models import Plan, Task
from pm_agent.store import SqliteStore, default_store_path, open_store
from pm_agent.testing.repo import init_repo

FIRST = "retry_budget: 2\nenvironment:\n  test_command: make test\nagent:\n  max_turns: 30\n"


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[tuple[Path, SqliteStore, str]]:
    """A repository whose run was started from FIRST with `--slots 1`."""
    repo = init_repo(tmp_path / "repo")
    (repo / "pm-agent.yaml").write_text(FIRST, encoding="utf-8")
    overrides = RunOverrides(slots=1)
    config = overrides.apply(load_config(repo))
    store = open_store(default_store_path(repo))
    plan = Plan(plan_id="p", path="plan.md", tasks=[Task(id="1", title="one")])
    run = store.create_run(
        plan,
        baseline_sha="0" * 40,
        working_branch="pm/p/work",
        shared_context={},
        config=config.model_dump(mode="json"),
    )
    overrides.record(store, run.id)
    try:
        yield repo, store, run.id
    finally:
        store.close()


def test_changed_settings_take_effect_and_are_recorded_with_old_and_new(setup: tuple[Path, SqliteStore, str]) -> None:
    repo, store, run_id = setup
    (repo / "pm-agent.yaml").write_text(
        FIRST.replace("make test", "make check").replace("max_turns: 30", "max_turns: 45"), encoding="utf-8"
    )
    listener = RecordingListener()
    config = resume_config(repo, store, store.get_run(run_id), reread=True, listener=listener)
    assert config.environment.test_command == "make check"
    assert config.agent.max_turns == 45
    assert config.max_parallel_agents == 1, "the --slots given to `pm-agent run` still holds"
    changed = [e for e in store.events(run_id) if e.kind == "run.config_changed"]
    assert changed[-1].payload["changes"] == [
        {"key": "agent.max_turns", "old": 30, "new": 45},
        {"key": "environment.test_command", "old": "make test", "new": "make check"},
    ]
    assert PmConfig.model_validate(store.get_run(run_id).config) == config  # the next resume compares to this
    assert "environment.test_command 'make test' -> 'make check'" in listener.events[-1][1]


def test_an_unchanged_file_records_nothing(setup: tuple[Path, SqliteStore, str]) -> None:
    repo, store, run_id = setup
    before = len(store.events(run_id))
    config, changes = reload_config(repo, store, store.get_run(run_id))
    assert changes == []
    assert len(store.events(run_id)) == before
    assert config.max_parallel_agents == 1


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ("working_branch: pm/elsewhere\n", "working_branch None -> 'pm/elsewhere'"),
        ("review_artifacts_dir: docs/notes\n", "review_artifacts_dir 'docs/reviews' -> 'docs/notes'"),
    ],
)
def test_keys_that_change_what_was_done_are_refused_and_nothing_is_written(
    setup: tuple[Path, SqliteStore, str], line: str, fragment: str
) -> None:
    repo, store, run_id = setup
    (repo / "pm-agent.yaml").write_text(FIRST + line, encoding="utf-8")
    before = (len(store.events(run_id)), store.get_run(run_id).config)
    with pytest.raises(ConfigError, match="would change what the run already did") as info:
        resume_config(repo, store, store.get_run(run_id), reread=True, listener=RecordingListener())
    assert fragment in str(info.value)
    assert info.value.path == repo / "pm-agent.yaml"
    assert (len(store.events(run_id)), store.get_run(run_id).config) == before


def test_naming_the_default_working_branch_is_no_change_of_branch(setup: tuple[Path, SqliteStore, str]) -> None:
    repo, store, run_id = setup
    (repo / "pm-agent.yaml").write_text(FIRST + "working_branch: pm/p/work\n", encoding="utf-8")
    config, changes = reload_config(repo, store, store.get_run(run_id))
    assert config.working_branch == "pm/p/work"
    assert changes == [{"key": "working_branch", "old": None, "new": "pm/p/work"}]


def test_a_bad_file_on_resume_is_the_usual_config_error(setup: tuple[Path, SqliteStore, str]) -> None:
    repo, store, run_id = setup
    (repo / "pm-agent.yaml").write_text("agent:\n  runner: command\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"runner 'command' needs agent\.command") as info:
        resume_config(repo, store, store.get_run(run_id), reread=True, listener=RecordingListener())
    assert info.value.line == 1


def test_overrides_are_validated_like_the_file() -> None:
    with pytest.raises(ConfigError, match=r"--agent command: agent: runner 'command' needs agent\.command"):
        RunOverrides(runner="command").apply(PmConfig())
    assert RunOverrides(slots=2).apply(PmConfig()).max_parallel_agents == 2
    assert [c["key"] for c in config_changes(PmConfig(), PmConfig(retry_budget=0))] == ["retry_budget"]
