"""The demo repository and its plan: what pm-agent will parse, schedule and run."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pm_agent.config import load_config
from pm_agent.demo import DEMO_ANSWERS, DEMO_TASKS, build_demo_repo, demo_task
from pm_agent.demo.project import render_plan
from pm_agent.engine.scheduler import Candidate, Scheduler, critical_paths
from pm_agent.errors import InputError
from pm_agent.plan import Plan, Tier, classify_tier, load_plan, parse_plan_text

from .conftest import Demo, git, run


def test_the_repository_is_one_commit_on_main_with_the_docs(demo: Demo) -> None:
    repo = demo.repo
    assert git(repo, "branch", "--show-current").strip() == "main"
    assert len(git(repo, "log", "--format=%H").split()) == 1
    assert git(repo, "status", "--porcelain") == ""
    tracked = set(git(repo, "ls-files").split())
    assert {
        "pyproject.toml",
        "README.md",
        ".gitignore",
        "pm-agent.yaml",
        "src/textstats/__init__.py",
        "tests/test_version.py",
        demo.paths.plan_relpath,
        demo.paths.design.relative_to(repo).as_posix(),
    } <= tracked
    assert demo.paths.plan.name == "2026-01-05-textstats.md"
    assert demo.paths.design.name == "2026-01-05-textstats-design.md"
    assert ".pm-agent/" in (repo / ".gitignore").read_text().splitlines()


def test_the_baseline_is_green_with_the_configured_commands(demo: Demo) -> None:
    config = load_config(demo.repo)
    env = config.environment
    assert env.test_command == f"{sys.executable} -m pytest -q"
    assert env.lint_command == f"{sys.executable} -m ruff check src tests"
    assert env.typecheck_command == f"{sys.executable} -m mypy src"
    assert env.format_command == f"{sys.executable} -m ruff format --check src tests"
    for command in (env.test_command, env.lint_command, env.typecheck_command, env.format_command):
        done = run(demo.repo, command)
        assert done.returncode == 0, f"{command}\n{done.stdout}{done.stderr}"
    assert "1 passed" in run(demo.repo, env.test_command).stdout


def test_the_configuration_has_the_demo_limits(demo: Demo) -> None:
    config = load_config(demo.repo)
    assert config.max_parallel_agents == 3
    assert config.parallel_tiers == [Tier.LOW]
    assert config.agent.stuck_after_s == 90
    assert config.agent.max_turns == 20
    assert config.agent.isolated_home is True  # offline: agents never see the user's login


def test_typecheck_can_be_left_out_and_python_chosen(tmp_path: Path) -> None:
    paths = build_demo_repo(tmp_path / "r", python="/opt/py 3/bin/python", typecheck=False, date=None)
    env = load_config(paths.repo).environment
    assert env.typecheck_command is None
    assert env.test_command == "'/opt/py 3/bin/python' -m pytest -q"
    assert paths.plan.name.endswith("-textstats.md")
    assert paths.plan.name[:4].isdigit()


def test_the_destination_must_be_new_or_empty(tmp_path: Path) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "file.txt").write_text("x")
    with pytest.raises(InputError, match="new or empty"):
        build_demo_repo(tmp_path / "busy")
    (tmp_path / "empty").mkdir()
    assert build_demo_repo(tmp_path / "empty").repo == tmp_path / "empty"


def test_the_plan_parses_into_the_intended_tasks(demo: Demo) -> None:
    plan = demo.plan
    assert [t.id for t in plan.tasks] == [str(n) for n in range(1, 10)]
    tiers = {t.id: t.tier for t in plan.tasks}
    assert tiers == {
        "1": Tier.CRITICAL,
        "2": Tier.NORMAL,
        "3": Tier.NORMAL,
        "4": Tier.NORMAL,
        "5": Tier.CRITICAL,
        "6": Tier.NORMAL,
        "7": Tier.LOW,
        "8": Tier.LOW,
        "9": Tier.LOW,
    }
    deps = {t.id: t.dependency_ids() for t in plan.tasks}
    assert deps == {"1": [], "2": [], "3": ["2"], "4": ["3"], "5": ["1", "4"], "6": ["5"], "7": [], "8": [], "9": []}
    assert not any(d.inferred for t in plan.tasks for d in t.depends_on)
    assert plan.queue == [str(n) for n in range(1, 10)]
    assert plan.plan_id == "textstats"


def test_the_tiers_hold_without_the_explicit_tier_lines() -> None:
    """Task 1 would be CRITICAL from its words alone; the LOW tasks from their ownership areas."""
    text = "\n".join(line for line in render_plan().splitlines() if not line.startswith("**Tier:**"))
    _, tasks = parse_plan_text(text)
    classified = {t.id: classify_tier(t).tier for t in tasks}
    assert classified["1"] is Tier.CRITICAL
    assert {classified[i] for i in ("7", "8", "9")} == {Tier.LOW}
    assert {classified[i] for i in ("2", "3", "4", "6")} == {Tier.NORMAL}


def test_each_task_matches_its_data(demo: Demo) -> None:
    for data in DEMO_TASKS:
        task = demo.plan.task(data.task_id)
        assert task.title == data.title
        assert task.ownership == data.ownership
        assert task.expected_files.create == list(data.create)
        assert task.expected_files.modify == list(data.modify)
        assert task.tests_to_add == list(data.tests)
        assert len(task.acceptance_criteria) == len(data.criteria)
        assert demo_task(task.ref) is data


def test_the_low_tasks_are_independent_and_in_different_areas(demo: Demo) -> None:
    lows = [t for t in demo.plan.tasks if t.tier is Tier.LOW]
    assert len(lows) == 3
    assert all(not t.depends_on for t in lows)
    assert len({t.ownership for t in lows}) == 3
    files = [set(t.expected_files.all_paths()) for t in lows]
    assert all(a.isdisjoint(b) for i, a in enumerate(files) for b in files[i + 1 :])


def test_one_task_asks_the_user_and_one_slips_on_its_first_attempt() -> None:
    asking = [t.ref for t in DEMO_TASKS if t.question is not None]
    slipping = [t.ref for t in DEMO_TASKS if t.first_attempt]
    assert asking == ["task-6"]
    assert set(DEMO_ANSWERS) == {"task-6"}
    assert slipping == ["task-3"]


def _schedule(plan: Plan, interval: int) -> list[list[str]]:
    """Play the real scheduler over the plan as a polling loop does: start what it picks, ask again until
    it starts nothing more, then let the started batch finish."""
    scheduler = Scheduler(max_parallel=3, anti_starvation_interval=interval)
    order = {task_id: i for i, task_id in enumerate(plan.queue)}
    paths = critical_paths({t.id: t for t in plan.tasks})  # the loop's ranking
    candidates = {
        t.id: Candidate(
            task_id=t.id,
            tier=t.tier,
            plan_order=i,
            queue_order=order[t.id],
            ownership=t.ownership,
            depends_on=tuple(t.dependency_ids()),
            remaining=paths[t.id],
        )
        for i, t in enumerate(plan.tasks)
    }
    done: set[str] = set()
    batches: list[list[str]] = []
    while len(done) < len(candidates):
        running: list[Candidate] = []
        while True:
            started = {c.task_id for c in running}
            ready = [c for c in candidates.values() if c.task_id not in done | started and set(c.depends_on) <= done]
            picked = scheduler.pick(ready, running)
            if not picked:
                break
            running += picked
        assert running, "the scheduler started nothing"
        batches.append(sorted(c.task_id for c in running))
        for candidate in running:
            done.add(candidate.task_id)
            scheduler.record_completion(candidate.tier)
    return batches


def test_the_scheduler_runs_critical_tasks_alone_and_the_low_tasks_in_parallel(demo: Demo) -> None:
    config = load_config(demo.repo)
    batches = _schedule(demo.plan, config.anti_starvation_interval)
    # Critical path first: the chain 2 → 3 → 4 → 5 → 6 is longer than task 1, which 5 also needs.
    assert [task for batch in batches for task in batch if task in ("1", "2", "3", "4", "5", "6")] == [
        "2", "3", "1", "4", "5", "6"
    ]  # fmt: skip
    tiers = {t.id: t.tier for t in demo.plan.tasks}
    for batch in batches:
        if any(tiers[i] is not Tier.LOW for i in batch):
            assert len(batch) == 1, batch  # only LOW (parallel_tiers) tasks share the slots
    low_batches = [batch for batch in batches if all(tiers[i] is Tier.LOW for i in batch)]
    assert any(len(batch) >= 2 for batch in low_batches), batches
    # Anti-starvation: after three CRITICAL/NORMAL completions the LOW tasks go before the chain goes on.
    assert batches[3] == ["7", "8", "9"], batches


def test_the_plan_loads_from_a_copy_without_the_repository(tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.md"
    plan_file.write_text(render_plan(), encoding="utf-8")
    plan = load_plan(plan_file)
    assert len(plan.tasks) == len(DEMO_TASKS)
